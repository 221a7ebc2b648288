// The collectives of CUDA tensors through NCCL (SPEC §14), GPU to GPU,
// where the build found NCCL (cmake/cuda.cmake): all_reduce, broadcast,
// all_gather and the bucket's all_reduce_start / all_reduce_wait. Each runs
// on a stream of its own, ordered after the GPU's stream by an event; the
// GPU's stream waits for it by another event, at once or, for a bucket, at
// its all_reduce_wait, so that the bucket travels while backward goes on.
//
// One NCCL communicator, made at the first collective of a CUDA tensor:
// rank 0 makes the unique id and MPI (backend/comm) hands it out. Every
// rank reaches that collective at the same point (the collectives' check
// compares the call and whether its tensors are on a GPU), so all make it
// together. Max and min of floats take the host path (the kernels of
// backend/ops/collective.cpp: through host memory and MPI), and so do all
// of them where two ranks share a GPU (NCCL refuses them) or NN_NCCL=0 is
// set on any rank.
#include <nccl.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

#include "backend/attrs.h"
#include "backend/comm/communicator.h"
#include "backend/cuda/cuda_device.h"
#include "backend/cuda/nccl_collectives.h"
#include "backend/cuda/register.h"
#include "backend/error.h"
#include "backend/op_registry.h"

namespace nn::backend::cuda {
namespace {

using comm::ReduceOp;

void check_nccl(ncclResult_t r, const char* what) {
  if (r == ncclSuccess) return;
  throw Error(std::string(what) + ": NCCL error: " + ncclGetErrorString(r));
}

// What each rank tells the others before they choose NCCL: its machine, its
// GPU, and whether it allows NCCL at all.
struct RankGpu {
  uint64_t host = 0;
  std::array<char, 32> bus_id{};
  uint8_t allows = 1;

  bool same_gpu(const RankGpu& o) const { return host == o.host && bus_id == o.bus_id; }
};

RankGpu this_rank_gpu(const CudaDevice& dev) {
  RankGpu g;
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  g.host = std::hash<std::string>{}(name);
  check(cudaDeviceGetPCIBusId(g.bus_id.data(), int(g.bus_id.size()), dev.index()), "reading a GPU's bus id");
  const char* env = std::getenv("NN_NCCL");
  g.allows = !(env && std::strcmp(env, "0") == 0);
  return g;
}

// The run's NCCL communicator, or why the host path is taken.
struct Nccl {
  bool decided = false;
  ncclComm_t comm = nullptr;  // null: the host path
  int device = -1;            // the GPU it was made on
  cudaStream_t stream = nullptr;
};

Nccl g_nccl;
std::mutex g_nccl_mu;

// The communicator for a collective of tensors on `dev`; null when the
// ranks take the host path. Every rank calls it at the same collective.
Nccl* nccl_for(CudaDevice& dev) {
  std::lock_guard lock(g_nccl_mu);
  if (!g_nccl.decided) {
    comm::Communicator& c = comm::communicator();
    const comm::World& w = c.world();
    std::vector<RankGpu> gpus(size_t(w.size));
    const RankGpu mine = this_rank_gpu(dev);
    c.all_gather(&mine, gpus.data(), sizeof mine);
    bool usable = true;
    for (size_t i = 0; i < gpus.size(); ++i) {
      usable = usable && gpus[i].allows;
      for (size_t j = 0; j < i; ++j) usable = usable && !gpus[i].same_gpu(gpus[j]);
    }
    g_nccl.decided = true;
    if (!usable) return nullptr;
    ncclUniqueId id{};
    if (w.rank == 0) check_nccl(ncclGetUniqueId(&id), "making the NCCL id");
    c.broadcast(&id, sizeof id, 0);
    dev.activate();
    check(cudaStreamCreateWithFlags(&g_nccl.stream, cudaStreamNonBlocking), "creating the NCCL stream");
    check_nccl(ncclCommInitRank(&g_nccl.comm, w.size, id, w.rank), "starting NCCL");
    g_nccl.device = dev.index();
  }
  if (!g_nccl.comm) return nullptr;
  if (dev.index() != g_nccl.device)
    throw Error("the collectives of one rank's CUDA tensors use one GPU: the first was on cuda:" +
                std::to_string(g_nccl.device) + ", this one is on " + dev.name());
  dev.activate();
  return &g_nccl;
}

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::f32: return ncclFloat32;
    case DType::f64: return ncclFloat64;
    case DType::f16: return ncclFloat16;
    case DType::bf16: return ncclBfloat16;
    case DType::i32: return ncclInt32;
    case DType::i64: return ncclInt64;
    case DType::boolean: return ncclUint8;  // max and min only: any and all
  }
  return ncclFloat32;
}

ncclRedOp_t nccl_op(const Attrs& attrs) {
  ReduceOp op = ReduceOp::sum;
  comm::parse_reduce_op(attrs.get_or<std::string>("op", "sum"), op);
  switch (op) {
    case ReduceOp::sum: return ncclSum;
    case ReduceOp::mean: return ncclAvg;
    case ReduceOp::max: return ncclMax;
    case ReduceOp::min: return ncclMin;
  }
  return ncclSum;
}

// An event recorded on `s` now.
cudaEvent_t record(cudaStream_t s) {
  cudaEvent_t e = nullptr;
  check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "making a CUDA event");
  check(cudaEventRecord(e, s), "recording a CUDA event");
  return e;
}

// `to` waits for `e`, which is then let go.
void wait_for(cudaStream_t to, cudaEvent_t e) {
  check(cudaStreamWaitEvent(to, e, 0), "ordering the GPU's streams");
  check(cudaEventDestroy(e), "ordering the GPU's streams");
}

// Runs `collective` on the NCCL stream after everything queued on the GPU's
// stream so far. The GPU's stream waits for it now, or, with `done`, where
// the caller waits for that event.
template <class F>
void on_nccl_stream(CudaDevice& dev, Nccl& n, F collective, cudaEvent_t* done = nullptr) {
  wait_for(n.stream, record(dev.stream()));
  collective(n.stream);
  cudaEvent_t e = record(n.stream);
  if (done)
    *done = e;
  else
    wait_for(dev.stream(), e);
}

// The host path's kernels, kept when NCCL's replace them.
Kernel g_host_all_reduce, g_host_broadcast, g_host_all_gather, g_host_start, g_host_wait;

// NCCL's max and min of floats may drop a NaN (as C's fmax does); nn's
// propagate it, as its max() does: those take the host path.
bool drops_nan(DType t, const Attrs& attrs) {
  const ncclRedOp_t op = nccl_op(attrs);
  return is_floating(t) && (op == ncclMax || op == ncclMin);
}

void all_reduce_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  CudaDevice& dev = call_device(in, out);
  Nccl* n = nccl_for(dev);
  if (!n || drops_nan(in[0].dtype(), attrs)) return g_host_all_reduce(in, out, attrs);
  on_nccl_stream(dev, *n, [&](cudaStream_t s) {
    check_nccl(ncclAllReduce(in[0].raw_data(), out[0].raw_data(), size_t(in[0].numel()), nccl_type(in[0].dtype()),
                             nccl_op(attrs), n->comm, s),
               "all_reduce");
  });
}

void broadcast_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  CudaDevice& dev = call_device(in, out);
  Nccl* n = nccl_for(dev);
  if (!n) return g_host_broadcast(in, out, attrs);
  const int root = int(attrs.get_or<int64_t>("root", 0));
  on_nccl_stream(dev, *n, [&](cudaStream_t s) {
    check_nccl(ncclBroadcast(in[0].raw_data(), out[0].raw_data(), in[0].nbytes(), ncclUint8, root, n->comm, s),
               "broadcast");
  });
}

void all_gather_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  CudaDevice& dev = call_device(in, out);
  Nccl* n = nccl_for(dev);
  if (!n) return g_host_all_gather(in, out, attrs);
  on_nccl_stream(dev, *n, [&](cudaStream_t s) {
    check_nccl(ncclAllGather(in[0].raw_data(), out[0].raw_data(), in[0].nbytes(), ncclUint8, n->comm, s), "all_gather");
  });
}

// Each bucket on its way, by its memory: the event its wait waits for.
std::mutex g_buckets_mu;
std::unordered_map<const void*, cudaEvent_t> g_buckets;

void start_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  CudaDevice& dev = call_device(in, out);
  Nccl* n = nccl_for(dev);
  if (!n || drops_nan(out[0].dtype(), attrs)) return g_host_start(in, out, attrs);
  Tensor& b = out[0];
  char* dst = static_cast<char*>(b.raw_data());
  for (const Tensor& t : in) {
    if (t.raw_data() != dst) dev.copy(dst, t.raw_data(), t.nbytes());
    dst += t.nbytes();
  }
  cudaEvent_t done = nullptr;
  on_nccl_stream(
      dev, *n,
      [&](cudaStream_t s) {
        check_nccl(ncclAllReduce(b.raw_data(), b.raw_data(), size_t(b.numel()), nccl_type(b.dtype()), nccl_op(attrs),
                                 n->comm, s),
                   "all_reduce");
      },
      &done);
  std::lock_guard lock(g_buckets_mu);
  g_buckets[b.raw_data()] = done;
}

void wait_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  cudaEvent_t done = nullptr;
  {
    std::lock_guard lock(g_buckets_mu);
    if (auto it = g_buckets.find(in[0].raw_data()); it != g_buckets.end()) {
      done = it->second;
      g_buckets.erase(it);
    }
  }
  if (!done) return g_host_wait(in, out, attrs);
  CudaDevice& dev = device_of(in[0]);
  dev.activate();
  wait_for(dev.stream(), done);
}

void replace(Registry& r, OpId id, Kernel& host, Kernel nccl) {
  OpDef& d = r.edit(id);
  if (d.cuda == nccl) return;
  host = d.cuda;
  d.cuda = nccl;
}

}  // namespace

bool nccl_chosen() {
  std::lock_guard lock(g_nccl_mu);
  return g_nccl.comm != nullptr;
}

void register_nccl(Registry& r) {
  replace(r, OpId::all_reduce, g_host_all_reduce, all_reduce_kernel);
  replace(r, OpId::broadcast, g_host_broadcast, broadcast_kernel);
  replace(r, OpId::all_gather, g_host_all_gather, all_gather_kernel);
  replace(r, OpId::all_reduce_start, g_host_start, start_kernel);
  replace(r, OpId::all_reduce_wait, g_host_wait, wait_kernel);
}

}  // namespace nn::backend::cuda
