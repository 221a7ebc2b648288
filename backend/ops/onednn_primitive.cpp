// Running oneDNN primitives on nn's tensors (backend/ops/onednn_primitive.h).
#ifdef NN_HAVE_ONEDNN
#include "backend/ops/onednn_primitive.h"

#include <unordered_map>

#include "backend/ops/nn_common.h"

namespace nn::backend::onednn {

dnnl::engine& cpu_engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

Arg::Arg(int id_, const memory::desc& plain_, const memory::desc& wanted_, bool output_)
    : id(id_), plain(plain_), wanted(wanted_), output(output_) {
  if (plain != wanted)
    reorder = output ? dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), wanted, cpu_engine(), plain))
                     : dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), plain, cpu_engine(), wanted));
}

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

Tensor scratch_bytes(size_t bytes) { return nnops::scratch(int64_t((bytes + 3) / 4), DType::f32); }

namespace {

// The memory objects of one prepared primitive on one thread, made on the
// thread's first run of it: making them (and a stream) on every call cost
// ~8 us, against ~1 us for a small convolution's work. A run points them
// at its tensors with set_data_handle.
struct Bound {
  dnnl::stream stream;
  std::vector<memory> user, inner;  // per argument; inner is empty without a reorder
  memory scratchpad;
  std::unordered_map<int, memory> exec_args;

  explicit Bound(const Prepared& p) : stream(cpu_engine()) {
    for (const Arg& a : p.args) {
      user.push_back(memory(a.plain, cpu_engine(), DNNL_MEMORY_NONE));
      inner.push_back(a.reorder ? memory(a.wanted, cpu_engine(), DNNL_MEMORY_NONE) : memory());
      exec_args.emplace(a.id, a.reorder ? inner.back() : user.back());
    }
    if (p.scratchpad.get_size() > 0) {
      scratchpad = memory(p.scratchpad, cpu_engine(), DNNL_MEMORY_NONE);
      exec_args.emplace(DNNL_ARG_SCRATCHPAD, scratchpad);
    }
  }
};

// This thread's Bound for p. The table is dropped whole when it outgrows
// the primitives the caches can hold (dropped ones leave entries behind).
Bound& bound(const Prepared& p) {
  thread_local std::unordered_map<uint64_t, std::unique_ptr<Bound>> bindings;
  if (bindings.size() >= 16 * kCachedShapes && !bindings.count(p.id)) bindings.clear();
  auto& slot = bindings[p.id];
  if (!slot) slot = std::make_unique<Bound>(p);
  return *slot;
}

}  // namespace

void run(const Prepared& p, const std::vector<void*>& ptrs, OutputHook hook, bool inner_outputs) {
  Bound& b = bound(p);
  std::vector<Tensor> buffers;  // keeps the reordered copies alive until the wait
  for (size_t i = 0; i < p.args.size(); ++i) {
    const Arg& a = p.args[i];
    if (a.output && a.reorder && inner_outputs) {
      b.inner[i].set_data_handle(ptrs[i], b.stream);
      continue;
    }
    b.user[i].set_data_handle(ptrs[i], b.stream);
    if (!a.reorder) continue;
    buffers.push_back(scratch_bytes(a.wanted.get_size()));
    b.inner[i].set_data_handle(buffers.back().raw_data(), b.stream);
    if (!a.output) a.reorder->execute(b.stream, {{DNNL_ARG_FROM, b.user[i]}, {DNNL_ARG_TO, b.inner[i]}});
  }
  Tensor pad;
  if (p.scratchpad.get_size() > 0) {
    pad = scratch_bytes(p.scratchpad.get_size());
    b.scratchpad.set_data_handle(pad.raw_data(), b.stream);
  }
  p.primitive.execute(b.stream, b.exec_args);
  for (size_t i = 0; i < p.args.size(); ++i) {
    const Arg& a = p.args[i];
    if (!a.output) continue;
    if (hook) {
      b.stream.wait();
      memory& m = a.reorder ? b.inner[i] : b.user[i];
      hook(static_cast<float*>(m.get_data_handle()), int64_t(m.get_desc().get_size() / sizeof(float)));
    }
    if (a.reorder && !inner_outputs)
      a.reorder->execute(b.stream, {{DNNL_ARG_FROM, b.inner[i]}, {DNNL_ARG_TO, b.user[i]}});
  }
  b.stream.wait();
}

}  // namespace nn::backend::onednn
#endif
