// matmul (NumPy rules: 1-d operands, broadcast batches), dot and outer.
// Small cases are worked by hand; larger ones against a plain triple loop
// written here, independent of the kernel.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "backend/interrupt.h"
#include "backend/ops/gemm.h"
#include "tensor_test_util.h"

using namespace nn::backend;
using namespace nntest;

namespace {

// Deterministic small integers as floats, so that products are exact.
template <class T>
Tensor pattern(const Shape& s, int seed) {
  std::vector<T> v(size_t(s.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = T(int((i * 7 + size_t(seed) * 13) % 11) - 5);
  return make(v, s);
}

// c[m, n] = sum_k a[m, k] b[k, n] for one pair of matrices.
template <class T>
std::vector<T> reference(const T* a, const T* b, int64_t m, int64_t k, int64_t n) {
  std::vector<T> c(size_t(m * n), T(0));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) c[size_t(i * n + j)] += a[i * k + p] * b[p * n + j];
  return c;
}

}  // namespace

TEST_CASE("2-d matmul by hand") {
  Tensor a = make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = make<float>({7, 8, 9, 10, 11, 12}, {3, 2});
  Tensor c = matmul(a, b);
  CHECK(c.shape() == Shape{2, 2});
  CHECK(c.dtype() == DType::f32);
  // [1 2 3]·[7 9 11] = 58, ·[8 10 12] = 64; [4 5 6]· = 139, 154.
  CHECK(vals<float>(c) == std::vector<float>{58, 64, 139, 154});
  Tensor cd = matmul(make<double>({1, 2, 3, 4, 5, 6}, {2, 3}), make<double>({7, 8, 9, 10, 11, 12}, {3, 2}));
  CHECK(vals<double>(cd) == std::vector<double>{58, 64, 139, 154});
}

TEST_CASE("1-d operands follow NumPy") {
  Tensor v = make<float>({1, 2, 3}, {3});
  Tensor m = make<float>({1, 0, 0, 1, 2, 2}, {3, 2});
  Tensor vm = matmul(v, m);  // [3] @ [3, 2] -> [2]
  CHECK(vm.shape() == Shape{2});
  CHECK(vals<float>(vm) == std::vector<float>{7, 8});
  Tensor mt = make<float>({1, 0, 2, 0, 1, 2}, {2, 3});
  Tensor mv = matmul(mt, v);  // [2, 3] @ [3] -> [2]
  CHECK(mv.shape() == Shape{2});
  CHECK(vals<float>(mv) == std::vector<float>{7, 8});
  Tensor vv = matmul(v, v);  // [3] @ [3] -> 0-d
  CHECK(vv.shape() == Shape{});
  CHECK(vals<float>(vv) == std::vector<float>{14});
  // A batch of matrices times a vector: [2, 2, 3] @ [3] -> [2, 2].
  Tensor bm = make<float>({1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1}, {2, 2, 3});
  Tensor bmv = matmul(bm, v);
  CHECK(bmv.shape() == Shape{2, 2});
  CHECK(vals<float>(bmv) == std::vector<float>{1, 2, 3, 6});
  // A vector times a batch: [2] @ [3, 2, 2] -> [3, 2].
  Tensor w = make<float>({1, 10}, {2});
  Tensor bb = make<float>({1, 2, 3, 4, 0, 1, 1, 0, 2, 2, 2, 2}, {3, 2, 2});
  Tensor wb = matmul(w, bb);
  CHECK(wb.shape() == Shape{3, 2});
  CHECK(vals<float>(wb) == std::vector<float>{31, 42, 10, 1, 22, 22});
}

TEST_CASE("batched matmul broadcasts batch dims") {
  // [2, 1, 2, 3] @ [4, 3, 2] -> [2, 4, 2, 2]; every output matrix checked
  // against the reference loop on the matrices broadcasting picks.
  Tensor a = pattern<float>({2, 1, 2, 3}, 1);
  Tensor b = pattern<float>({4, 3, 2}, 2);
  Tensor c = matmul(a, b);
  REQUIRE(c.shape() == Shape{2, 4, 2, 2});
  auto cv = vals<float>(c);
  bool ok = true;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j) {
      auto r = reference(a.data<float>() + i * 6, b.data<float>() + j * 6, 2, 3, 2);
      for (int e = 0; e < 4; ++e) ok = ok && cv[size_t((i * 4 + j) * 4 + e)] == r[size_t(e)];
    }
  CHECK(ok);

  // A batch times one shared matrix: folds into a single gemm.
  Tensor x = pattern<double>({3, 4, 5}, 3);
  Tensor w = pattern<double>({5, 2}, 4);
  Tensor y = matmul(x, w);
  REQUIRE(y.shape() == Shape{3, 4, 2});
  CHECK(vals<double>(y) == reference(x.data<double>(), w.data<double>(), 12, 5, 2));

  // One shared matrix times a batch: [5, 3] @ [2, 3, 4] -> [2, 5, 4].
  Tensor s = pattern<float>({5, 3}, 5);
  Tensor t = pattern<float>({2, 3, 4}, 6);
  Tensor st = matmul(s, t);
  REQUIRE(st.shape() == Shape{2, 5, 4});
  auto stv = vals<float>(st);
  auto r0 = reference(s.data<float>(), t.data<float>(), 5, 3, 4);
  auto r1 = reference(s.data<float>(), t.data<float>() + 12, 5, 3, 4);
  CHECK(std::vector<float>(stv.begin(), stv.begin() + 20) == r0);
  CHECK(std::vector<float>(stv.begin() + 20, stv.end()) == r1);

  // Many small products (spread over threads, one gemm each).
  Tensor p = pattern<float>({96, 16, 24}, 7);
  Tensor q = pattern<float>({96, 24, 16}, 8);
  auto pq = vals<float>(matmul(p, q));
  bool small_ok = true;
  for (int i = 0; i < 96; ++i) {
    auto r = reference(p.data<float>() + i * 384, q.data<float>() + i * 384, 16, 24, 16);
    for (int e = 0; e < 256; ++e) small_ok = small_ok && pq[size_t(i * 256 + e)] == r[size_t(e)];
  }
  CHECK(small_ok);
}

TEST_CASE("a larger product through BLAS") {
  Tensor a = pattern<float>({70, 130}, 9);
  Tensor b = pattern<float>({130, 90}, 10);
  // Small integers: every partial sum is exact in f32, so BLAS matches exactly.
  CHECK(vals<float>(matmul(a, b)) == reference(a.data<float>(), b.data<float>(), 70, 130, 90));
}

TEST_CASE("integer, bool and mixed-dtype matmul") {
  Tensor a = make<int64_t>({1, -2, 3, 4}, {2, 2});
  Tensor b = make<int64_t>({5, 6, 7, 8}, {2, 2});
  Tensor c = matmul(a, b);
  CHECK(c.dtype() == DType::i64);
  // [1 -2]·[5 7] = -9, ·[6 8] = -10; [3 4]· = 43, 50.
  CHECK(vals<int64_t>(c) == std::vector<int64_t>{-9, -10, 43, 50});
  Tensor ci = matmul(make<int32_t>({1, 2, 3}, {1, 3}), make<int32_t>({4, 5, 6}, {3, 1}));
  CHECK(ci.dtype() == DType::i32);
  CHECK(vals<int32_t>(ci) == std::vector<int32_t>{32});
  Tensor ib = matmul(pattern<int32_t>({3, 2, 5}, 1), pattern<int32_t>({5, 3}, 2));
  auto ibv = vals<int32_t>(ib);
  Tensor ia = pattern<int32_t>({3, 2, 5}, 1), iw = pattern<int32_t>({5, 3}, 2);
  CHECK(ibv == reference(ia.data<int32_t>(), iw.data<int32_t>(), 6, 5, 3));

  // Mixed dtypes promote: i64 @ f32 -> f32.
  Tensor mixed = matmul(a, make<float>({0.5f, 0, 0, 0.5f}, {2, 2}));
  CHECK(mixed.dtype() == DType::f32);
  CHECK(vals<float>(mixed) == std::vector<float>{0.5f, -1, 1.5f, 2});

  // bool: "any (a and b)".
  Tensor bl = matmul(make<bool>({true, false, false, false}, {2, 2}), make<bool>({false, true, true, true}, {2, 2}));
  CHECK(bl.dtype() == DType::boolean);
  CHECK(vals<bool>(bl) == std::vector<bool>{false, true, false, false});
}

TEST_CASE("empty products") {
  // K = 0: sums of nothing are zeros.
  Tensor z = matmul(Tensor::empty({2, 0}, DType::f32), Tensor::empty({0, 3}, DType::f32));
  CHECK(z.shape() == Shape{2, 3});
  CHECK(vals<float>(z) == std::vector<float>(6, 0.0f));
  CHECK(matmul(Tensor::empty({0, 4}, DType::f32), pattern<float>({4, 3}, 1)).shape() == Shape{0, 3});
  CHECK(matmul(Tensor::empty({5, 0, 4}, DType::i64), pattern<int64_t>({4, 3}, 1)).shape() == Shape{5, 0, 3});
}

TEST_CASE("matmul errors in SPEC §11's form") {
  Tensor x = Tensor::empty({64, 784}, DType::f32);
  Tensor w = Tensor::empty({128, 10}, DType::f32);
  CHECK_THROWS_WITH_AS(matmul(x, w), "matmul shapes do not fit: f32[64, 784] @ f32[128, 10] (784 != 128)", Error);
  CHECK_THROWS_WITH_AS(matmul(Tensor::empty({3}, DType::f32), Tensor::empty({4}, DType::f32)),
                       "matmul shapes do not fit: f32[3] @ f32[4] (3 != 4)", Error);
  CHECK_THROWS_WITH_AS(matmul(Tensor::empty({2, 3, 4}, DType::f32), Tensor::empty({5, 4, 6}, DType::f32)),
                       "matmul shapes do not fit: f32[2, 3, 4] @ f32[5, 4, 6] (batch dimension 2 != 5)", Error);
  CHECK_THROWS_WITH_AS(matmul(Tensor::empty({}, DType::f32), Tensor::empty({3}, DType::f32)),
                       "matmul: operands need at least one dimension, got f32[] @ f32[3]; use * to multiply by a scalar",
                       Error);
}

TEST_CASE("dot and outer") {
  Tensor a = make<float>({1, 2, 3}, {3});
  Tensor b = make<float>({4, -5, 6}, {3});
  Tensor d = dot(a, b);
  CHECK(d.shape() == Shape{});
  CHECK(vals<float>(d) == std::vector<float>{12});  // 4 - 10 + 18
  CHECK(vals<int64_t>(dot(make<int64_t>({2, 3}, {2}), make<int64_t>({4, 5}, {2}))) == std::vector<int64_t>{23});
  CHECK_THROWS_WITH_AS(dot(Tensor::empty({2, 3}, DType::f32), a),
                       "dot: expects two 1-d tensors, got f32[2, 3] and f32[3]; use matmul (@) for matrices and batches",
                       Error);
  CHECK_THROWS_WITH_AS(dot(a, Tensor::empty({4}, DType::f32)), "dot: shapes do not fit: f32[3] and f32[4] (3 != 4)",
                       Error);

  Tensor o = outer(make<float>({1, 2}, {2}), b);
  CHECK(o.shape() == Shape{2, 3});
  CHECK(vals<float>(o) == std::vector<float>{4, -5, 6, 8, -10, 12});
  Tensor oi = outer(make<int64_t>({3}, {1}), make<int64_t>({1, 2}, {2}));
  CHECK(vals<int64_t>(oi) == std::vector<int64_t>{3, 6});
  CHECK_THROWS_WITH_AS(outer(a, Tensor::empty({}, DType::f32)), "outer: expects two 1-d tensors, got f32[3] and f32[]",
                       Error);
}

TEST_CASE("matmul: Ctrl-C stops a product and the call reports it") {
  // The flag is set before the call, as a signal arriving mid-kernel would
  // be seen at the next slice: the kernel skips its slices, dispatch throws.
  Tensor a = full(Shape({256, 256}), 1.0), b = full(Shape({256, 256}), 1.0);
  nn::backend::request_interrupt();
  CHECK_THROWS_WITH_AS(matmul(a, b), "interrupted", nn::backend::Error);
  CHECK_FALSE(nn::backend::take_interrupt());
  CHECK(matmul(a, b).data<float>()[0] == 256.0f);  // and the next call runs
}

TEST_CASE("matmul_tn and matmul_nt: the transposed products of graph mode") {
  // a^T @ b and a @ b^T against matmul on transposed copies, f32 and f64,
  // with shapes big enough to split over threads.
  for (DType t : {DType::f32, DType::f64}) {
    Tensor a = astype(randn(Shape({70, 50})), t), b = astype(randn(Shape({70, 40})), t);
    Tensor tn = call(op("matmul_tn"), {a, b});
    Tensor want = matmul(transpose(a), b);
    REQUIRE(tn.shape() == Shape({50, 40}));
    Tensor d = astype(abs(sub(tn, want)), DType::f64);
    CHECK(max(d).item_double() < 1e-4);
    Tensor c = astype(randn(Shape({30, 40})), t);
    Tensor nt = call(op("matmul_nt"), {c, b});  // [30, 40] @ [40, 70]
    REQUIRE(nt.shape() == Shape({30, 70}));
    CHECK(max(astype(abs(sub(nt, matmul(c, transpose(b)))), DType::f64)).item_double() < 1e-4);
  }
  // Hand-worked: [[1, 2], [3, 4]]^T @ [[1], [1]] = [[4], [6]].
  Tensor a = t32({1, 2, 3, 4}, Shape({2, 2})), one = full(Shape({2, 1}), 1.0);
  Tensor r = call(op("matmul_tn"), {a, one});
  CHECK(r.data<float>()[0] == 4.0f);
  CHECK(r.data<float>()[1] == 6.0f);
  CHECK_THROWS_WITH_AS(call(op("matmul_tn"), {a, full(Shape({3, 1}), 1.0)}),
                       "matmul_tn shapes do not fit: f32[2, 2] and f32[3, 1] (2 != 3)", Error);
}

TEST_CASE("gemm's own loops, which run where OpenBLAS cannot be loaded, give the library's products") {
  // By hand: [[1, 2], [3, 4]] @ [[5, 6], [7, 8]] = [[19, 22], [43, 50]];
  // with beta = 1 onto ones, one more each.
  const double a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8};
  double c[] = {1, 1, 1, 1};
  reference_gemm(false, false, 2, 2, 2, a, 2, b, 2, 1.0, c, 2);
  CHECK(std::vector<double>(c, c + 4) == std::vector<double>{20, 23, 44, 51});
  // beta = 0 ignores what C held, NaN included. a stored [k, m] (ta): aᵀ @ b
  // = [[1, 3], [2, 4]] @ [[5, 6], [7, 8]] = [[26, 30], [38, 44]].
  double d[] = {NAN, NAN, NAN, NAN};
  reference_gemm(true, false, 2, 2, 2, a, 2, b, 2, 0.0, d, 2);
  CHECK(std::vector<double>(d, d + 4) == std::vector<double>{26, 30, 38, 44});
  // Every transpose and beta against the library (small integers: exact).
  const int64_t m = 5, n = 7, k = 3;
  std::vector<float> x(size_t(m * k)), y(size_t(k * n));
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i * 5 % 7) - 3);
  for (size_t i = 0; i < y.size(); ++i) y[i] = float(int(i * 3 % 5) - 2);
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (float beta : {0.0f, 1.0f}) {
        const int64_t lda = ta ? m : k, ldb = tb ? k : n;
        std::vector<float> mine(size_t(m * n), 2.0f), library(size_t(m * n), 2.0f);
        reference_gemm(ta, tb, m, n, k, x.data(), lda, y.data(), ldb, beta, mine.data(), n);
        gemm(ta, tb, m, n, k, x.data(), lda, y.data(), ldb, beta, library.data(), n);
        CHECK(mine == library);
      }
}

TEST_CASE("matrix-vector products over a long k: every transpose and beta, and sums as accurate as a square product's") {
  // Small integers are exact in any order: against gemm's own loops, for a
  // row vector (m = 1) and a column vector (n = 1), k over several pieces.
  const int64_t k = 1500;
  for (auto [m, n] : {std::pair<int64_t, int64_t>{1, 5}, {4, 1}, {1, 1}})
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (float beta : {0.0f, 2.0f}) {
          INFO("m=", m, " n=", n, " ta=", ta, " tb=", tb, " beta=", beta);
          std::vector<float> x(size_t(m * k)), y(size_t(k * n));
          for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i * 5 % 7) - 3);
          for (size_t i = 0; i < y.size(); ++i) y[i] = float(int(i * 3 % 5) - 2);
          const int64_t lda = ta ? m : k, ldb = tb ? k : n;
          // beta = 0 ignores what C held, NaN included.
          std::vector<float> mine(size_t(m * n), beta == 0 ? NAN : 3.0f), got = mine;
          reference_gemm(ta, tb, m, n, k, x.data(), lda, y.data(), ldb, beta, mine.data(), n);
          gemm(ta, tb, m, n, k, x.data(), lda, y.data(), ldb, beta, got.data(), n);
          CHECK(mine == got);
        }
  // 100,000 terms of 0.1f: exactly 10000.000149 (0.1f is 0.100000001490116);
  // one running sum in f32 gave 9998.557.
  const Tensor tenth = full({100000}, 0.1, DType::f32);
  const double exact = 100000 * double(0.1f);
  CHECK(dot(tenth, ones({100000})).item_double() == doctest::Approx(exact).epsilon(1e-5));
  for (float v : vals<float>(matmul(reshape(tenth, {1, 100000}), ones({100000, 3}))))
    CHECK(v == doctest::Approx(exact).epsilon(1e-5));
}
