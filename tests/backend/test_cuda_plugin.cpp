// The CUDA backend as a plugin (backend/cuda_plugin_loader.cpp): nothing of
// CUDA is mapped until a GPU is asked for; asking loads the plugin, which
// fills the registry's CUDA kernels; switches set before loading hold after.
// Without the backend (its switches are then fixed), or where the plugin
// cannot load here, it says so.
#include <doctest/doctest.h>

#include "backend/cuda_backend.h"
#include "backend/device.h"
#include "backend/ops.h"
#include "backend/op_registry.h"
#include "mapped_libraries.h"

using namespace nn::backend;
using nntest::mapped_cuda_libraries;
using nntest::mapped_libraries;

namespace {
bool has_cuda_kernel(const char* name) { return op(name).cuda != nullptr; }
}  // namespace

TEST_CASE("the CUDA backend is loaded on first use, with the switches set before") {
  // CPU work maps no CUDA library (unless an earlier test asked for a GPU).
  Tensor x = matmul(ones(Shape{1, 8}, DType::f32), ones(Shape{8, 1}, DType::f32));
  CHECK(x.item_double() == 8);
  const bool loaded_before = mapped_libraries({"libnn_cuda"}).size() > 0;
  if (!loaded_before) {
    CHECK(mapped_cuda_libraries().empty());
    CHECK_FALSE(has_cuda_kernel("add"));
  }
  if (!cuda_built()) {
    MESSAGE("no CUDA plugin: " << device_unavailable_reason("cuda"));
    return;
  }
  const bool tf32_before = gpu_tf32();
  set_gpu_tf32(!tf32_before);
  CHECK(gpu_tf32() == !tf32_before);

  find_device("cuda");  // loads the plugin (no GPU is needed for that)
  if (!cuda_load_error().empty()) {
    MESSAGE("CUDA plugin not loaded: " << device_unavailable_reason("cuda"));
    set_gpu_tf32(tf32_before);
    return;
  }
  CHECK(mapped_libraries({"libnn_cuda.so"}).size() == 1);
  CHECK(mapped_libraries({"libcudart"}).size() == 1);
  CHECK(has_cuda_kernel("add"));
  CHECK(has_cuda_kernel("matmul"));
  CHECK(gpu_tf32() == !tf32_before);  // the plugin took the value set before it loaded
  set_gpu_tf32(tf32_before);
  CHECK(gpu_tf32() == tf32_before);
}
