// Tensor: a handle to a dtype, a shape and a Block on a device. Tensors are
// always contiguous (row-major) from a byte offset into their block; reshape
// shares the block, everything else writes a new one.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "backend/block.h"
#include "backend/dtype.h"
#include "backend/shape.h"

namespace nn::backend {

// Type of a tensor without its data: what type rules read and write.
// `weak` sits beside `dtype`, in what would be padding: the IR keeps one
// type per value, and its passes read values by the tens of thousands.
struct TensorType {
  TensorType() = default;
  TensorType(DType dtype, Shape shape, Device* device = nullptr, bool weak = false)
      : dtype(dtype), weak(weak), shape(shape), device(device) {}
  DType dtype = DType::f32;
  bool weak = false;  // a host number wrapped as a 0-d tensor (promotion, SPEC §3)
  Shape shape;
  Device* device = nullptr;
  std::string str() const;  // "f32[2, 3]"
  size_t nbytes() const { return size_t(shape.numel()) * dtype_size(dtype); }
};

struct GradNode;

struct TensorImpl : RefCounted {
  BlockPtr block;
  size_t offset = 0;  // bytes
  Shape shape;
  DType dtype = DType::f32;
  bool weak = false;
  // Autodiff (backend/autograd.h): a param is a leaf that requires grad; a
  // tensor computed from one points to the op call that made it.
  bool requires_grad = false;
  // Computed by a compiled graph: no history, whatever it was computed from
  // (grad() says so rather than give zeros).
  bool graph_result = false;
  // Given by grad(), or computed from such a tensor without history: nn has
  // no second derivatives, so grad() refuses a loss it reaches rather than
  // count its part of the loss for nothing.
  bool grad_result = false;
  // Holds a host number that changes between a graph's runs (an optimizer's
  // rate, SPEC §13): a graph reads it on every run, never folds it.
  bool fed = false;
  uint32_t output_index = 0;  // which output of grad_fn this tensor is
  std::shared_ptr<GradNode> grad_fn;
};

class Tensor {
 public:
  Tensor() = default;
  // A new tensor whose block is taken from the device pool on first write.
  static Tensor empty(const Shape& shape, DType dtype, Device* device = nullptr);
  static Tensor empty(const TensorType& t) { return empty(t.shape, t.dtype, t.device); }
  // A tensor over memory the caller owns and keeps alive; nothing is copied.
  static Tensor from_blob(void* data, const Shape& shape, DType dtype, Device* device = nullptr);
  // A tensor over `block` from byte `offset` (a graph's arena); the block
  // must hold it. Shares the block, like a view.
  static Tensor in_block(const BlockPtr& block, size_t offset, const Shape& shape, DType dtype);
  // A tensor of a graph trace standing for its `value`: a type and a mark,
  // never memory (ir/tracer.h).
  static Tensor traced(const TensorType& type, Ref<TraceMark> mark, uint32_t value);

  bool defined() const { return bool(impl_); }
  const Shape& shape() const { return impl_->shape; }
  DType dtype() const { return impl_->dtype; }
  Device* device() const { return impl_->block->device(); }
  int ndim() const { return impl_->shape.ndim(); }
  int64_t numel() const { return impl_->shape.numel(); }
  size_t nbytes() const { return size_t(numel()) * dtype_size(dtype()); }
  bool weak() const { return impl_->weak; }
  void set_weak(bool w) { impl_->weak = w; }
  TensorType type() const { return {dtype(), shape(), device(), weak()}; }

  void* raw_data() { return static_cast<char*>(impl_->block->data()) + impl_->offset; }
  const void* raw_data() const { return static_cast<char*>(impl_->block->data()) + impl_->offset; }
  template <class T> T* data() { return static_cast<T*>(raw_data()); }
  template <class T> const T* data() const { return static_cast<const T*>(raw_data()); }

  // Same block, another shape: from this tensor's start (a reshape), or from
  // `bytes` past it (a piece of it).
  Tensor view(const Shape& shape, size_t bytes = 0) const;
  // The one element of a 1-element tensor, converted (copies from the device).
  double item_double() const;
  int64_t item_int() const;
  bool item_bool() const;

  bool is_traced() const { return impl_->block->trace_mark() != nullptr; }
  const BlockPtr& block() const { return impl_->block; }
  size_t offset() const { return impl_->offset; }
  TensorImpl* impl() const { return impl_.get(); }
  bool same(const Tensor& o) const { return impl_ == o.impl_; }

 private:
  Ref<TensorImpl> impl_;
};

}  // namespace nn::backend
