// How values print (SPEC §3, §10): print() and str() use to_str, the REPL's
// echo and the items of containers use to_repr. The rules are written out at
// the top of format.cpp.
#pragma once
#include <string>

#include "backend/tensor.h"
#include "frontend/value.h"

namespace nn::frontend {

// print() and str(): strings raw, everything else as to_repr.
std::string to_str(const Value& v);
// REPL echo and items inside containers: strings quoted with escapes.
std::string to_repr(const Value& v);
// Shortest round-trip form, Python style: 2.0, 0.1, 1e-05, 1e+20, inf, nan.
std::string format_float(double v);
// The same for an f32 value: the shortest form of the float itself (0.1, not
// 0.10000000149011612).
std::string format_float32(float v);
// A tensor: a 0-d tensor as its bare value; otherwise a header such as
// "f32[2, 3]" and NumPy-style brackets. with_header=false gives the brackets
// alone, for callers that show the type elsewhere.
std::string format_tensor(const backend::Tensor& t, bool with_header = true);

}  // namespace nn::frontend
