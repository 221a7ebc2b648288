// The fused elementwise op: its registry entry (the type rule reads the
// program, the CPU kernel splits the outputs over the threads), the tiled
// evaluator behind it, and the program's text.
//
// The evaluator runs the program tile by tile (kTile elements): each input's
// tile is read in place when it has the program's shape and compute dtype,
// else converted or gathered (broadcast) into a tile buffer; each step runs
// its op's tile kernel into a buffer (buffers are reused once a step's result
// has had its last reader); then the outputs' tiles are stored. A tile is
// thus read whole before any output of it is written, which lets an output
// share memory with an input of its own dtype and shape.
#include "backend/ops/fused.h"

#include <algorithm>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backend/op_registry.h"
#include "backend/ops/elementwise.h"
#include "backend/ops/register.h"
#include "backend/ops/tile_pair.h"
#include "backend/ops/type_rules.h"
#include "backend/parallel.h"

namespace nn::backend {

std::string program_text(const FusedProgram& p) {
  auto arg = [&](const FusedProgram::Arg& a) {
    switch (a.kind) {
      case FusedProgram::Arg::Kind::input: return fmt::format("i{}", a.index);
      case FusedProgram::Arg::Kind::step: return fmt::format("t{}", a.index);
      case FusedProgram::Arg::Kind::immediate: break;
    }
    return fmt::format("{}", a.index < p.immediates.size() ? p.immediates[a.index] : 0.0);  // shortest round trip
  };
  std::string s = fmt::format("{}:", dtype_name(p.compute));
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const FusedProgram::Step& st = p.steps[i];
    s += fmt::format("{} t{} = {}", i ? ";" : "", i, st.op ? st.op->name : "?");
    if (!st.attrs.empty()) s += fmt::format("[{}]", st.attrs.str());
    std::vector<std::string> args;
    for (const auto& a : st.args) args.push_back(arg(a));
    s += fmt::format("({})", fmt::join(args, ", "));
    if (st.dtype != p.compute) s += fmt::format(" : {}", dtype_name(st.dtype));
  }
  s += " ->";
  for (size_t k = 0; k < p.outputs.size(); ++k) s += fmt::format("{} t{}", k ? "," : "", p.outputs[k]);
  return s;
}

const FusedProgram& program_of(const Attrs& attrs) {
  const ProgramPtr& p = attrs.get<ProgramPtr>("program");
  if (!p) throw Error("internal: a fused node without its program");
  return *p;
}

namespace {

constexpr int64_t kTile = 1024;

// How an operand's tile is made ready.
enum class Load : uint8_t { direct, convert, gather, fill };

template <class T>
struct Operand {
  Load how = Load::direct;
  const Tensor* tensor = nullptr;
  const T* base = nullptr;       // direct: element `shift` of the output is base[0]
  int64_t shift = 0;
  T value{};                     // fill: the one value
  ew::detail::Layout<1> layout;  // gather: its strides over the program's shape
  uint32_t buffer = 0;           // convert, gather, fill: its tile buffer
};

// How a call runs one step of the program.
template <class T>
struct StepPlan {
  TileKernel<T> kernel = nullptr;
  uint32_t buffer = 0;  // the tile buffer it writes
  int32_t direct = -1;  // the output whose memory it writes instead, or -1
  // The kernel of the pair the step ends (tile_pair.h), whose first step is
  // the one before, skipped itself (`folded`); `other`: which of this step's
  // operands is not that step's result.
  tile::PairKernel<T> pair = nullptr;
  bool folded = false;
  uint8_t other = 0;
};

// What a call works out once, before its tiles.
template <class T>
struct TilePlan {
  std::vector<Operand<T>> inputs, immediates;
  std::vector<StepPlan<T>> steps;
  uint32_t buffers = 0;
};

template <class T>
TileKernel<T> tile_kernel(const OpDef& op) {
  if constexpr (std::is_same_v<T, float>) return op.tile.f32;
  else return op.tile.f64;
}

template <class T>
TilePlan<T> make_tile_plan(const FusedProgram& p, std::span<const Tensor> in, std::span<Tensor> out, const T* block,
                           int64_t begin) {
  TilePlan<T> plan;
  plan.inputs.resize(in.size());
  for (size_t k = 0; k < in.size(); ++k) {
    Operand<T>& o = plan.inputs[k];
    o.tensor = &in[k];
    if (k == 0 && block) {
      o.base = block;
      o.shift = begin;
      continue;
    }
    if (in[k].numel() == 1) {
      o.how = Load::fill;
      o.value = ew::read_as<T>(in[k]);
    } else if (in[k].shape() == p.shape) {
      o.how = in[k].dtype() == dtype_of<T>() ? Load::direct : Load::convert;
      if (o.how == Load::direct) o.base = in[k].data<T>();
    } else {
      o.how = Load::gather;
      o.layout = ew::detail::make_layout<1>(p.shape, {&in[k].shape()});
    }
    if (o.how != Load::direct) o.buffer = plan.buffers++;
  }
  for (double v : p.immediates) {
    Operand<T> o;
    o.how = Load::fill;
    o.value = T(v);
    o.buffer = plan.buffers++;
    plan.immediates.push_back(o);
  }

  // Step buffers: a step's buffer is free again after its last reader
  // (outputs are read at the end of the tile), and the step reading it last
  // may write into it (tile kernels read element i before writing it).
  const size_t ns = p.steps.size();
  std::vector<size_t> last(ns, 0);
  for (size_t s = 0; s < ns; ++s)
    for (const auto& a : p.steps[s].args)
      if (a.kind == FusedProgram::Arg::Kind::step) last[a.index] = s;
  for (uint32_t o : p.outputs) last[o] = ns;
  std::vector<uint32_t> free;
  plan.steps.resize(ns);
  for (size_t s = 0; s < ns; ++s) {
    plan.steps[s].kernel = tile_kernel<T>(*p.steps[s].op);
    if (!plan.steps[s].kernel) throw Error("internal: op " + p.steps[s].op->name + " has no tile kernel");
    const auto& args = p.steps[s].args;
    for (size_t j = 0; j < args.size(); ++j) {
      const auto& a = args[j];
      bool repeated = std::find(args.begin(), args.begin() + std::ptrdiff_t(j), a) != args.begin() + std::ptrdiff_t(j);
      if (a.kind == FusedProgram::Arg::Kind::step && last[a.index] == s && !repeated)
        free.push_back(plan.steps[a.index].buffer);
    }
    if (free.empty()) {
      plan.steps[s].buffer = plan.buffers++;
    } else {
      plan.steps[s].buffer = free.back();
      free.pop_back();
    }
  }

  // Pairs: step s folds into s + 1 where s + 1 reads it once and nothing
  // else does (outputs count as readers), and s does not end a pair itself.
  std::vector<uint32_t> readers(ns, 0);
  for (const FusedProgram::Step& st : p.steps)
    for (const auto& a : st.args)
      if (a.kind == FusedProgram::Arg::Kind::step) ++readers[a.index];
  for (uint32_t o : p.outputs) ++readers[o];
  for (size_t s = 0; s + 1 < ns; ++s) {
    const FusedProgram::Step &first = p.steps[s], &second = p.steps[s + 1];
    if (plan.steps[s].pair || readers[s] != 1 || first.args.size() != 2 || second.args.size() != 2) continue;
    if (first.dtype != p.compute || second.dtype != p.compute || !first.attrs.empty() || !second.attrs.empty())
      continue;
    const FusedProgram::Arg result{FusedProgram::Arg::Kind::step, uint32_t(s)};
    const bool left = second.args[0] == result;
    if (!left && second.args[1] != result) continue;
    if (auto k = tile::pair_kernel<T>(first.op->id, second.op->id, left)) {
      plan.steps[s + 1].pair = *k;
      plan.steps[s + 1].other = left ? 1 : 0;
      plan.steps[s].folded = true;
    }
  }

  // A step an output holds writes the output's memory itself, sparing the
  // copy out of its buffer (stores bound a long program: each step stores its
  // tile), unless a later step reads an input in place that shares that
  // memory: it would read the new values.
  auto shares = [&](size_t k, const Tensor& o) {
    const Operand<T>& x = plan.inputs[k];
    if (x.how != Load::direct || (k == 0 && block)) return false;
    const T* const lo = o.data<T>();
    return x.base < lo + p.shape.numel() && lo < x.base + p.shape.numel();
  };
  for (size_t k = 0; k < p.outputs.size(); ++k) {
    const uint32_t s = p.outputs[k];
    if (plan.steps[s].direct >= 0 || out[k].dtype() != dtype_of<T>() || p.steps[s].dtype == DType::boolean) continue;
    bool read_later = false;
    for (size_t later = s + 1; later < ns && !read_later; ++later)
      for (const auto& a : p.steps[later].args)
        read_later |= a.kind == FusedProgram::Arg::Kind::input && shares(a.index, out[k]);
    if (!read_later) plan.steps[s].direct = int32_t(k);
  }
  return plan;
}

// dst[0, n) = the input's elements [begin, begin + n) of the program's
// shape, broadcast by the layout's strides and converted to T.
template <class T, class S>
void gather(const S* src, const ew::detail::Layout<1>& L, int64_t begin, int64_t n, T* dst) {
  const int nd = L.nd, inner = nd - 1;
  int64_t idx[kMaxDims];
  int64_t rem = begin, off = 0;
  for (int d = nd - 1; d >= 0; --d) {
    idx[d] = rem % L.size[d];
    rem /= L.size[d];
    off += idx[d] * L.stride[0][d];
  }
  const int64_t st = L.stride[0][inner];
  for (int64_t done = 0; done < n;) {
    const int64_t len = std::min(L.size[inner] - idx[inner], n - done);
    if (st == 0) {
      std::fill(dst + done, dst + done + len, ew::convert_value<T>(src[off]));
    } else {
      for (int64_t j = 0; j < len; ++j) dst[done + j] = ew::convert_value<T>(src[off + j * st]);
    }
    done += len;
    idx[inner] += len;
    off += len * st;
    for (int d = inner; d > 0 && idx[d] == L.size[d]; --d) {
      off += L.stride[0][d - 1] - L.size[d] * L.stride[0][d];
      idx[d] = 0;
      ++idx[d - 1];
    }
  }
}

template <class T>
const T* load(const Operand<T>& o, T* buf, int64_t begin, int64_t n) {
  switch (o.how) {
    case Load::direct: return o.base + (begin - o.shift);
    case Load::fill: return buf;
    case Load::convert:
      visit_dtype(o.tensor->dtype(), [&]<class S>() {
        const S* s = o.tensor->template data<S>() + begin;
        for (int64_t i = 0; i < n; ++i) buf[i] = ew::convert_value<T>(s[i]);
      });
      return buf;
    case Load::gather:
      visit_dtype(o.tensor->dtype(), [&]<class S>() { gather(o.tensor->template data<S>(), o.layout, begin, n, buf); });
      return buf;
  }
  return buf;
}

template <class T>
void run_tiles(const FusedProgram& p, std::span<const Tensor> in, std::span<Tensor> out, int64_t begin, int64_t end,
               const T* block) {
  const TilePlan<T> plan = make_tile_plan<T>(p, in, out, block, begin);
  // Tiles no longer than the range: small tensors take small buffers.
  const int64_t tile = std::min(kTile, end - begin);
  std::vector<T> scratch(size_t(plan.buffers) * size_t(tile));
  auto buf = [&](uint32_t b) { return scratch.data() + size_t(b) * size_t(tile); };
  for (const auto* group : {&plan.inputs, &plan.immediates})
    for (const Operand<T>& o : *group)
      if (o.how == Load::fill) std::fill(buf(o.buffer), buf(o.buffer) + tile, o.value);

  std::vector<const T*> input(in.size());
  std::vector<T*> result(p.steps.size());  // where each step's tile is
  const T* args[3] = {};
  for (int64_t t = begin; t < end; t += tile) {
    const int64_t n = std::min(tile, end - t);
    for (size_t k = 0; k < in.size(); ++k) input[k] = load(plan.inputs[k], buf(plan.inputs[k].buffer), t, n);
    auto operand = [&](const FusedProgram::Arg& a) -> const T* {
      return a.kind == FusedProgram::Arg::Kind::input  ? input[a.index]
             : a.kind == FusedProgram::Arg::Kind::step ? result[a.index]
                                                       : buf(plan.immediates[a.index].buffer);
    };
    for (size_t s = 0; s < p.steps.size(); ++s) {
      const StepPlan<T>& sp = plan.steps[s];
      if (sp.folded) continue;
      const FusedProgram::Step& st = p.steps[s];
      T* dst = result[s] = sp.direct >= 0 ? out[size_t(sp.direct)].data<T>() + t : buf(sp.buffer);
      if (sp.pair) {
        const FusedProgram::Step& first = p.steps[s - 1];
        sp.pair(operand(first.args[0]), operand(first.args[1]), operand(st.args[sp.other]), dst, n);
        continue;
      }
      for (size_t j = 0; j < st.args.size() && j < 3; ++j) args[j] = operand(st.args[j]);
      sp.kernel(args, dst, n, st.attrs);
      if (st.dtype == DType::boolean)
        for (int64_t i = 0; i < n; ++i) dst[i] = dst[i] != T(0) ? T(1) : T(0);
    }
    for (size_t k = 0; k < p.outputs.size(); ++k) {
      const uint32_t s = p.outputs[k];
      if (plan.steps[s].direct == int32_t(k)) continue;
      if (out[k].dtype() == DType::boolean) {
        bool* d = out[k].data<bool>() + t;
        for (int64_t i = 0; i < n; ++i) d[i] = result[s][i] != T(0);
      } else {
        std::copy(result[s], result[s] + n, out[k].data<T>() + t);
      }
    }
  }
}

OutTypes fused_type(std::span<const TensorType> in, const Attrs& attrs) {
  const FusedProgram& p = program_of(attrs);
  if (in.size() != p.num_inputs)
    throw Error("internal: a fused node with " + std::to_string(in.size()) + " inputs for a program of " +
                std::to_string(p.num_inputs));
  for (const TensorType& t : in) {
    Shape s;
    if (!broadcast_shapes(t.shape, p.shape, s) || s != p.shape)
      throw Error("internal: a fused node's input " + t.str() + " does not broadcast to " + p.shape.str());
  }
  return program_out_types(p, operands_device(in));
}

void fused_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const FusedProgram& p = program_of(attrs);
  // More steps, more work per element: split shorter loops over the threads.
  const int64_t grain = std::max<int64_t>(1024, kParallelGrain / 2 / int64_t(std::max<size_t>(1, p.steps.size())));
  parallel_for(p.shape.numel(), grain, [&](int64_t b, int64_t e) { run_fused(p, in, out, b, e); });
}

}  // namespace

OutTypes program_out_types(const FusedProgram& p, Device* dev) {
  OutTypes out;
  for (uint32_t o : p.outputs) out.push_back(TensorType{p.steps.at(o).dtype, p.shape, dev});
  return out;
}

void run_fused(const FusedProgram& p, std::span<const Tensor> in, std::span<Tensor> out, int64_t begin, int64_t end,
               const void* block) {
  if (begin >= end) return;
  if (p.compute == DType::f64) run_tiles<double>(p, in, out, begin, end, static_cast<const double*>(block));
  else if (p.compute == DType::f32) run_tiles<float>(p, in, out, begin, end, static_cast<const float*>(block));
  else throw Error("internal: a fused program computes in f32 or f64, not " + std::string(dtype_name(p.compute)));
}

void register_fused_ops(Registry& r) {
  r.add({.id = OpId::fused, .num_inputs = -1, .type_rule = fused_type, .cpu = fused_kernel, .elementwise = true});
}

}  // namespace nn::backend
