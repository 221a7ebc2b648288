// CUDA kernels of the creation ops (backend/ops/creation.cpp). The random
// ops reserve their values from the one global Philox generator, as the CPU
// kernels do, and compute value j from counter offset + j with the same
// formulas: under one seed a GPU draws the CPU's numbers.
#include <cstring>

#include "backend/cuda/cuda_device.h"
#include "backend/cuda/elementwise_kernels.h"
#include "backend/cuda/register.h"
#include "backend/op_registry.h"
#include "backend/ops.h"
#include "backend/philox.h"

namespace nn::backend::cuda {
namespace {

void run_fill(const char* name, FillOp op, Tensor& out, FillLaunch l) {
  CudaDevice& dev = device_of(out);
  dev.activate();
  l.out = out.raw_data();
  l.dtype = out.dtype();
  l.n = out.numel();
  if (!fill_launch(op, l, dev.stream()))
    throw Error(std::string(name) + ": no CUDA kernel for " + std::string(dtype_name(out.dtype())) + " tensors yet");
  check_launch(name);
}

void full(std::span<const Tensor>, std::span<Tensor> out, const Attrs& a) {
  FillLaunch l;
  // The value converted as the CPU converts it, f16 and bf16 included.
  const DType t = out[0].dtype();
  const Tensor v = a.has("int_value") ? scalar_int(a.get<int64_t>("int_value"), t) : scalar(a.get<double>("value"), t);
  std::memcpy(&l.bits, v.raw_data(), dtype_size(t));
  run_fill("full", FillOp::full, out[0], l);
}

void arange(std::span<const Tensor>, std::span<Tensor> out, const Attrs& a) {
  FillLaunch l;
  l.start = a.get<double>("start");
  l.step = a.get<double>("step");
  run_fill("arange", FillOp::arange, out[0], l);
}

void linspace(std::span<const Tensor>, std::span<Tensor> out, const Attrs& a) {
  FillLaunch l;
  l.start = a.get<double>("start");
  l.stop = a.get<double>("stop");
  const int64_t n = out[0].numel();
  l.step = n > 1 ? (l.stop - l.start) / double(n - 1) : 0.0;
  run_fill("linspace", FillOp::linspace, out[0], l);
}

void eye(std::span<const Tensor>, std::span<Tensor> out, const Attrs&) {
  FillLaunch l;
  l.cols = out[0].shape()[0];
  run_fill("eye", FillOp::eye, out[0], l);
}

FillLaunch draw(const Tensor& out) {
  const PhiloxDraw d = philox_reserve(uint64_t(out.numel()));
  FillLaunch l;
  l.seed = d.seed;
  l.offset = d.offset;
  return l;
}

void rand(std::span<const Tensor>, std::span<Tensor> out, const Attrs&) {
  run_fill("rand", FillOp::rand, out[0], draw(out[0]));
}

void randn(std::span<const Tensor>, std::span<Tensor> out, const Attrs&) {
  run_fill("randn", FillOp::randn, out[0], draw(out[0]));
}

void randint(std::span<const Tensor>, std::span<Tensor> out, const Attrs& a) {
  FillLaunch l = draw(out[0]);
  l.lo = a.get<int64_t>("lo");
  l.range = uint64_t(a.get<int64_t>("hi")) - uint64_t(l.lo);
  run_fill("randint", FillOp::randint, out[0], l);
}

}  // namespace

void register_creation(Registry& r) {
  r.edit(OpId::full).cuda = full;
  r.edit(OpId::arange).cuda = arange;
  r.edit(OpId::linspace).cuda = linspace;
  r.edit(OpId::eye).cuda = eye;
  r.edit(OpId::rand).cuda = rand;
  r.edit(OpId::randn).cuda = randn;
  r.edit(OpId::randint).cuda = randint;
}

}  // namespace nn::backend::cuda
