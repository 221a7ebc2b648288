// The all-reduce through shared memory areas (comm/shared_memory_all_reduce.h),
// with threads standing for ranks over areas in one allocation: sums, means,
// maxima and minima against values worked out by formula; buffers split
// into pieces by a small area; more requests in flight than the header
// remembers; waits out of start order; every rank holding the same bits;
// and buffers in the areas reduced in place, beside ranks that copy.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "backend/comm/shared_memory_all_reduce.h"

using namespace nn::backend;
using namespace nn::backend::comm;

namespace {

// Runs body(rank, reducer) on `ranks` threads over areas of area_bytes.
void on_ranks(int ranks, size_t area_bytes, const std::function<void(int, SharedMemoryAllReduce&)>& body) {
  std::vector<std::unique_ptr<uint64_t[]>> memory;
  std::vector<void*> areas;
  for (int k = 0; k < ranks; ++k) {
    memory.emplace_back(new uint64_t[area_bytes / 8]);
    areas.push_back(memory.back().get());
    SharedMemoryAllReduce::init_area(areas.back());
  }
  std::vector<std::thread> threads;
  for (int k = 0; k < ranks; ++k)
    threads.emplace_back([&, k] {
      SharedMemoryAllReduce reducer(areas, area_bytes, k);
      body(k, reducer);
    });
  for (std::thread& t : threads) t.join();
}

// Rank r's element i.
float value(int r, int64_t i) { return float((i % 97) * (r + 1)) * 0.25f - float(r); }

}  // namespace

TEST_CASE("shared memory all-reduce: sum and mean of floats on 2 and 3 ranks") {
  for (int ranks : {2, 3}) {
    for (int64_t n : {int64_t(1), int64_t(17), int64_t(1000), int64_t(3001)}) {  // 3001: chunks of several tiles
      std::vector<std::vector<float>> sums(static_cast<size_t>(ranks)), means(static_cast<size_t>(ranks));
      on_ranks(ranks, SharedMemoryAllReduce::kHeaderBytes + (1 << 16), [&](int r, SharedMemoryAllReduce& ar) {
        std::vector<float> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) a[size_t(i)] = b[size_t(i)] = value(r, i);
        const Request ra = ar.start(a.data(), n, DType::f32, ReduceOp::sum);
        const Request rb = ar.start(b.data(), n, DType::f32, ReduceOp::mean);
        ar.wait(rb);  // out of start order: the earlier one completes too
        ar.wait(ra);
        CHECK(ar.idle());
        sums[size_t(r)] = a;
        means[size_t(r)] = b;
      });
      for (int64_t i = 0; i < n; ++i) {
        float sum = 0;
        for (int r = 0; r < ranks; ++r) sum += value(r, i);
        CHECK(sums[0][size_t(i)] == sum);  // in rank order: the same roundings
        CHECK(means[0][size_t(i)] == sum / float(ranks));
      }
      for (int r = 1; r < ranks; ++r) {  // the same bits on every rank
        CHECK(sums[size_t(r)] == sums[0]);
        CHECK(means[size_t(r)] == means[0]);
      }
    }
  }
}

TEST_CASE("shared memory all-reduce: max and min of integers and booleans; integer mean stays the sum") {
  std::vector<std::vector<int64_t>> got(3);
  std::vector<std::vector<uint8_t>> flags(3);
  on_ranks(3, SharedMemoryAllReduce::kHeaderBytes + 4096, [&](int r, SharedMemoryAllReduce& ar) {
    std::vector<int64_t> mx{r, -r, 5}, mn{r, -r, 5}, mean{r + 1, 10};
    std::vector<int32_t> i32{r * 3, 7};
    std::vector<uint8_t> any{uint8_t(r == 1), 0}, all{uint8_t(r != 2), 1};
    ar.wait(ar.start(mx.data(), 3, DType::i64, ReduceOp::max));
    ar.wait(ar.start(mn.data(), 3, DType::i64, ReduceOp::min));
    ar.wait(ar.start(mean.data(), 2, DType::i64, ReduceOp::mean));
    ar.wait(ar.start(i32.data(), 2, DType::i32, ReduceOp::sum));
    ar.wait(ar.start(any.data(), 2, DType::boolean, ReduceOp::max));
    ar.wait(ar.start(all.data(), 2, DType::boolean, ReduceOp::min));
    got[size_t(r)] = {mx[0], mx[1], mx[2], mn[0], mn[1], mn[2], mean[0], mean[1], i32[0], i32[1]};
    flags[size_t(r)] = {any[0], any[1], all[0], all[1]};
  });
  for (int r = 0; r < 3; ++r) {
    CHECK(got[size_t(r)] == std::vector<int64_t>{2, 0, 5, 0, -2, 5, 6, 30, 9, 21});
    CHECK(flags[size_t(r)] == std::vector<uint8_t>{1, 0, 0, 1});
  }
  CHECK(SharedMemoryAllReduce::supports(DType::f32, ReduceOp::mean));
  CHECK_FALSE(SharedMemoryAllReduce::supports(DType::boolean, ReduceOp::sum));
  CHECK_FALSE(SharedMemoryAllReduce::supports(DType::f16, ReduceOp::sum));
}

TEST_CASE("shared memory all-reduce: a buffer larger than the area goes in pieces, and many requests reuse it") {
  // A payload of 8 KB: pieces of 2 KB (512 floats); 100 requests in flight
  // pass the 64 the header remembers, so starting waits for the peers.
  const int64_t n = 5000;
  const int requests = 100;
  std::vector<std::vector<float>> big(2);
  std::vector<std::vector<float>> small(2);
  on_ranks(2, SharedMemoryAllReduce::kHeaderBytes + 8192, [&](int r, SharedMemoryAllReduce& ar) {
    std::vector<float> b(n);
    for (int64_t i = 0; i < n; ++i) b[size_t(i)] = value(r, i);
    ar.wait(ar.start(b.data(), n, DType::f32, ReduceOp::sum));
    big[size_t(r)] = b;
    std::vector<float> s(requests * 3);
    std::vector<Request> ids;
    for (int q = 0; q < requests; ++q) {
      for (int j = 0; j < 3; ++j) s[size_t(q * 3 + j)] = float(q * 10 + j + r * 1000);
      ids.push_back(ar.start(&s[size_t(q * 3)], 3, DType::f32, ReduceOp::sum));
    }
    for (Request id : ids) ar.wait(id);
    small[size_t(r)] = s;
  });
  for (int64_t i = 0; i < n; ++i) CHECK(big[0][size_t(i)] == value(0, i) + value(1, i));
  CHECK(big[1] == big[0]);
  for (int q = 0; q < requests; ++q)
    for (int j = 0; j < 3; ++j) CHECK(small[1][size_t(q * 3 + j)] == float(2 * (q * 10 + j) + 1000));
  CHECK(small[0] == small[1]);
}

TEST_CASE("shared memory all-reduce: buffers in the area are reduced in place, beside ranks that copy") {
  // Every rank in place, then rank 0 alone in place. After each wait the
  // rank overwrites its buffer at once, as a graph reuses its arena: a peer
  // still reading it would get the wrong sums.
  for (int ranks : {2, 3}) {
    for (bool all_in_place : {true, false}) {
      const int64_t n = 1000;
      const int rounds = 40;
      std::vector<int> wrong(static_cast<size_t>(ranks), 0);
      on_ranks(ranks, SharedMemoryAllReduce::kHeaderBytes + (1 << 16), [&](int r, SharedMemoryAllReduce& ar) {
        std::vector<float> own(n);
        const bool in_place = all_in_place || r == 0;
        float* b = in_place ? static_cast<float*>(ar.take(n * sizeof(float))) : own.data();
        REQUIRE(b != nullptr);
        for (int q = 0; q < rounds; ++q) {
          for (int64_t i = 0; i < n; ++i) b[i] = value(r, i) + float(q);
          ar.wait(ar.start(b, n, DType::f32, q % 2 ? ReduceOp::mean : ReduceOp::sum));
          for (int64_t i = 0; i < n; ++i) {
            float sum = 0;
            for (int k = 0; k < ranks; ++k) sum += value(k, i) + float(q);
            if (b[i] != (q % 2 ? sum / float(ranks) : sum)) ++wrong[size_t(r)];
          }
          std::fill(b, b + n, -1.0f);
        }
        if (in_place) ar.give_back(b);
      });
      for (int r = 0; r < ranks; ++r) CHECK(wrong[size_t(r)] == 0);
    }
  }
}

TEST_CASE("shared memory all-reduce: take gives regions of the area apart, null when none is free") {
  on_ranks(2, SharedMemoryAllReduce::kHeaderBytes + 4096, [&](int, SharedMemoryAllReduce& ar) {
    void* a = ar.take(2000);
    void* b = ar.take(2000);
    REQUIRE(a != nullptr);
    REQUIRE(b != nullptr);
    CHECK(static_cast<char*>(b) - static_cast<char*>(a) >= 2000);  // no overlap
    CHECK(ar.take(200) == nullptr);  // 4096 of payload, 4096 taken (each rounded to 64 bytes)
    ar.give_back(a);
    CHECK(ar.take(1000) == a);  // the lowest free offset
  });
}
