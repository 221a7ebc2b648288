// f32 GEMM (backend/ops/gemm.h): oneDNN's sgemm when it is on, else
// OpenBLAS's. Both take row-major matrices and run on the calling thread:
// the kernels split their products over the OpenMP team themselves
// (backend::set_num_threads keeps OpenBLAS at one thread). oneDNN threads
// through OpenMP with omp_get_max_threads() threads unless it is inside an
// *active* parallel region; inside a team of one (a kernel's region when its
// product is small) it would start a nested team on every call (measured:
// 1.2 ms per call of a 64x64x128 product), so it is told one thread.
#include "backend/ops/gemm.h"

#include "backend/blas.h"
#include "backend/onednn.h"

#ifdef NN_HAVE_ONEDNN
#include "backend/onednn_library.h"
#include "backend/parallel.h"
#endif

namespace nn::backend {

void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
          int64_t ldb, float beta, float* c, int64_t ldc) {
#ifdef NN_HAVE_ONEDNN
  if (onednn_enabled()) {
    dnnl_status_t s;
    {
      ThreadLimit one_thread;
      s = dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
    }
    if (s == dnnl_success) return;
  }
#endif
  if (const Blas* lib = blas())
    lib->sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, blasint(m),
               blasint(n), blasint(k), 1.0f, a, blasint(lda), b, blasint(ldb), beta, c, blasint(ldc));
  else
    reference_gemm(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
}

void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b,
          int64_t ldb, double beta, double* c, int64_t ldc) {
  if (const Blas* lib = blas())
    lib->dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, blasint(m),
               blasint(n), blasint(k), 1.0, a, blasint(lda), b, blasint(ldb), beta, c, blasint(ldc));
  else
    reference_gemm(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace nn::backend
