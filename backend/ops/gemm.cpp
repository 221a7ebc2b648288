// f32 GEMM (backend/ops/gemm.h): oneDNN's sgemm when it is on, else
// OpenBLAS's. Both take row-major matrices and run on the calling thread:
// the kernels split their products over the OpenMP team themselves
// (backend::set_num_threads keeps OpenBLAS at one thread). oneDNN threads
// through OpenMP with omp_get_max_threads() threads unless it is inside an
// *active* parallel region; inside a team of one (a kernel's region when its
// product is small) it would start a nested team on every call (measured:
// 1.2 ms per call of a 64x64x128 product), so it is told one thread.
#include "backend/ops/gemm.h"

#include <algorithm>
#include <vector>

#include "backend/blas.h"
#include "backend/onednn.h"

#ifdef NN_HAVE_ONEDNN
#include "backend/onednn_library.h"
#include "backend/parallel.h"
#endif

namespace nn::backend {

namespace {

void gemm_f32(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
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

// oneDNN's matrix-vector products (m or n of 1) add each output's k terms
// in one running sum: 4096 terms of 0.1 gave 409.6158 for 409.6, 100,000
// gave 9998.557 (its square products' kernels: 10000.003; OpenBLAS's
// 10000.011). Such a product runs in pieces of k this long, each summed
// apart and then added to the output.
constexpr int64_t kVectorPiece = 512;

}  // namespace

void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
          int64_t ldb, float beta, float* c, int64_t ldc) {
  if ((m != 1 && n != 1) || k <= kVectorPiece) return gemm_f32(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
  std::vector<float> piece(size_t(m * n));
  for (int64_t k0 = 0; k0 < k; k0 += kVectorPiece) {
    gemm_f32(ta, tb, m, n, std::min(kVectorPiece, k - k0), ta ? a + k0 * lda : a + k0, lda,
             tb ? b + k0 : b + k0 * ldb, ldb, 0.0f, piece.data(), n);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float& out = c[i * ldc + j];
        const float p = piece[size_t(i * n + j)];
        // beta = 0 ignores what C held (NaN included), as BLAS does.
        out = k0 > 0 ? out + p : beta == 0.0f ? p : beta * out + p;
      }
  }
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
