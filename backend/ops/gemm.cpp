// f32 GEMM (backend/ops/gemm.h): oneDNN's sgemm when it is on, else
// OpenBLAS's. Both take row-major matrices; oneDNN runs single-threaded
// inside an OpenMP team (the kernels' per-thread gemms), as OpenBLAS does
// (backend::set_num_threads).
#include "backend/ops/gemm.h"

#include "backend/onednn.h"

#ifdef NN_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.h>
#endif

namespace nn::backend {

void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
          int64_t ldb, float beta, float* c, int64_t ldc) {
#ifdef NN_HAVE_ONEDNN
  if (onednn_enabled() &&
      dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc) == dnnl_success)
    return;
#endif
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, blasint(m), blasint(n),
              blasint(k), 1.0f, a, blasint(lda), b, blasint(ldb), beta, c, blasint(ldc));
}

}  // namespace nn::backend
