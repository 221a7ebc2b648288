// CUDA kernels of softmax, log_softmax, their backward ops, the softmax
// cross-entropy loss with its backward, and one_hot
// (backend/ops/nn_softmax.cpp). A label outside [0, C) is reported as the
// CPU kernels word it (the check waits for the GPU).
#include "backend/cuda/copy_kernels.h"
#include "backend/cuda/cuda_device.h"
#include "backend/cuda/nn_kernels.h"
#include "backend/cuda/register.h"
#include "backend/op_registry.h"

namespace nn::backend::cuda {
namespace {

AxisLaunch axis_launch(const Tensor& x, const Attrs& attrs) {
  int axis = 0;
  normalize_axis(attrs.get<int64_t>("axis"), x.ndim(), axis);
  AxisLaunch g;
  for (int d = 0; d < x.ndim(); ++d) (d < axis ? g.outer : d == axis ? g.n : g.inner) *= x.shape()[d];
  g.dtype = x.dtype();
  return g;
}

template <bool Log>
void softmax(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  CudaDevice& dev = call_device(in, out);
  softmax_launch(in[0].raw_data(), out[0].raw_data(), axis_launch(in[0], attrs), Log, dev.stream());
  check_launch(Log ? "log_softmax" : "softmax");
}

template <bool Log>
void softmax_backward(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  CudaDevice& dev = call_device(in, out);
  softmax_backward_launch(in[0].raw_data(), in[1].raw_data(), out[0].raw_data(), axis_launch(in[1], attrs), Log,
                          dev.stream());
  check_launch(Log ? "log_softmax_backward" : "softmax_backward");
}

// The first label outside [0, classes), read back once the flag says there is one.
[[noreturn]] void bad_label(CudaDevice& dev, const Tensor& ids, int64_t classes, const char* op, const char* what) {
  Tensor host = Tensor::empty(ids.shape(), ids.dtype());
  dev.copy_to_host(host.raw_data(), ids.raw_data(), ids.nbytes());
  int64_t bad = 0;
  for (int64_t i = 0; i < host.numel(); ++i) {
    const int64_t id = ids.dtype() == DType::i32 ? int64_t(host.data<int32_t>()[i]) : host.data<int64_t>()[i];
    if (id < 0 || id >= classes) {
      bad = id;
      break;
    }
  }
  throw Error(std::string(op) + ": " + what + " " + std::to_string(bad) + " is out of range for " +
              std::to_string(classes) + " classes");
}

CeLaunch ce_launch_of(const Tensor& logits, const Tensor& labels, int* flag) {
  CeLaunch l;
  l.logits = logits.raw_data();
  l.labels = labels.raw_data();
  l.ids = is_integral(labels.dtype());
  l.label_dtype = labels.dtype();
  l.dtype = logits.dtype();
  l.n = logits.shape()[0];
  l.c = logits.shape()[1];
  l.flag = flag;
  return l;
}

void ce(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  CudaDevice& dev = call_device(in, out);
  const Tensor labels = on_device(in[1], dev);
  Tensor flag = new_flag(dev);
  CeLaunch l = ce_launch_of(in[0], labels, static_cast<int*>(flag.raw_data()));
  Tensor rows = scratch(dev, size_t(std::max<int64_t>(l.n, 1)) * sizeof(double));
  ce_launch(l, static_cast<double*>(rows.raw_data()), out[0].raw_data(), dev.stream());
  check_launch("softmax_cross_entropy");
  if (l.ids && read_flag(dev, flag)) bad_label(dev, labels, l.c, "softmax_cross_entropy", "label");
}

void ce_backward(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  CudaDevice& dev = call_device(in, out);
  const Tensor& g = in[0];
  const Tensor labels = on_device(in[2], dev);
  Tensor flag = new_flag(dev);
  CeLaunch l = ce_launch_of(in[1], labels, static_cast<int*>(flag.raw_data()));
  const bool host_g = g.device()->type() == DeviceType::cpu;
  ce_backward_launch(l, host_g ? nullptr : g.raw_data(), host_g ? g.item_double() : 0.0, out[0].raw_data(),
                     dev.stream());
  check_launch("softmax_cross_entropy_backward");
  if (l.ids && read_flag(dev, flag)) bad_label(dev, labels, l.c, "softmax_cross_entropy", "label");
}

void one_hot(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  CudaDevice& dev = call_device(in, out);
  const Tensor ids = on_device(in[0], dev);
  const int64_t n = attrs.get<int64_t>("n");
  Tensor flag = new_flag(dev);
  one_hot_launch(ids.raw_data(), ids.dtype(), out[0].data<float>(), ids.numel(), n,
                 static_cast<int*>(flag.raw_data()), dev.stream());
  check_launch("one_hot");
  if (read_flag(dev, flag)) bad_label(dev, ids, n, "one_hot", "id");
}

}  // namespace

void register_nn_softmax(Registry& r) {
  r.edit(OpId::softmax).cuda = softmax<false>;
  r.edit(OpId::log_softmax).cuda = softmax<true>;
  r.edit(OpId::softmax_backward).cuda = softmax_backward<false>;
  r.edit(OpId::log_softmax_backward).cuda = softmax_backward<true>;
  r.edit(OpId::softmax_cross_entropy).cuda = ce;
  r.edit(OpId::softmax_cross_entropy_backward).cuda = ce_backward;
  r.edit(OpId::one_hot).cuda = one_hot;
}

}  // namespace nn::backend::cuda
