// Tensor handles: creation, views and single-element reads.
#include "backend/tensor.h"

#include <optional>

#include "backend/half.h"

#include "backend/error.h"

namespace nn::backend {

std::string TensorType::str() const {
  return std::string(dtype_name(dtype)) + shape.str();
}

namespace {
// The bytes of a tensor of this shape and dtype; none when they (or its
// element count) would not fit in the address space (a quarter of it, so
// that offsets and counts stay far from wrapping).
std::optional<size_t> byte_size(const Shape& shape, DType dtype) {
  size_t bytes = dtype_size(dtype);
  for (int64_t d : shape) {
    if (d != 0 && bytes > SIZE_MAX / 4 / size_t(d)) return std::nullopt;
    bytes *= size_t(d);
  }
  return bytes;
}
}  // namespace

Tensor Tensor::empty(const Shape& shape, DType dtype, Device* device) {
  if (!device) device = cpu_device();
  for (int64_t d : shape)
    if (d < 0) throw Error("negative dimension " + std::to_string(d) + " in shape " + shape.str());
  // Guard the byte count against overflow before anything is allocated.
  const std::optional<size_t> bytes = byte_size(shape, dtype);
  if (!bytes)
    throw OutOfMemory("out of memory on " + device->name() + ": a tensor of shape " + shape.str() +
                          " would not fit in the address space",
                      SIZE_MAX);
  Tensor t;
  t.impl_ = make_ref<TensorImpl>();
  t.impl_->block = make_ref<Block>(device, *bytes);
  t.impl_->shape = shape;
  t.impl_->dtype = dtype;
  return t;
}

Tensor Tensor::from_blob(void* data, const Shape& shape, DType dtype, Device* device) {
  if (!device) device = cpu_device();
  for (int64_t d : shape)
    if (d < 0) throw Error("negative dimension " + std::to_string(d) + " in shape " + shape.str());
  // The element count must not wrap: no memory of the caller's can hold more.
  const std::optional<size_t> bytes = byte_size(shape, dtype);
  if (!bytes) throw Error("a tensor of shape " + shape.str() + " would not fit in the address space");
  Tensor t;
  t.impl_ = make_ref<TensorImpl>();
  t.impl_->block = make_ref<Block>(device, data, *bytes);
  t.impl_->shape = shape;
  t.impl_->dtype = dtype;
  return t;
}

Tensor Tensor::in_block(const BlockPtr& block, size_t offset, const Shape& shape, DType dtype) {
  const size_t bytes = size_t(shape.numel()) * dtype_size(dtype);
  if (offset > block->bytes() || bytes > block->bytes() - offset)
    throw Error("internal: a tensor of " + std::to_string(bytes) + " bytes at offset " + std::to_string(offset) +
                " does not fit a block of " + std::to_string(block->bytes()) + " bytes");
  Tensor t;
  t.impl_ = make_ref<TensorImpl>();
  t.impl_->block = block;
  t.impl_->offset = offset;
  t.impl_->shape = shape;
  t.impl_->dtype = dtype;
  return t;
}

Tensor Tensor::traced(const TensorType& type, Ref<TraceMark> mark, uint32_t value) {
  Tensor t;
  t.impl_ = make_ref<TensorImpl>();
  t.impl_->block = make_ref<Block>(type.device ? type.device : cpu_device(),
                                   size_t(type.shape.numel()) * dtype_size(type.dtype), std::move(mark), value);
  t.impl_->shape = type.shape;
  t.impl_->dtype = type.dtype;
  t.impl_->weak = type.weak;
  return t;
}

void Block::allocate() {
  if (mark_) throw Error(mark_->misuse(trace_value_));
  if (scratch_) {
    ptr_ = take_scratch(device_, bytes_);
    external_ = ptr_ != nullptr;  // the scope's memory: never the pool's
    if (ptr_) return;
  }
  // The calling interpreter's account pays for CPU memory (its cap);
  // other devices keep their pool's limit.
  MemoryAccount* account = device_->type() == DeviceType::cpu ? current_account() : nullptr;
  if (!account) {
    ptr_ = device_->pool().allocate(bytes_, exact_);
    return;
  }
  const size_t size = CachingPool::size_of(bytes_, exact_);
  account->charge(size, bytes_);
  try {
    ptr_ = device_->pool().allocate(bytes_, exact_);
  } catch (...) {
    account->refund(size);
    throw;
  }
  account_ = Ref<MemoryAccount>(account);
}

Tensor Tensor::view(const Shape& shape, size_t bytes) const {
  Tensor t;
  t.impl_ = make_ref<TensorImpl>();
  t.impl_->block = impl_->block;
  t.impl_->offset = impl_->offset + bytes;
  t.impl_->shape = shape;
  t.impl_->dtype = impl_->dtype;
  return t;
}

namespace {
template <class R>
R read_one(const Tensor& t) {
  if (t.numel() != 1)
    throw Error("only a tensor with one element converts to a number, not " + t.type().str());
  alignas(8) unsigned char buf[8];
  t.device()->copy_to_host(buf, t.raw_data(), dtype_size(t.dtype()));
  if (is_half_float(t.dtype())) return R(load_half_float(t.dtype(), buf, 0));
  return visit_dtype(t.dtype(), [&]<class T>() { return R(*reinterpret_cast<const T*>(buf)); });
}
}  // namespace

double Tensor::item_double() const { return read_one<double>(*this); }
int64_t Tensor::item_int() const { return read_one<int64_t>(*this); }
bool Tensor::item_bool() const { return read_one<double>(*this) != 0; }

}  // namespace nn::backend
