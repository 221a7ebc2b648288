// What the elementwise families (ops/unary.cpp, binary.cpp) make from a
// table line: the attribute spec of the entry, the functor of a call built
// from its attributes, the tile kernels, and the macros that turn a line's
// optional attribute (type, name, default) into a C++ parameter, an
// argument and a registry spec. The CUDA backend and the fused-kernel
// source read attributes through params_of too.
#pragma once
#include "backend/op_registry.h"
#include "backend/ops/elementwise_math.h"
#include "backend/ops/tile.h"

namespace nn::backend {

// The attribute values of a call in the order of the op's specs, a missing
// one at its default, as the functors' from() reads them.
inline math::EwParams params_of(const OpDef& d, const Attrs& attrs) {
  math::EwParams p;
  for (size_t i = 0; i < d.attrs.size() && i < 2; ++i) {
    const AttrValue* v = attrs.find(d.attrs[i].name);
    const AttrValue& value = v ? *v : d.attrs[i].fallback;
    if (auto b = std::get_if<bool>(&value)) p.v[i] = *b ? 1.0 : 0.0;
    else if (auto x = std::get_if<double>(&value)) p.v[i] = *x;
    else if (auto n = std::get_if<int64_t>(&value)) p.v[i] = double(*n);
  }
  return p;
}

// The attributes a call records: the value only where it differs from the
// op's default, so that equal calls read the same in the IR.
inline Attrs call_attrs(const OpDef& d, AttrValue value) {
  if (d.attrs.empty() || value == d.attrs[0].fallback) return {};
  return Attrs{{d.attrs[0].name, std::move(value)}};
}

// The functor of op `id` for a call with these attributes (an error flag
// from `flag`, for integer pow and mod).
template <class F>
F functor_of(OpId id, const Attrs& attrs, int* flag = nullptr) {
  math::EwParams p = params_of(op(id), attrs);
  p.flag = flag;
  return math::make_functor<F>(p);
}

template <OpId Id, class F>
F functor_for(const Attrs& attrs) {
  return functor_of<F>(Id, attrs);
}

// The tile kernels (graph fusion) of a functor taking N operands. Fused
// steps compute in f32 or f64, where no functor raises its error flag.
template <OpId Id, class F, size_t N>
TileKernels tile_kernels() {
  return tile::kernels<F, N, functor_for<Id, F>>();
}

}  // namespace nn::backend
