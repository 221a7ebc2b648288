// Building and running elementwise launches (elementwise_launch.h).
#include "backend/cuda/elementwise_launch.h"

#include <cstring>

#include "backend/cuda/broadcast_dims.h"
#include "backend/half.h"
#include "backend/ops/elementwise.h"

namespace nn::backend::cuda {
static_assert(kDims == kMaxDims, "the launch interface holds as many dims as a Shape");

namespace {

bool is_host_number(const Tensor& t) { return t.device()->type() == DeviceType::cpu && t.numel() == 1; }

// A host number's bits as the kernel reads it: converted to `as` here (to
// float for f16 and bf16, which the kernels compute in).
uint64_t host_bits(const Tensor& t, DType as) {
  uint64_t bits = 0;
  visit_dtype(is_half_float(as) ? DType::f32 : as, [&]<class T>() {
    T v = ew::read_as<T>(t);
    std::memcpy(&bits, &v, sizeof(T));
  });
  return bits;
}

}  // namespace

void run_elementwise(const char* name, OpId op, DType compute, Tensor& out, std::span<const Tensor> in,
                     std::initializer_list<DType> read_as, math::EwParams params) {
  CudaDevice& dev = device_of(out);
  dev.activate();
  EwLaunch l;
  l.out = out.raw_data();
  l.n = out.numel();
  l.count = int(in.size());
  l.params = params;
  if (l.n == 0) return;
  const BroadcastDims dims = broadcast_dims(out.shape(), in);
  l.nd = dims.nd;
  for (int d = 0; d < l.nd; ++d) {
    l.size[d] = dims.size[d];
    for (size_t k = 0; k < in.size(); ++k) l.in[k].stride[d] = dims.stride[k][size_t(d)];
  }
  l.index32 = make_dividers(l.nd, l.size, l.n, l.div);
  const DType* as = read_as.begin();
  for (size_t k = 0; k < in.size(); ++k) {
    EwInput& e = l.in[k];
    const Tensor& t = in[k];
    if (is_host_number(t)) {
      e.data = nullptr;
      e.bits = host_bits(t, as[k]);
      continue;
    }
    if (t.device() != &dev)
      throw Error(std::string(name) + ": an operand is on " + t.device()->name() + ", the result on " + dev.name());
    e.data = t.raw_data();
    e.dtype = t.dtype();
    e.flat = t.shape() == out.shape();
  }
  Tensor flag;
  const bool integer_checks = (op == OpId::pow || op == OpId::mod || op == OpId::floordiv) && !is_floating(compute);
  if (integer_checks) {
    flag = new_flag(dev);
    l.params.flag = static_cast<int*>(flag.raw_data());
  }
  if (!ew_launch(op, compute, out.dtype(), l, dev.stream()))
    throw Error(std::string(name) + ": no CUDA kernel for " + std::string(dtype_name(compute)) + " tensors yet");
  check_launch(name);
  if (integer_checks && read_flag(dev, flag)) {
    if (op == OpId::mod) throw Error("integer modulo by zero");
    if (op == OpId::floordiv) throw Error("integer floor division by zero");
    throw Error("pow: integers to negative integer powers are not allowed");
  }
}

}  // namespace nn::backend::cuda
