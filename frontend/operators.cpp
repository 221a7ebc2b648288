// Operators on values: host arithmetic on numbers (Python rules), tensor ops
// through the backend when either side is a tensor, concatenation and
// equality of host containers, and truth values.
#include <cmath>

#include "backend/error.h"
#include "backend/ops.h"
#include "backend/ops/elementwise_math.h"
#include "frontend/format.h"
#include "frontend/interpreter.h"
#include "frontend/stack_guard.h"

namespace nn::frontend {
namespace {

const char* op_name(BinOp op) {
  switch (op) {
    case BinOp::Add: return "add";
    case BinOp::Sub: return "subtract";
    case BinOp::Mul: return "multiply";
    case BinOp::Div: return "divide";
    case BinOp::FloorDiv: return "floor-divide";
    case BinOp::Mod: return "take the remainder of";
    case BinOp::MatMul: return "matrix-multiply";
    case BinOp::Pow: return "raise";
    default: return "compare";
  }
}

backend::Tensor tensor_binary(BinOp op, const backend::Tensor& a, const backend::Tensor& b) {
  using namespace backend;
  switch (op) {
    case BinOp::Add: return add(a, b);
    case BinOp::Sub: return sub(a, b);
    case BinOp::Mul: return mul(a, b);
    case BinOp::Div: return div(a, b);
    case BinOp::FloorDiv: return floordiv(a, b);
    case BinOp::Mod: return mod(a, b);
    case BinOp::MatMul: return matmul(a, b);
    case BinOp::Pow: return pow(a, b);
    case BinOp::Eq: return eq(a, b);
    case BinOp::Ne: return ne(a, b);
    case BinOp::Lt: return lt(a, b);
    case BinOp::Le: return le(a, b);
    case BinOp::Gt: return gt(a, b);
    case BinOp::Ge: return ge(a, b);
  }
  return a;
}

bool host_equal(const Value& a, const Value& b);

// Two containers that hold themselves recurse until the stack guard stops
// them, as Python's do. (Checked here, where a comparison goes deeper, so
// that deep recursion of a script's own calls reports itself as such.)
void check_nesting_room() {
  if (stack_nearly_full()) throw backend::Error("comparison nests too deeply (a container holding itself?)");
}

bool seq_equal(const std::vector<Value>& a, const std::vector<Value>& b) {
  check_nesting_room();
  if (&a == &b) return true;
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!host_equal(a[i], b[i])) return false;
  return true;
}

// Tensors met inside containers compare as Python compares them there:
// the same tensor is equal to itself, one-element tensors (and numbers) by
// value, and others have no single truth value (a tuple of two equal [2]
// tensors was silently unequal).
bool tensor_item_equal(const Value& a, const Value& b) {
  if (a.is_tensor() && b.is_tensor() && a.as_tensor().impl() == b.as_tensor().impl()) return true;
  for (const Value* v : {&a, &b})
    if (v->is_tensor() && v->as_tensor().numel() != 1)
      throw backend::Error("== of containers holding a tensor of " + v->as_tensor().type().str() +
                           " is ambiguous (its elements compare one by one); compare the tensors themselves: "
                           "x == y compares their elements");
  auto number = [](const Value& v) {
    if (!v.is_tensor()) return v.as_number();
    if (v.as_tensor().is_traced())
      throw backend::Error("== of containers reads a tensor's value, which is not known while a graph is traced");
    return v.as_tensor().item_double();
  };
  return number(a) == number(b);
}

// Host numbers ordered exactly, as Python orders them: an int against a
// float is not rounded to a double first (2**53 + 1 > 2.0**53). -1, 0 or 1;
// 2 when a NaN leaves them unordered.
int compare_numbers(const Value& a, const Value& b) {
  auto integer = [](const Value& v) { return v.is_bool() ? int64_t(v.as_bool()) : v.as_int(); };
  if (!a.is_float() && !b.is_float()) return (integer(a) > integer(b)) - (integer(a) < integer(b));
  if (a.is_float() && b.is_float()) {
    const double x = a.as_float(), y = b.as_float();
    return x != x || y != y ? 2 : (x > y) - (x < y);
  }
  const bool flip = a.is_float();  // the int i against the float d, then flipped back
  const int64_t i = integer(flip ? b : a);
  const double d = flip ? a.as_float() : b.as_float();
  if (d != d) return 2;
  int c = d >= 0x1p63 ? -1 : 1;  // past every int64
  if (d >= -0x1p63 && d < 0x1p63) {
    const double whole = std::floor(d);  // an int64 exactly
    const int64_t f = int64_t(whole);
    c = i < f ? -1 : i > f ? 1 : whole == d ? 0 : -1;
  }
  return flip ? -c : c;
}

// == on host values: by value for scalars, strings and containers (a
// container is equal to itself); by identity for functions and iterators.
bool host_equal(const Value& a, const Value& b) {
  if ((a.is_tensor() && (b.is_tensor() || b.is_number())) || (b.is_tensor() && a.is_number()))
    return tensor_item_equal(a, b);
  if (a.is_number() && b.is_number()) return compare_numbers(a, b) == 0;
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::None: return true;
    case Value::Kind::Str: return a.as_str() == b.as_str();
    case Value::Kind::List: return seq_equal(a.as_list()->items, b.as_list()->items);
    case Value::Kind::Tuple: return seq_equal(a.as_tuple()->items, b.as_tuple()->items);
    case Value::Kind::Range: {
      const RangeValue x = a.as_range(), y = b.as_range();
      return x.lo == y.lo && x.hi == y.hi && x.step == y.step;
    }
    case Value::Kind::DType: return a.as_dtype() == b.as_dtype();
    case Value::Kind::Device: return a.as_device() == b.as_device();
    case Value::Kind::Record: {
      auto& x = *a.as_record();
      auto& y = *b.as_record();
      check_nesting_room();
      if (&x == &y) return true;
      if (x.fields.size() != y.fields.size()) return false;
      for (auto& [k, v] : x.fields) {
        const Value* w = y.find(k);
        if (!w || !host_equal(v, *w)) return false;
      }
      return true;
    }
    case Value::Kind::Function: return a.as_function() == b.as_function();
    case Value::Kind::Iterator: return a.as_iterator() == b.as_iterator();
    default: return false;
  }
}

int64_t int_of(const Value& v) { return v.is_bool() ? int64_t(v.as_bool()) : v.as_int(); }

// Host integers are 64-bit. Python's would be exact past that range, so a
// result that does not fit is an error rather than a wrapped number.
[[noreturn]] void int_overflow(Span span, const std::string& expr) {
  fail(span, "integer overflow: " + expr + " does not fit in a 64-bit int (-9223372036854775808 to " +
                 "9223372036854775807); a float gives its approximate value");
}

// a + b, a - b or a * b, exactly.
int64_t exact(BinOp op, int64_t a, int64_t b, Span span) {
  int64_t r = 0;
  bool over = false;
  switch (op) {
    case BinOp::Add: over = __builtin_add_overflow(a, b, &r); break;
    case BinOp::Sub: over = __builtin_sub_overflow(a, b, &r); break;
    case BinOp::Mul: over = __builtin_mul_overflow(a, b, &r); break;
    default: break;
  }
  if (over) int_overflow(span, std::to_string(a) + " " + binop_symbol(op) + " " + std::to_string(b));
  return r;
}

// Python's floor modulo: the sign of the divisor, a zero's included.
double fmod_floor(double a, double b) {
  double r = std::fmod(a, b);
  if (r == 0) return std::copysign(0.0, b);
  if ((r < 0) != (b < 0)) r += b;
  return r;
}

}  // namespace

Value Interpreter::binary(BinOp op, const Value& a, const Value& b, Span span) {
  // `x == none` asks whether x is none, even for a tensor x.
  if ((op == BinOp::Eq || op == BinOp::Ne) && (a.is_none() || b.is_none()))
    return Value((a.is_none() && b.is_none()) == (op == BinOp::Eq));
  if (a.is_tensor() || b.is_tensor()) {
    note_op_loc(span);
    try {
      backend::Tensor x = a.is_tensor() ? a.as_tensor() : to_tensor(a, span);
      backend::Tensor y = b.is_tensor() ? b.as_tensor() : to_tensor(b, span);
      return Value(tensor_binary(op, x, y));
    } catch (const backend::Error& e) {
      fail(span, e.what());
    }
  }
  if (a.is_number() && b.is_number()) {
    bool floating = a.is_float() || b.is_float();
    switch (op) {
      case BinOp::Add:
        return floating ? Value(a.as_number() + b.as_number()) : Value(exact(op, int_of(a), int_of(b), span));
      case BinOp::Sub:
        return floating ? Value(a.as_number() - b.as_number()) : Value(exact(op, int_of(a), int_of(b), span));
      case BinOp::Mul:
        return floating ? Value(a.as_number() * b.as_number()) : Value(exact(op, int_of(a), int_of(b), span));
      case BinOp::Div:
        if (!floating && int_of(b) == 0) fail(span, "division by zero");
        return Value(a.as_number() / b.as_number());
      case BinOp::FloorDiv:
        // The tensor op's functor: one rounding rule for host numbers and tensors.
        if (floating) return Value(backend::math::FloorDiv{nullptr}(a.as_number(), b.as_number()));
        if (int_of(b) == 0) fail(span, "floor division by zero");
        if (int_of(a) == INT64_MIN && int_of(b) == -1) int_overflow(span, std::to_string(INT64_MIN) + " // -1");
        return Value(backend::math::FloorDiv{nullptr}(int_of(a), int_of(b)));
      case BinOp::Mod:
        if (!floating) {
          int64_t x = int_of(a), y = int_of(b);
          if (y == 0) fail(span, "modulo by zero");
          int64_t r = y == -1 ? 0 : x % y;  // INT64_MIN % -1 traps in hardware
          if (r != 0 && ((r < 0) != (y < 0))) r += y;
          return Value(r);
        }
        return Value(fmod_floor(a.as_number(), b.as_number()));
      case BinOp::Pow:
        if (!floating && int_of(a) == 0 && int_of(b) < 0) fail(span, "0 cannot be raised to a negative power (a division by zero)");
        if (!floating && int_of(b) >= 0) {
          const int64_t x = int_of(a), n = int_of(b);
          int64_t base = x, e = n, r = 1;
          // base is squared only while bits remain, which the result then
          // holds as a factor: an overflow there is the result's own.
          while (e > 0) {
            bool over = (e & 1) && __builtin_mul_overflow(r, base, &r);
            e >>= 1;
            over = over || (e > 0 && __builtin_mul_overflow(base, base, &base));
            if (over) int_overflow(span, std::to_string(x) + " ** " + std::to_string(n));
          }
          return Value(r);
        }
        return Value(std::pow(a.as_number(), b.as_number()));
      case BinOp::Eq: return Value(host_equal(a, b));
      case BinOp::Ne: return Value(!host_equal(a, b));
      case BinOp::Lt: return Value(compare_numbers(a, b) == -1);
      case BinOp::Le: return Value(compare_numbers(a, b) <= 0);
      case BinOp::Gt: return Value(compare_numbers(a, b) == 1);
      case BinOp::Ge: {
        const int c = compare_numbers(a, b);
        return Value(c == 0 || c == 1);
      }
      case BinOp::MatMul: break;
    }
  }
  if (op == BinOp::Eq || op == BinOp::Ne) {
    try {
      // Containers compare by what they hold, which a trace then folds in.
      note_whole_read(a);
      note_whole_read(b);
      return Value(host_equal(a, b) == (op == BinOp::Eq));
    } catch (const backend::Error& e) {
      fail(span, e.what());
    }
  }
  if (a.is_str() && b.is_str()) {
    const std::string &x = a.as_str(), &y = b.as_str();
    switch (op) {
      case BinOp::Add: return Value(x + y);
      case BinOp::Lt: return Value(x < y);
      case BinOp::Le: return Value(x <= y);
      case BinOp::Gt: return Value(x > y);
      case BinOp::Ge: return Value(x >= y);
      default: break;
    }
  }
  if (op == BinOp::Add && a.is_list() && b.is_list()) {
    std::vector<Value> items = a.as_list()->items;
    items.insert(items.end(), b.as_list()->items.begin(), b.as_list()->items.end());
    return Value(make_list(std::move(items)));
  }
  if (op == BinOp::Add && a.is_tuple() && b.is_tuple()) {
    std::vector<Value> items = a.as_tuple()->items;
    items.insert(items.end(), b.as_tuple()->items.begin(), b.as_tuple()->items.end());
    return Value(make_tuple(std::move(items)));
  }
  if (op == BinOp::MatMul && (a.is_list() || b.is_list()))
    fail(span, std::string("cannot ") + op_name(op) + " " + a_type_name(a) + " and " + a_type_name(b) +
                   "; make tensors with tensor()");
  fail(span, std::string("cannot ") + op_name(op) + " " + a_type_name(a) + " and " + a_type_name(b) +
                 " with `" + binop_symbol(op) + "`");
}

Value Interpreter::negate(const Value& v, Span span) {
  if (v.is_int()) {
    if (v.as_int() == INT64_MIN) int_overflow(span, "-(" + std::to_string(INT64_MIN) + ")");
    return Value(-v.as_int());
  }
  if (v.is_float()) return Value(-v.as_float());
  if (v.is_bool()) return Value(-int64_t(v.as_bool()));
  if (v.is_tensor()) {
    note_op_loc(span);
    try {
      return Value(backend::neg(v.as_tensor()));
    } catch (const backend::Error& e) {
      fail(span, e.what());
    }
  }
  fail(span, "cannot negate " + a_type_name(v));
}

bool Interpreter::truthy(const Value& v, Span span, const char* construct) {
  switch (v.kind()) {
    case Value::Kind::Bool: return v.as_bool();
    case Value::Kind::None: return false;
    case Value::Kind::Int: return v.as_int() != 0;
    case Value::Kind::Float: return v.as_float() != 0;
    case Value::Kind::Str: return !v.as_str().empty();
    case Value::Kind::List: return !v.as_list()->items.empty();
    case Value::Kind::Tuple: return !v.as_tuple()->items.empty();
    case Value::Kind::Range: return v.as_range().size() != 0;
    case Value::Kind::Record:  // empty ones are false, as Python's dicts
      note_record_read(v.as_record());
      return !v.as_record()->fields.empty();
    case Value::Kind::Tensor: {
      const auto& t = v.as_tensor();
      if (ir::Tracer* tr = ir::Tracer::active(); tr && tr->is_traced(t))
        throw ScriptError(Diagnostic{std::string("cannot branch on a tensor's value in ") + construct + " inside graph `" +
                                         tr->name() + "`: the value is not known while the graph is traced",
                                     span,
                                     {"help: compute both sides and choose with where(cond, a, b), or return the "
                                      "tensor and branch outside the graph"}});
      if (t.numel() != 1)
        fail(span, "the truth value of a tensor with " + std::to_string(t.numel()) + " elements (" + t.type().str() +
                       ") is ambiguous; reduce it first, e.g. with max() or min()");
      try {
        note_value_read(t);
      } catch (const backend::Error& e) {
        fail(span, e.what());
      }
      return t.item_bool();
    }
    case Value::Kind::Function:
      // x.requires_grad() sugar named without its call: always true, so a
      // mistake (other functions are true, as in Python: `if callback`).
      if (v.as_function()->kind == Function::Kind::Bound)
        fail(span, "the truth value of `" + v.as_function()->name() + "` bound to a value (method sugar for " +
                       v.as_function()->name() + "(x, ...)) is always true; call it");
      return true;
    default: return true;
  }
}

}  // namespace nn::frontend
