// The elementwise op tables: one line an op. Everything else about these ops
// is made from them: the OpId of each (backend/op_id.h), its registry entry,
// CPU kernel, tile kernels and backward rule (ops/unary.cpp, binary.cpp),
// its C++ function (backend/ops.h), its built-in (frontend/builtins/math.cpp),
// its CUDA kernel (cuda/elementwise.cu, cuda/elementwise_ops.cpp) and its
// step in the GPU's fused kernels (cuda/fused_source.cpp). The maths is the
// functor of ops/elementwise_math.h the line names. Plain macros and nothing
// else, so that nvcc and the CPU files read the same lists.
//
// An op may take one attribute: three more fields, its C++ type (double or
// bool), name and default, which the functor's from() reads as EwParams
// v[0]. Each default is written here and nowhere else; a call records the
// attribute only where it differs from its default.
#pragma once

// A table line's attribute as a parameter with its default (backend/ops.h),
// a parameter (the definitions), the argument's name, and its registry spec.
#define NN_ATTR_PARAM(type, name, fallback) type name = fallback
#define NN_ATTR_ARG(type, name, fallback) type name
#define NN_ATTR_NAME(type, name, fallback) name
#define NN_ATTR_SPEC(type, name, fallback) ::nn::backend::AttrSpec{#name, type(fallback)}

// Unary: X(id, Functor, kind, gradient[, type, attribute, default])
//   kind:     floating   f32/f64 kept, integer and bool inputs give f32
//             keeping    the input's dtype (floor of an integer is itself)
//             negation   as keeping, but bool is refused
//             predicate  bool result, computed in the input's dtype
//   gradient: the gradient of x, an expression of x (the input), y (the
//             output), g (y's gradient) and p (the attribute values, p[0]
//             first) written with backend/ops.h functions; `none` where the
//             result has no gradient (bool results). It is used only for
//             float x; integer and bool inputs get none.
#define NN_UNARY_OPS(X)                                                                    \
  X(exp, Exp, floating, mul(g, y))                                                          \
  X(log, Log, floating, div(g, x))                                                          \
  X(sqrt, Sqrt, floating, div(g, mul(y, num(2))))                                           \
  /* y = x^(-1/2): dy/dx = -1/2 x^(-3/2) = -1/2 y^3 */                                     \
  X(rsqrt, Rsqrt, floating, mul(g, mul(mul(y, mul(y, y)), num(-0.5))))                      \
  X(sin, Sin, floating, mul(g, cos(x)))                                                     \
  X(cos, Cos, floating, neg(mul(g, sin(x))))                                                \
  X(tanh, Tanh, floating, mul(g, sub(num(1), mul(y, y))))                                   \
  X(sigmoid, Sigmoid, floating, mul(g, mul(y, sub(num(1), y))))                             \
  /* at 0 the gradient is the slope, as PyTorch's x > 0 ? g : g * slope */                  \
  X(leaky_relu, LeakyRelu, floating, where(gt(x, num(0)), g, mul(g, num(p[0]))),            \
    double, slope, 0.01)                                                                    \
  X(gelu, Gelu, floating, gelu_backward(g, x, p[0] != 0), bool, approximate, false)         \
  /* d/dx log(1 + e^x) = sigmoid(x) */                                                      \
  X(softplus, Softplus, floating, mul(g, sigmoid(x)))                                       \
  X(neg, Neg, negation, neg(g))                                                             \
  /* a new tensor of x's values (PyTorch's clone) */                                        \
  X(copy, Copy, keeping, g)                                                                 \
  /* sign(0) = 0: the gradient at 0 is 0, as in PyTorch */                                  \
  X(abs, Abs, keeping, mul(g, sign(x)))                                                     \
  /* piecewise constant: a defined zero, not "no gradient", as in PyTorch */                \
  X(sign, Sign, keeping, zeros_like(x))                                                     \
  /* the gradient at 0 is 0 (PyTorch's choice): only a positive result passes it */         \
  X(relu, Relu, keeping, relu_backward(g, y))                                               \
  X(floor, Floor, keeping, zeros_like(x))                                                   \
  X(ceil, Ceil, keeping, zeros_like(x))                                                     \
  X(round, Round, keeping, zeros_like(x))                                                   \
  X(logical_not, LogicalNot, predicate, none)                                               \
  X(isnan, IsNan, predicate, none)                                                          \
  /* d/dx erf(x) = 2/sqrt(pi) e^(-x^2) */                                                   \
  X(erf, Erf, floating, mul(g, mul(exp(neg(mul(x, x))), num(1.1283791670955126))))         \
  X(erfc, Erfc, floating, mul(g, mul(exp(neg(mul(x, x))), num(-1.1283791670955126))))      \
  /* y = x s(x), s = sigmoid: dy/dx = s + x s (1 - s) = s + y (1 - s) */                    \
  X(silu, Silu, floating, mul(g, add(sigmoid(x), mul(y, sub(num(1), sigmoid(x))))))         \
  X(log1p, Log1p, floating, div(g, add(x, num(1))))                                         \
  X(expm1, Expm1, floating, mul(g, add(y, num(1))))

// Binary: X(id, Functor, kind, commutative, builtin, backward[, type, attribute, default])
//   kind:     arith          computes in the promoted dtype (SPEC §3)
//             arith_no_bool  as arith, but two bools are refused
//             true_div       as arith, integers give f32
//             compare        bool result, computed in the promoted dtype
//             logical        bool operands (read as != 0), bool result
//             floating       a float result from float operands
//   builtin:  true when nn has a function of the op's name (the others are
//             operators, or internal ops that backward rules call)
//   backward: the rule of ops/binary.cpp (a function of BackwardArgs), or
//             nullptr where there is no gradient
#define NN_BINARY_OPS(X)                                                          \
  X(add, Add, arith, true, false, add_backward)                                    \
  X(sub, Sub, arith_no_bool, false, false, sub_backward)                           \
  X(mul, Mul, arith, true, false, mul_backward)                                    \
  X(div, Div, true_div, false, false, div_backward)                                \
  X(pow, Pow, arith_no_bool, false, true, pow_backward)                            \
  X(mod, Mod, arith_no_bool, false, false, mod_backward)                           \
  /* a // b (Python's floor division): piecewise constant, zero gradients */     \
  X(floordiv, FloorDiv, arith_no_bool, false, false, floordiv_backward)            \
  X(maximum, Maximum, arith, true, true, extreme_backward<true>)                   \
  X(minimum, Minimum, arith, true, true, extreme_backward<false>)                  \
  X(eq, Eq, compare, true, false, nullptr)                                         \
  X(ne, Ne, compare, true, false, nullptr)                                         \
  X(lt, Lt, compare, false, false, nullptr)                                        \
  X(le, Le, compare, false, false, nullptr)                                        \
  X(gt, Gt, compare, false, false, nullptr)                                        \
  X(ge, Ge, compare, false, false, nullptr)                                        \
  X(logical_and, And, logical, true, true, nullptr)                                \
  X(logical_or, Or, logical, true, true, nullptr)                                  \
  /* 0 where y <= 0, else g, for inputs (g, y): relu's gradient in one pass */     \
  X(relu_backward, ReluGrad, floating, false, false, relu_backward_backward)              \
  /* g * gelu'(x) for inputs (g, x): gelu's gradient as one fused node */          \
  X(gelu_backward, GeluGrad, floating, false, false, nullptr, bool, approximate, false)
