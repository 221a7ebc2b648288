// ONNX element types through a model's nodes (element_types.h).
#include "onnx/element_types.h"

#include <set>

#include "onnx/tensor_proto.h"

namespace nn::onnx_io {

using P = onnx::TensorProto;

namespace {

const onnx::AttributeProto* find_attr(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

bool is_unsigned(int t) { return t == P::UINT8 || t == P::UINT16 || t == P::UINT32 || t == P::UINT64; }

// INT8 and INT16, which nn holds in i32: their results must wrap as well.
bool is_narrow_signed(int t) { return t == P::INT8 || t == P::INT16; }

int bits_of(int t) {
  return t == P::UINT8 || t == P::INT8 ? 8 : t == P::UINT16 || t == P::INT16 ? 16 : t == P::UINT32 ? 32 : 64;
}

}  // namespace

int output_element_type(const onnx::NodeProto& node, int o, std::span<const int> in) {
  static const std::set<std::string> to_int64 = {"Shape", "Size", "ArgMax", "ArgMin", "NonZero", "NonMaxSuppression"};
  static const std::set<std::string> to_bool = {"Equal", "Less",  "LessOrEqual", "Greater", "GreaterOrEqual", "And",
                                                "Or",    "Xor",   "Not",         "IsInf",   "IsNaN"};
  static const std::set<std::string> windows = {"HannWindow", "HammingWindow", "BlackmanWindow"};
  const std::string& op = node.op_type();
  auto input = [&](size_t i) { return i < in.size() ? in[i] : 0; };
  auto attr_int = [&](const char* name, int fallback) {
    const auto* a = find_attr(node, name);
    return a && a->type() == onnx::AttributeProto::INT ? int(a->i()) : fallback;
  };
  if (to_int64.count(op)) return P::INT64;
  if (to_bool.count(op)) return P::BOOL;
  if (windows.count(op)) return attr_int("output_datatype", P::FLOAT);
  if (op == "Cast") return attr_int("to", 0);
  if (op == "CastLike") return input(1);
  if (op == "EyeLike") return attr_int("dtype", input(0));
  if (op == "Where") return input(1);
  if (op == "OneHot") return input(2);
  if (op == "DequantizeLinear") return P::FLOAT;
  if (op == "QuantizeLinear") return in.size() > 2 ? input(2) : int(P::UINT8);
  if (op == "DynamicQuantizeLinear") return o == 1 ? P::FLOAT : P::UINT8;
  if ((op == "TopK" || op == "MaxPool") && o == 1) return P::INT64;
  if (op == "Unique" && o > 0) return P::INT64;
  if (op == "Constant" || op == "ConstantOfShape") {
    for (const auto& a : node.attribute()) {
      if (a.name() == "value" || a.name() == "sparse_value") return a.has_t() ? a.t().data_type() : 0;
      if (a.name() == "value_int" || a.name() == "value_ints") return P::INT64;
      if (a.name() == "value_float" || a.name() == "value_floats") return P::FLOAT;
    }
    return op == "ConstantOfShape" ? P::FLOAT : 0;
  }
  return input(0);  // the other ops nn imports give their first input's type
}

std::string unsigned_refusal(const onnx::NodeProto& node, std::span<const int> in) {
  // The ops whose unsigned results wrap around. Div, Mod, Max, Min, Abs and
  // the comparisons give the same values on the wider signed dtype.
  static const std::set<std::string> wrapping = {
      "Add",       "Sub",       "Mul",           "Neg",        "Pow",        "Sum",         "Mean",
      "CumSum",    "ReduceSum", "ReduceSumSquare", "ReduceProd", "ReduceMean", "ReduceL1",    "ReduceL2",
      "ReduceLogSum", "ReduceLogSumExp", "MatMul", "Gemm",      "Einsum"};
  // Add, Sub and Mul wrap as ONNX's do below 64 bits, and so do INT8's and
  // INT16's Neg, Div and Abs (import_elementwise.cpp).
  static const std::set<std::string> wrapped = {"Add", "Sub", "Mul"};
  const std::string& op = node.op_type();
  auto wraps_here = [&op](int t) {
    return t != P::UINT64 && (wrapped.count(op) || (op == "Neg" && is_narrow_signed(t)));
  };
  if (wrapping.count(op)) {
    const size_t checked = op == "Pow" ? 1 : in.size();  // a Pow's result has its base's type
    for (size_t i = 0; i < checked && i < in.size(); ++i)
      if ((is_unsigned(in[i]) || is_narrow_signed(in[i])) && !wraps_here(in[i]))
        return "its input `" + node.input(int(i)) + "` is " + onnx_type_name(in[i]) + ", whose " + op +
               " wraps around modulo 2^" + std::to_string(bits_of(in[i])) +
               "; nn holds it in a wider dtype, where it would not, so it does not run " + op +
               " on it (a Cast to a wider or float type before it does)";
  }
  if (op == "Cast" && !in.empty() && in[0] != 0 && !is_unsigned(in[0]) && in[0] != P::BOOL) {
    const auto* to = find_attr(node, "to");
    if (to && to->i() == P::UINT64)
      return "a Cast from " + onnx_type_name(in[0]) +
             " to UINT64 wraps a negative value around 2^64, past what nn's i64 holds, so nn does not run it";
  }
  return "";
}

}  // namespace nn::onnx_io
