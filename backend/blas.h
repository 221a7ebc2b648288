// OpenBLAS, opened with dlopen by the first product that needs it rather
// than mapped at start: loading it and starting its threads took some 7 ms
// of every run, `nn -e 'print(1)'` included. Its functions that nn calls,
// with the types its header gives them. nn keeps it at one thread: the
// kernels split their products over the OpenMP team (cpu_device.cpp).
#pragma once
#include <cblas.h>

namespace nn::backend {

struct Blas {
  decltype(&cblas_sgemm) sgemm;
  decltype(&cblas_dgemm) dgemm;
};

// Opens OpenBLAS once (thread-safe). Null where it cannot be: a message to
// stderr says why, once, and products run on gemm.h's own loops. It never
// throws: products run inside the kernels' OpenMP regions, which an
// exception may not leave.
const Blas* blas();

}  // namespace nn::backend
