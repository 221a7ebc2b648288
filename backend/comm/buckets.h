// Gradient buckets (SPEC §14), made as PyTorch's DDP makes them: tensors
// taken in the order given (the order backward produces them) fill a bucket
// until the next would take it past the cap; the first bucket holds at most
// 1 MB, so that communication starts early in backward; a bucket holds one
// dtype on one device. A tensor larger than the cap has a bucket of its own.
#pragma once
#include <cstddef>
#include <span>
#include <vector>

#include "backend/attrs.h"
#include "backend/tensor.h"

namespace nn::backend::comm {

inline constexpr size_t kFirstBucketBytes = size_t(1) << 20;

// Indices into `types`, one list per bucket, in order.
std::vector<std::vector<size_t>> plan_buckets(std::span<const TensorType> types, size_t cap_bytes);

// all_reduce_wait's attributes: the shapes of the pieces it gives back, in
// order (attribute `shapes`: each as its rank, then its dims), and back.
Attrs wait_attrs(std::span<const Shape> pieces);
std::vector<Shape> wait_pieces(const Attrs& attrs);

}  // namespace nn::backend::comm
