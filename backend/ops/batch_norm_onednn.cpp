// batch_norm_backward through oneDNN (backend/ops/batch_norm_onednn.h). The
// primitives of each shape are made once and kept in a PrimitiveCache
// (backend/ops/onednn_primitive.h). nn's activations are already in the
// primitive's layout, so nothing is reordered.
#include "backend/ops/batch_norm_onednn.h"

#include "backend/onednn.h"

#ifdef NN_HAVE_ONEDNN
#include <optional>
#include <tuple>

#include "backend/ops/blocked_layout.h"
#include "backend/ops/onednn_primitive.h"
#include "backend/parallel.h"
#endif

namespace nn::backend {

#ifndef NN_HAVE_ONEDNN
bool onednn_batch_norm_backward(const Shape&, double, const float*, const float*, const float*, const float*,
                                const float*, float*, float*, float*) {
  return false;
}
size_t onednn_batch_norm_cached() { return 0; }
#else
namespace {
using namespace onednn;

using BnKey = std::tuple<int64_t, int64_t, int64_t, int64_t, double>;

// The backward primitive of one shape.
Prepared make_backward(const Shape& s, double eps) {
  const memory::desc act({s[0], s[1], s[2], s[3]}, f32, tag::nChw16c), channel({s[1]}, f32, tag::x);
  const auto flags = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
  // The backward's descriptor takes the forward's as a hint.
  const dnnl::batch_normalization_forward::primitive_desc hint(
      {dnnl::prop_kind::forward_training, act, float(eps), flags}, cpu_engine());
  const dnnl::batch_normalization_backward::primitive_desc pd({dnnl::prop_kind::backward, act, act, float(eps), flags},
                                                              user_scratchpad(), cpu_engine(), hint);
  // The primitive asks for the shift although dx does not depend on it:
  // it is given gamma's pointer again (read, never written).
  return prepare<dnnl::batch_normalization_backward>(
      pd, {Arg(DNNL_ARG_DIFF_DST, act, pd.diff_dst_desc(), false), Arg(DNNL_ARG_SRC, act, pd.src_desc(), false),
           Arg(DNNL_ARG_SCALE, channel, pd.weights_desc(), false),
           Arg(DNNL_ARG_SHIFT, channel, pd.weights_desc(), false),
           Arg(DNNL_ARG_MEAN, channel, pd.mean_desc(), false),
           Arg(DNNL_ARG_VARIANCE, channel, pd.variance_desc(), false),
           Arg(DNNL_ARG_DIFF_SRC, act, pd.diff_src_desc(), true),
           Arg(DNNL_ARG_DIFF_SCALE, channel, pd.diff_weights_desc(), true),
           Arg(DNNL_ARG_DIFF_SHIFT, channel, pd.diff_weights_desc(), true)});
}

using BnCache = PrimitiveCache<BnKey, Prepared>;
BnCache& cache() {
  static BnCache c;
  return c;
}

}  // namespace

bool onednn_batch_norm_backward(const Shape& s, double eps, const float* dy, const float* x, const float* gamma,
                                const float* mean, const float* var, float* dx, float* dgamma, float* dbeta) {
  if (!onednn_enabled() || !blockable(s) || s[0] * s[2] * s[3] == 0) return false;
  // Small ones on one thread, as nn's kernels split by parallel_for's grain;
  // oneDNN fixes the thread count when the primitive is made.
  ThreadLimit limit(s.numel() < 2 * kParallelGrain);
  const BnCache::Use p = cache().use(
      BnKey{s[0], s[1], s[2], s[3], eps}, [&] { return make_backward(s, eps); },
      [](Prepared& p) -> const Prepared& { return p; });
  if (!p.p) return false;
  auto in = [](const float* q) { return const_cast<float*>(q); };
  run(*p.p, {in(dy), in(x), in(gamma), in(gamma), in(mean), in(var), dx, dgamma, dbeta});
  return true;
}

size_t onednn_batch_norm_cached() { return cache().size(); }
#endif

}  // namespace nn::backend
