// Gradient buckets (SPEC §14), made as PyTorch's DDP makes them: tensors
// taken in the order given (the order backward produces them) fill a bucket
// until the next would take it past the cap; the first bucket holds at most
// 1 MB, so that communication starts early in backward; a bucket holds one
// dtype on one device. A tensor larger than the cap has a bucket of its own.
#pragma once
#include <cstddef>
#include <span>
#include <vector>

#include "backend/tensor.h"

namespace nn::backend::comm {

inline constexpr size_t kFirstBucketBytes = size_t(1) << 20;

// Indices into `types`, one list per bucket, in order.
std::vector<std::vector<size_t>> plan_buckets(std::span<const TensorType> types, size_t cap_bytes);

}  // namespace nn::backend::comm
