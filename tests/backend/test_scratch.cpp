// Scratch scopes and exact-size blocks: blocks made inside a scope take
// their memory from its range (64-byte aligned, bottom up) while it has
// room, others (made before the scope, too large, made on another thread,
// made after it closed) from the pool; an exact block is counted at its
// size rounded to 512 bytes and found again at that size.
#include <doctest/doctest.h>

#include <thread>

#include "backend/device.h"
#include "backend/scratch.h"
#include "backend/tensor.h"

using namespace nn::backend;

namespace {

const char* base_of(const BlockPtr& b) { return static_cast<const char*>(b->data()); }
const char* data_of(Tensor& t) { return static_cast<const char*>(t.raw_data()); }

}  // namespace

TEST_CASE("scratch: a kernel's temporaries come from the scope's range while it has room") {
  CachingPool& pool = cpu_device()->pool();
  BlockPtr arena = make_ref<Block>(cpu_device(), 4096);
  const char* base = base_of(arena);
  Tensor before = Tensor::empty(Shape({10}), DType::f32);  // made outside: never scratch
  const size_t in_use = pool.stats().current;
  {
    ScratchScope scope(arena, 1000, 2000);  // [1000, 3000)
    Tensor a = Tensor::empty(Shape({100}), DType::f32);  // 400 bytes at 1024 (aligned)
    Tensor b = Tensor::empty(Shape({10}), DType::f64);   // 80 bytes at 1472
    CHECK(data_of(a) == base + 1024);
    CHECK(data_of(b) == base + 1472);
    Tensor big = Tensor::empty(Shape({1000}), DType::f32);  // 4000 bytes: no room left
    CHECK(data_of(big) != nullptr);
    CHECK((data_of(big) < base || data_of(big) >= base + 4096));
    CHECK(pool.stats().current == in_use + CachingPool::size_class(4000));  // only `big` from the pool
    data_of(before);  // first written inside the scope, but made before it
    CHECK((data_of(before) < base || data_of(before) >= base + 4096));
    const char* other = nullptr;
    std::thread([&] {
      Tensor t = Tensor::empty(Shape({4}), DType::f32);  // another thread: the pool
      other = data_of(t);
    }).join();
    CHECK((other < base || other >= base + 4096));
  }
  Tensor after = Tensor::empty(Shape({4}), DType::f32);
  CHECK((data_of(after) < base || data_of(after) >= base + 4096));
}

TEST_CASE("scratch: a scope serves only its own device") {
  BlockPtr arena = make_ref<Block>(cpu_device(), 1024);
  ScratchScope scope(arena, 0, 1024);
  CHECK(ScratchScope::open_for(cpu_device()) == &scope);
  CHECK(ScratchScope::open_for(nullptr) == nullptr);
}

TEST_CASE("pool: an exact block is counted at its size rounded to 512 bytes and found again") {
  CachingPool& pool = cpu_device()->pool();
  const size_t bytes = (size_t(5) << 20) + 1000;  // 5 MiB and a bit: its size class is 6 MiB
  const size_t start = pool.stats().current;
  {
    BlockPtr b = make_ref<Block>(cpu_device(), bytes);
    b->set_exact();
    b->data();
    CHECK(pool.stats().current == start + (size_t(5) << 20) + 1024);
  }
  const size_t reuses = pool.stats().reuses;
  BlockPtr again = make_ref<Block>(cpu_device(), bytes);
  again->set_exact();
  again->data();
  CHECK(pool.stats().reuses == reuses + 1);
  CHECK(CachingPool::size_of(bytes, false) == size_t(6) << 20);
}
