// The collectives as ops (SPEC §14): all_reduce, broadcast and all_gather of
// a tensor over the ranks of the run (backend/comm/communicator.h), and the
// two halves of a bucketed gradient all-reduce: all_reduce_start copies its
// inputs into one flat bucket (those not there already) and starts reducing
// it; all_reduce_wait waits and gives the pieces back in their shapes, as
// views of the bucket. Between the two, a graph runs other kernels (the
// backward of earlier layers) while the bucket travels.
// Each kernel works on host memory: a GPU tensor is staged through it,
// unless the CUDA backend's NCCL kernels replaced these ones
// (backend/cuda/nccl_collectives.cpp).
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

#include "backend/comm/buckets.h"
#include "backend/comm/communicator.h"
#include "backend/half.h"
#include "backend/ops.h"
#include "backend/ops/backward.h"
#include "backend/ops/register.h"
#include "backend/profiler.h"
#include "backend/run_context.h"
#include "backend/source_loc.h"

namespace nn::backend {
namespace {

using comm::ReduceOp;

ReduceOp reduce_op_of(const Attrs& attrs) {
  ReduceOp op = ReduceOp::sum;
  comm::parse_reduce_op(attrs.get_or<std::string>("op", "sum"), op);
  return op;
}

// What each reduction takes: mean needs floats, sum integers or floats; max
// and min anything.
void check_reducible(const char* name, const TensorType& t, ReduceOp op) {
  if (op == ReduceOp::mean && !is_floating(t.dtype))
    throw Error(std::string(name) + ": op=\"mean\" needs a floating tensor, got " + t.str() +
                " (use op=\"sum\" and divide)");
  if (op == ReduceOp::sum && t.dtype == DType::boolean)
    throw Error(std::string(name) + ": op=\"sum\" cannot add bools (" + t.str() +
                "); use op=\"max\" for any, op=\"min\" for all, or astype(x, i64) to count");
}

// A tensor's elements in host memory, f16 and bf16 widened to f32 (MPI has
// no type for them); put() writes them back.
struct HostCopy {
  std::vector<char> bytes;
  DType dtype;
  int64_t count;

  explicit HostCopy(const Tensor& x) : dtype(is_half_float(x.dtype()) ? DType::f32 : x.dtype()), count(x.numel()) {
    bytes.resize(size_t(count) * dtype_size(dtype));
    std::vector<char> raw(x.nbytes());
    x.device()->copy_to_host(raw.data(), x.raw_data(), x.nbytes());
    if (is_half_float(x.dtype()))
      for (int64_t i = 0; i < count; ++i) reinterpret_cast<float*>(bytes.data())[i] = load_half_float(x.dtype(), raw.data(), i);
    else
      bytes = std::move(raw);
  }
  void put(Tensor& out) const {
    if (!is_half_float(out.dtype())) {
      out.device()->copy_from_host(out.raw_data(), bytes.data(), bytes.size());
      return;
    }
    std::vector<char> raw(out.nbytes());
    for (int64_t i = 0; i < count; ++i)
      store_half_float(out.dtype(), raw.data(), i, reinterpret_cast<const float*>(bytes.data())[i]);
    out.device()->copy_from_host(out.raw_data(), raw.data(), raw.size());
  }
};

// On the CPU a kernel works in the output's memory; elsewhere through a copy.
bool in_place_on_host(const Tensor& x) {
  return x.device()->type() == DeviceType::cpu && !is_half_float(x.dtype());
}

// ---- all_reduce ----

OutTypes all_reduce_type(std::span<const TensorType> in, const Attrs& attrs) {
  check_reducible("all_reduce", in[0], reduce_op_of(attrs));
  return {in[0]};
}

void all_reduce_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const Tensor& x = in[0];
  comm::Communicator& c = comm::communicator();
  if (in_place_on_host(x)) {
    if (out[0].raw_data() != x.raw_data()) std::memcpy(out[0].raw_data(), x.raw_data(), x.nbytes());
    c.all_reduce(out[0].raw_data(), x.numel(), x.dtype(), reduce_op_of(attrs));
    return;
  }
  HostCopy h(x);
  c.all_reduce(h.bytes.data(), h.count, h.dtype, reduce_op_of(attrs));
  h.put(out[0]);
}

// y = reduce over ranks of x. The loss is the sum of every rank's loss, so
// the gradient of x on one rank sums every rank's gradient of y: sum gives
// all_reduce(g), mean all_reduce(g, mean); max and min send it to the
// elements that were the extreme.
std::vector<Tensor> all_reduce_backward(const BackwardArgs& a) {
  if (!bw::wants(a.inputs[0])) return {Tensor()};
  const ReduceOp op = reduce_op_of(a.attrs);
  if (op == ReduceOp::sum || op == ReduceOp::mean) return {all_reduce(a.grads[0], op)};
  return {mul(all_reduce(a.grads[0], ReduceOp::sum), astype(eq(a.inputs[0], a.outputs[0]), a.grads[0].dtype()))};
}

// ---- broadcast ----

OutTypes broadcast_type(std::span<const TensorType> in, const Attrs& attrs) {
  const int64_t root = attrs.get_or<int64_t>("root", 0), size = comm::communicator().world().size;
  if (root < 0 || root >= size)
    throw Error("broadcast: root " + std::to_string(root) + " is not a rank of this run (" +
                (size == 1 ? std::string("its one rank is 0") : "ranks 0 to " + std::to_string(size - 1)) + ")");
  return {in[0]};
}

void broadcast_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const Tensor& x = in[0];
  comm::Communicator& c = comm::communicator();
  const int root = int(attrs.get_or<int64_t>("root", 0));
  if (x.device()->type() == DeviceType::cpu) {
    if (out[0].raw_data() != x.raw_data()) std::memcpy(out[0].raw_data(), x.raw_data(), x.nbytes());
    c.broadcast(out[0].raw_data(), x.nbytes(), root);
    return;
  }
  std::vector<char> host(x.nbytes());
  x.device()->copy_to_host(host.data(), x.raw_data(), host.size());
  c.broadcast(host.data(), host.size(), root);
  out[0].device()->copy_from_host(out[0].raw_data(), host.data(), host.size());
}

// y = x of rank root on every rank: root's x gets the sum of every rank's
// gradient of y, the others' none (zeros).
std::vector<Tensor> broadcast_backward(const BackwardArgs& a) {
  if (!bw::wants(a.inputs[0])) return {Tensor()};
  Tensor sum = all_reduce(a.grads[0], ReduceOp::sum);
  if (comm::communicator().world().rank == a.attrs.get_or<int64_t>("root", 0)) return {sum};
  return {to_device(zeros(sum.shape(), sum.dtype()), sum.device())};
}

// ---- all_gather ----

OutTypes all_gather_type(std::span<const TensorType> in, const Attrs&) {
  TensorType t = in[0];
  t.shape = Shape{comm::communicator().world().size};
  for (int64_t d : in[0].shape.dims()) t.shape.push_back(d);
  return {t};
}

void all_gather_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  const Tensor& x = in[0];
  comm::Communicator& c = comm::communicator();
  if (x.device()->type() == DeviceType::cpu) {
    c.all_gather(x.raw_data(), out[0].raw_data(), x.nbytes());
    return;
  }
  std::vector<char> send(x.nbytes()), recv(out[0].nbytes());
  x.device()->copy_to_host(send.data(), x.raw_data(), send.size());
  c.all_gather(send.data(), recv.data(), send.size());
  out[0].device()->copy_from_host(out[0].raw_data(), recv.data(), recv.size());
}

// y[r] = x on rank r: x's gradient is row `rank` of the sum of every rank's g.
std::vector<Tensor> all_gather_backward(const BackwardArgs& a) {
  if (!bw::wants(a.inputs[0])) return {Tensor()};
  IndexItem it;
  it.kind = IndexItem::index;
  it.i = comm::communicator().world().rank;
  return {index(all_reduce(a.grads[0], ReduceOp::sum), {it})};
}

// ---- all_reduce_start / all_reduce_wait ----
// The wait's outputs are views of the bucket (OpDef::view): the optimizer
// reads the averaged gradients where the all-reduce left them.

// Each bucket on its way, by its memory: its request and when it started.
struct OnItsWay {
  comm::Request request;
  int64_t started_ns;
};
std::mutex g_buckets_mu;
std::unordered_map<const void*, OnItsWay> g_buckets;

OutTypes start_type(std::span<const TensorType> in, const Attrs& attrs) {
  if (in.empty()) throw Error("all_reduce_start: no tensors");
  int64_t n = 0;
  for (const TensorType& t : in) {
    if (t.dtype != in[0].dtype || t.device != in[0].device)
      throw Error("all_reduce_start: a bucket holds one dtype on one device, got " + in[0].str() + " and " + t.str());
    check_reducible("all_reduce", t, reduce_op_of(attrs));
    n += t.shape.numel();
  }
  TensorType b = in[0];
  b.shape = Shape({n});
  b.weak = false;
  return {b};
}

void start_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  char* dst = static_cast<char*>(out[0].raw_data());
  for (const Tensor& t : in) {
    // A graph's memory plan writes most gradients where they go (ir/memory_plan.h).
    if (t.raw_data() != dst) out[0].device()->copy(dst, t.raw_data(), t.nbytes());
    dst += t.nbytes();
  }
  Tensor& b = out[0];
  if (b.device()->type() != DeviceType::cpu || is_half_float(b.dtype())) {
    // Staged through the host: reduced now (no overlap off the CPU yet).
    HostCopy h(b);
    comm::communicator().all_reduce(h.bytes.data(), h.count, h.dtype, reduce_op_of(attrs));
    h.put(b);
    return;
  }
  const int64_t t0 = Profiler::active() ? Profiler::now_ns() : 0;
  const comm::Request r = comm::communicator().start_all_reduce(b.raw_data(), b.numel(), b.dtype(), reduce_op_of(attrs));
  std::lock_guard lock(g_buckets_mu);
  g_buckets[b.raw_data()] = {r, t0};
}

OutTypes wait_type(std::span<const TensorType> in, const Attrs& attrs) {
  OutTypes out;
  int64_t n = 0;
  for (const Shape& s : comm::wait_pieces(attrs)) {
    TensorType t = in[0];
    t.shape = s;
    n += s.numel();
    out.push_back(t);
  }
  if (n != in[0].shape.numel())
    throw Error("all_reduce_wait: the pieces hold " + std::to_string(n) + " elements, the bucket " + in[0].str());
  return out;
}

void wait_kernel(std::span<const Tensor> in, std::span<Tensor>, const Attrs&) {
  const Tensor& b = in[0];
  OnItsWay way{0, 0};
  {
    std::lock_guard lock(g_buckets_mu);
    if (auto it = g_buckets.find(b.raw_data()); it != g_buckets.end()) {
      way = it->second;
      g_buckets.erase(it);
    }
  }
  if (way.request) {
    const int64_t called = Profiler::active() ? Profiler::now_ns() : 0;
    const int64_t done = comm::communicator().wait(way.request);
    // The bucket's time on its way, and the part of it this rank waited.
    if (Profiler* prof = Profiler::active(); prof && way.started_ns) {
      prof->record("all_reduce " + std::to_string(b.nbytes() >> 10) + " KB", kCollective, way.started_ns, done);
      prof->record("blocked", kCollective, called, std::max(called, done));
    }
  }
}

// While a graph is traced: its collective calls, in order.
thread_local std::vector<std::string>* t_recording = nullptr;

// Every rank must make the same collective call with tensors of the same
// types (SPEC §14). Every point where a rank may meet a collective (an eager
// call, a graph's run, the end of the script) takes part in one exchange:
// the ranks all-gather a hash of what they are about to do, so whatever two
// ranks do they meet here and never hang. On a
// difference the lowest rank that differs from rank 0 reports both, with
// where each made its call, and the others wait for its diagnostic to end
// the run (a collective of mismatched sizes would write past its buffers).
// `where` is shown, not compared: the same call may be on different lines.
void check_same(const std::string& mine, const SourceLoc& where) {
  comm::Communicator& c = comm::communicator();
  const comm::World& w = c.world();
  if (w.size == 1) return;
  const uint64_t hash = std::hash<std::string>{}(mine);
  std::vector<uint64_t> hashes(size_t(w.size));
  c.all_gather(&hash, hashes.data(), sizeof hash);
  int differs = -1;
  for (int r = 1; r < w.size && differs < 0; ++r)
    if (hashes[size_t(r)] != hashes[0]) differs = r;
  if (differs < 0) return;
  std::string shown = mine;
  if (const LocText* loc = current_loc_text(); loc && where.valid()) shown += " at " + (*loc)(where);
  constexpr size_t kText = 320;
  std::vector<char> texts(kText * size_t(w.size)), text(kText, '\0');
  // Cut in the middle, so that a long call keeps its location.
  if (shown.size() >= kText) shown = shown.substr(0, kText / 2 - 3) + "..." + shown.substr(shown.size() - kText / 2 + 1);
  std::memcpy(text.data(), shown.data(), std::min(shown.size(), kText - 1));
  c.all_gather(text.data(), texts.data(), kText);
  if (w.rank != differs) {
    c.barrier();  // never passed: rank `differs` ends the run
    throw Error("the ranks' collective calls differ");
  }
  throw Error("every rank must make the same collective call with the same types, but rank 0 made " +
              std::string(texts.data()) + " and rank " + std::to_string(differs) + " made " + shown);
}

void check_same_call(const std::string& what, std::span<const Tensor> xs) {
  if (comm::communicator().world().size == 1) return;
  std::string mine = what + (xs.empty() ? "" : " of ");
  // Whether a tensor is on a GPU is compared too: the ranks must take the
  // same path (a GPU's collectives may go through NCCL, not MPI).
  for (size_t i = 0; i < xs.size(); ++i)
    mine += (i ? ", " : "") + xs[i].type().str() + (xs[i].device()->type() == DeviceType::cpu ? "" : " on a GPU");
  // A trace makes no MPI call: its calls are checked as one, before each
  // run of its graph, so that every exchange is followed by just the
  // messages it described (a rank tracing then running meets another's
  // eager call at the run's check, not at the trace's).
  if (t_recording) {
    t_recording->push_back(mine);
    return;
  }
  check_same(mine, script_loc());
}

std::string with_op(const char* what, ReduceOp op) { return std::string(what) + "(op=\"" + comm::reduce_op_name(op) + "\")"; }

}  // namespace

Tensor all_reduce(const Tensor& x, comm::ReduceOp op) {
  check_same_call(with_op("all_reduce", op), {&x, 1});
  return call(backend::op(OpId::all_reduce), {x},
              op == ReduceOp::sum ? Attrs{} : Attrs{{"op", std::string(comm::reduce_op_name(op))}});
}

Tensor broadcast(const Tensor& x, int64_t root) {
  check_same_call("broadcast(root=" + std::to_string(root) + ")", {&x, 1});
  return call(backend::op(OpId::broadcast), {x}, root == 0 ? Attrs{} : Attrs{{"root", root}});
}

Tensor all_gather(const Tensor& x) {
  check_same_call("all_gather", {&x, 1});
  return call(backend::op(OpId::all_gather), {x});
}

void barrier() {
  check_same_call("barrier()", {});
  comm::communicator().barrier();
}

// The end of a rank's script is a call like the collectives: a rank still
// making one meets it there and the check names both, where MPI would have
// let that rank wait for ever.
void check_end_of_run() { check_same("the end of its script", {}); }

void check_collective_call(const std::string& what) { check_same_call(what, {}); }

CollectiveRecording::CollectiveRecording() : outer_(t_recording) { t_recording = &calls_; }
CollectiveRecording::~CollectiveRecording() { t_recording = outer_; }

std::string CollectiveRecording::run_of(const std::string& graph) const {
  if (calls_.empty()) return "";
  std::string s = "a run of " + graph + " (";
  for (size_t i = 0; i < calls_.size(); ++i) s += (i ? ", " : "") + calls_[i];
  return s + ")";
}

void check_graph_run(const std::string& calls) { check_same(calls, op_loc()); }

std::vector<Tensor> all_reduce_bucket(std::span<const Tensor> xs, comm::ReduceOp op) {
  const Attrs with_op = op == ReduceOp::sum ? Attrs{} : Attrs{{"op", std::string(comm::reduce_op_name(op))}};
  Tensor bucket = call(backend::op(OpId::all_reduce_start), xs, with_op);
  std::vector<Shape> pieces;
  for (const Tensor& x : xs) pieces.push_back(x.shape());
  return dispatch(backend::op(OpId::all_reduce_wait), {&bucket, 1}, comm::wait_attrs(pieces));
}

std::vector<Tensor> average_gradients(std::span<const Tensor> grads, double bucket_mb) {
  const size_t bucket_bytes = size_t(bucket_mb * 1024 * 1024);
  std::vector<Tensor> out(grads.size());
  if (comm::communicator().world().size == 1) {
    out.assign(grads.begin(), grads.end());
    return out;
  }
  // The bucket cap is compared too: buckets split otherwise on two ranks
  // would be messages of different lengths.
  char cap[64];
  std::snprintf(cap, sizeof cap, "(bucket_mb=%g)", bucket_mb);
  check_same_call("data_parallel" + std::string(cap) + "'s gradient average", grads);
  // Traced: one all-reduce a gradient, marked for the graph pass that puts
  // them into buckets in the order the graph's backward makes them
  // (ir/passes/bucket_all_reduce.cpp).
  if (dispatch_hook()) {
    // Each call's gradients are bucketed apart (a graph may take two steps).
    static std::atomic<int64_t> calls{0};
    const Attrs attrs{{"op", std::string("mean")}, {"bucket_bytes", int64_t(bucket_bytes)}, {"step", ++calls}};
    for (size_t i = 0; i < grads.size(); ++i) out[i] = call(backend::op(OpId::all_reduce), {grads[i]}, attrs);
    return out;
  }
  // Eager: backward made the last params' gradients first.
  std::vector<TensorType> types;
  for (size_t i = grads.size(); i-- > 0;) types.push_back(grads[i].type());
  for (const std::vector<size_t>& bucket : comm::plan_buckets(types, bucket_bytes)) {
    std::vector<Tensor> xs;
    for (size_t k : bucket) xs.push_back(grads[grads.size() - 1 - k]);
    std::vector<Tensor> reduced = all_reduce_bucket(xs, ReduceOp::mean);
    for (size_t j = 0; j < bucket.size(); ++j) out[grads.size() - 1 - bucket[j]] = std::move(reduced[j]);
  }
  return out;
}

void register_collective_ops(Registry& r) {
  r.add(OpDef{.id = OpId::all_reduce, .num_inputs = 1, .type_rule = all_reduce_type, .cpu = all_reduce_kernel,
              .cuda = all_reduce_kernel, .backward = all_reduce_backward, .effect = Effect::collective});
  r.add(OpDef{.id = OpId::broadcast, .num_inputs = 1, .type_rule = broadcast_type, .cpu = broadcast_kernel,
              .cuda = broadcast_kernel, .backward = broadcast_backward, .effect = Effect::collective});
  r.add(OpDef{.id = OpId::all_gather, .num_inputs = 1, .type_rule = all_gather_type, .cpu = all_gather_kernel,
              .cuda = all_gather_kernel, .backward = all_gather_backward, .effect = Effect::collective});
  r.add(OpDef{.id = OpId::all_reduce_start, .num_inputs = -1, .type_rule = start_type, .cpu = start_kernel,
              .cuda = start_kernel, .effect = Effect::collective});
  r.add(OpDef{.id = OpId::all_reduce_wait, .num_inputs = 1, .type_rule = wait_type, .cpu = wait_kernel,
              .cuda = wait_kernel, .view = true, .waits = true, .effect = Effect::completion});
}

}  // namespace nn::backend
