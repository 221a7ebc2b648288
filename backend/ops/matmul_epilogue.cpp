// matmul_epilogue: a 2-d GEMM whose result goes straight into a fused
// elementwise program (graph pass fuse-matmul-epilogue): `relu(x @ w + b)`
// in one op, or a weight's gradient and its optimizer update. Each thread
// computes a block of rows of the product into a buffer of its own, and runs
// the program on those rows while they are in cache; the product itself is
// never written to memory.
//
// Inputs (a, b, e...): a [m, k] (stored [k, m] when ta), b [k, n] (stored
// [n, k] when tb), then the program's other inputs. The program's input 0 is
// the product, its input j >= 1 is the op's input j + 1. The outputs are the
// program's. An output may share memory with an input e of its own dtype and
// shape (its rows are read before they are written), never with a or b.
#include <omp.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "backend/interrupt.h"
#include "backend/op_registry.h"
#include "backend/ops/fused.h"
#include "backend/ops/gemm.h"
#include "backend/ops/register.h"
#include "backend/ops/type_rules.h"

namespace nn::backend {
namespace {

struct Dims {
  int64_t m, n, k;
};

Dims dims_of(const TensorType& a, const TensorType& b, const Attrs& attrs) {
  const bool ta = attrs.get<bool>("ta"), tb = attrs.get<bool>("tb");
  if (a.shape.ndim() != 2 || b.shape.ndim() != 2 || a.dtype != b.dtype || !is_floating(a.dtype))
    throw Error("matmul_epilogue takes two 2-d float matrices of one dtype, got " + a.str() + " and " + b.str());
  const int64_t ka = ta ? a.shape[0] : a.shape[1], kb = tb ? b.shape[1] : b.shape[0];
  if (ka != kb)
    throw Error("matmul_epilogue shapes do not fit: " + a.str() + " and " + b.str() + " (" + std::to_string(ka) +
                " != " + std::to_string(kb) + ")");
  return {ta ? a.shape[1] : a.shape[0], tb ? b.shape[0] : b.shape[1], ka};
}

OutTypes epilogue_type(std::span<const TensorType> in, const Attrs& attrs) {
  if (in.size() < 2) throw Error("internal: matmul_epilogue takes two matrices and the program's other inputs");
  const Dims d = dims_of(in[0], in[1], attrs);
  const FusedProgram& p = program_of(attrs);
  if (p.shape != Shape({d.m, d.n}) || p.compute != in[0].dtype || p.num_inputs != in.size() - 1)
    throw Error("internal: a matmul_epilogue program of " + p.shape.str() + " for a product " + in[0].str() + " by " +
                in[1].str());
  return program_out_types(p, operands_device(in));
}

// A thread's block of the product: 512 KB of f32, half of a core's L2 on
// the machine measured. The MLP 784-512-256-10's weight gradient at batch
// 64, 784 x 512 with the SGD update as epilogue, took 247 us in 7 blocks of
// 128 rows (4 on one thread, 3 on the other), 206 us in 8 blocks of 98, 198
// us in 4 blocks of 200; one threaded GEMM of the whole product and then
// the program took 308 us.
constexpr int64_t kBlockElems = int64_t(1) << 17;

void epilogue_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const FusedProgram& p = program_of(attrs);
  const Dims d = dims_of(in[0].type(), in[1].type(), attrs);
  if (d.m == 0 || d.n == 0) return;  // outputs of the product's shape: nothing to write (an empty batch)
  const bool ta = attrs.get<bool>("ta"), tb = attrs.get<bool>("tb");
  const int64_t lda = in[0].shape()[1], ldb = in[1].shape()[1];
  // The program's inputs: the product (a type only; its rows come from the
  // thread's buffer), then the op's inputs after a and b.
  std::vector<Tensor> prog_in;
  prog_in.push_back(Tensor::empty(p.shape, p.compute, in[0].device()));  // lazy: never given memory
  prog_in.insert(prog_in.end(), in.begin() + 2, in.end());
  visit_dtype(p.compute, [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T *pa = in[0].data<T>(), *pb = in[1].data<T>();
      // A small product is not worth waking the threads for (as matmul).
      const bool small = d.m * d.n * std::max<int64_t>(d.k, 1) < 2 * 64 * 64 * 64;
      const int threads = omp_in_parallel() || small ? 1 : omp_get_max_threads();
      // Blocks of whole rows (a multiple of 8), as many for every thread, each
      // of at most kBlockElems elements, which stay in a core's cache.
      const int64_t max_rows = std::max<int64_t>(8, kBlockElems / std::max<int64_t>(1, d.n) / 8 * 8);
      const int64_t per_thread = (d.m + threads - 1) / threads;
      const int64_t blocks_wanted = threads * ((per_thread + max_rows - 1) / max_rows);
      const int64_t rows = std::max<int64_t>(8, ((d.m + blocks_wanted - 1) / blocks_wanted + 7) / 8 * 8);
      const int64_t blocks = (d.m + rows - 1) / rows;
      const InterruptCheck interrupted;
#pragma omp parallel num_threads(int(std::max<int64_t>(1, std::min<int64_t>(threads, blocks))))
      {
        // Left uninitialised: every block's gemm (or the fill for k = 0) writes it whole.
        const std::unique_ptr<T[]> c = std::make_unique_for_overwrite<T[]>(size_t(std::min(rows, d.m) * d.n));
#pragma omp for schedule(static)
        for (int64_t i = 0; i < blocks; ++i) {
          if (interrupted()) continue;
          const int64_t lo = i * rows, len = std::min(rows, d.m - lo);
          if (d.k == 0) std::fill_n(c.get(), len * d.n, T(0));
          else gemm(ta, tb, len, d.n, d.k, ta ? pa + lo : pa + lo * lda, lda, pb, ldb, T(0), c.get(), d.n);
          run_fused(p, prog_in, out, lo * d.n, (lo + len) * d.n, c.get());
        }
      }
    }
  });
}

}  // namespace

void register_matmul_epilogue_ops(Registry& r) {
  r.add({.id = OpId::matmul_epilogue, .num_inputs = -1, .type_rule = epilogue_type, .cpu = epilogue_kernel, .overwritable_from = 2});
}

}  // namespace nn::backend
