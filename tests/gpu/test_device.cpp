// The CUDA device itself: finding it (and the reason when there is none),
// copies both ways, host numbers joining GPU operands, the diagnostic for
// operands on two devices, the caching pool's recycling counters, and
// running out of GPU memory.
#include "gpu/gpu_test_util.h"

using namespace nngpu;

TEST_CASE("a missing GPU is named with a reason, never a crash") {
  CHECK(find_device("cpu") == cpu_device());
  CHECK(find_device("gpu") == nullptr);
  CHECK(device_unavailable_reason("gpu") == "a device is cpu, cuda or cuda:N");
  CHECK(find_device("cuda:x") == nullptr);
  if (!gpu()) {
    CHECK(find_device("cuda:0") == nullptr);
    CHECK_FALSE(device_unavailable_reason("cuda").empty());
    return;
  }
  CHECK(find_device("cuda:0") == gpu());
  CHECK(gpu()->name() == "cuda:0");
  CHECK(find_device("cuda:4096") == nullptr);
  CHECK(device_unavailable_reason("cuda:4096").find("CUDA GPU") != std::string::npos);
}

TEST_CASE("copies to the GPU and back keep every byte, for every dtype") {
  NN_NEED_GPU();
  for (DType d : {DType::f32, DType::f64, DType::i32, DType::i64, DType::boolean}) {
    Tensor x = random({3, 5, 7}, -100, 100, d);
    Tensor y = on(gpu(), x);
    CHECK(y.device() == gpu());
    check_same(x, y, 0, 0, std::string(dtype_name(d)));
  }
  // A 1-element tensor read as a number waits for the GPU.
  Tensor s = on(gpu(), from_doubles({2.5}, Shape{}, DType::f32));
  CHECK(s.item_double() == 2.5);
  // Empty tensors move too.
  CHECK(on(gpu(), zeros({0, 3})).numel() == 0);
}

TEST_CASE("host numbers join GPU operands; two devices are a diagnostic naming both") {
  NN_NEED_GPU();
  Tensor x = on(gpu(), from_doubles({1, 2, 3}, Shape{3}, DType::f32));
  Tensor y = mul(x, scalar(2.5, DType::f64, /*weak=*/true));
  CHECK(y.device() == gpu());
  CHECK(y.dtype() == DType::f32);
  check_same(from_doubles({2.5, 5, 7.5}, Shape{3}, DType::f32), y, 0, 0, "x * 2.5");
  // A strong 0-d CPU tensor joins too, and promotes as a tensor.
  Tensor z = add(x, scalar(1.0, DType::f64));
  CHECK(z.device() == gpu());
  CHECK(z.dtype() == DType::f64);
  const std::string e = error_of([&] { add(x, from_doubles({1, 2, 3}, Shape{3}, DType::f32)); });
  CHECK(e.find("add: operands are on different devices") != std::string::npos);
  CHECK(e.find("f32[3] on cuda:0") != std::string::npos);
  CHECK(e.find("f32[3] on cpu") != std::string::npos);
}

TEST_CASE("the GPU pool hands a freed block out again without a new allocation") {
  NN_NEED_GPU();
  gpu()->synchronize();
  const MemoryStats before = gpu()->stats();
  {
    Tensor a = on(gpu(), zeros({1000, 1000}));  // 4 MB: a class of its own
    CHECK(gpu()->stats().current >= before.current + 4000000);
  }
  const MemoryStats freed = gpu()->stats();
  CHECK(freed.current == before.current);
  CHECK(freed.cached >= 4000000);
  {
    DeviceScope scope(gpu());
    Tensor b = zeros({1000, 1000});
    b.raw_data();
    const MemoryStats again = gpu()->stats();
    CHECK(again.reuses == freed.reuses + 1);
    CHECK(again.allocations == freed.allocations);
  }
  CHECK(gpu()->stats().current == before.current);
}

TEST_CASE("running out of GPU memory names the op, the bytes and the device; the pool works after") {
  NN_NEED_GPU();
  DeviceScope scope(gpu());
  Tensor keep = zeros({256, 256});  // something cached and in use
  const std::string e = error_of([&] { zeros({int64_t(1) << 40}); });  // 4 TiB
  CHECK(e.find("full: out of memory on cuda:0") != std::string::npos);
  CHECK(e.find("asked for 4096.00 GB") != std::string::npos);
  CHECK(e.find("in use") != std::string::npos);
  // The failed request left nothing behind, and the pool still serves.
  Tensor after = add(keep, scalar(1.0, DType::f64, true));
  CHECK(sum(after).item_double() == 65536.0);
}
