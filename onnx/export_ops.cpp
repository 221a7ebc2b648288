// The export table (export_ops.h): for each nn op save() writes, the ONNX
// opset-17 node(s) that compute it. ONNX wants one dtype across an op's
// operands where nn promotes, so entries read their inputs converted to the
// dtype the op computes in (in_as). Entries of ops that move or drop the
// batch axis say where it goes (set_batch) or fail. Also why the other ops
// are never written.
#include <algorithm>
#include <climits>

#include <onnx/defs/schema.h>

#include "backend/ops.h"
#include "backend/ops/type_rules.h"
#include "onnx/export_ops.h"
#include "onnx/onnx_io.h"
#include "onnx/tensor_proto.h"

namespace nn::onnx_io {

using backend::DType;
using backend::OpId;
using Ints = std::vector<int64_t>;

void set_attr(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
void set_attr(onnx::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}
void set_attr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
void set_attr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

bool slice_keeps_batch(const backend::Attrs& attrs, const backend::Shape& x) {
  const Ints &start = attrs.get<Ints>("start"), &step = attrs.get<Ints>("step"), &size = attrs.get<Ints>("size");
  const Ints pinned = attrs.get_or("pinned", Ints{});
  return x.ndim() >= 1 && !start.empty() && start[0] == 0 && step[0] == 1 && size[0] == x[0] &&
         std::find(pinned.begin(), pinned.end(), 0) == pinned.end();
}

namespace {

using C = ExportContext;

DType out_dtype(C& c) { return c.out_type(0).dtype; }
// The dtype an op computing "in the promoted dtype" works in (comparisons).
DType promoted(C& c) {
  std::vector<backend::TensorType> ts;
  for (size_t i = 0; i < c.num_inputs(); ++i) ts.push_back(c.in_type(i));
  return backend::promote_types(ts).dtype;
}
const Ints& ints_attr(C& c, const char* name) { return c.attrs().get<Ints>(name); }
Ints dims_of(const backend::TensorType& t) { return Ints(t.shape.dims().begin(), t.shape.dims().end()); }

// ---- elementwise ----
// Whether ONNX's op (in the opset nn writes) takes 16-bit floats t: older
// ops (Sin, Cos, Softplus, Round) have no bf16.
bool onnx_takes(const char* op, DType t) {
  const char* type = t == DType::bf16 ? "tensor(bfloat16)" : t == DType::f16 ? "tensor(float16)" : nullptr;
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(op, kExportOpset);
  if (!type || !schema || schema->typeConstraintParams().empty()) return true;
  const std::vector<std::string>& allowed = schema->typeConstraintParams()[0].allowed_type_strs;
  return std::find(allowed.begin(), allowed.end(), type) != allowed.end();
}

// One ONNX op over the inputs converted to the result's dtype; where ONNX's
// op has no such type, in f32 and rounded back once, as nn computes 16-bit
// ops.
void same(C& c, const char* op) {
  const DType t = out_dtype(c);
  const DType work = (t == DType::f16 || t == DType::bf16) && !onnx_takes(op, t) ? DType::f32 : t;
  const std::string y = work == t ? c.out(0) : c.fresh();
  if (c.num_inputs() == 1) c.add(op, {c.in_as(0, work)}, {y});
  else c.add(op, {c.in_as(0, work), c.in_as(1, work)}, {y});
  if (work != t) set_attr(c.add("Cast", {y}, {c.out(0)}), "to", int64_t(onnx_type_of(t)));
}
// As same(), but a plain copy of integers (floor of an integer is itself).
void float_only(C& c, const char* op) {
  if (backend::is_floating(out_dtype(c))) return same(c, op);
  c.add("Identity", {c.in_as(0, out_dtype(c))}, {c.out(0)});
}
// As same(), but bool operands go to `bool_op` (relu of a bool: itself).
void no_bool(C& c, const char* op, const char* bool_op = "Identity") {
  if (out_dtype(c) != DType::boolean) return same(c, op);
  if (c.num_inputs() == 1) c.add(bool_op, {c.in(0)}, {c.out(0)});
  else c.add(bool_op, {c.in_as(0, DType::boolean), c.in_as(1, DType::boolean)}, {c.out(0)});
}
void compare(C& c, const char* op, bool negate = false) {
  DType t = promoted(c);
  // Less and Greater take no bools: compare them as integers.
  if (t == DType::boolean && std::string(op) != "Equal") t = DType::i32;
  const std::string a = c.in_as(0, t), b = c.in_as(1, t);
  if (!negate) {
    c.add(op, {a, b}, {c.out(0)});
    return;
  }
  c.add("Not", {c.op1(op, {a, b})}, {c.out(0)});
}
void logical(C& c, const char* op) {
  c.add(op, {c.in_as(0, DType::boolean), c.in_as(1, DType::boolean)}, {c.out(0)});
}

void leaky_relu(C& c) {
  set_attr(c.add("LeakyRelu", {c.in_as(0, out_dtype(c))}, {c.out(0)}), "alpha",
           float(c.attrs().get_or<double>("slope", 0.01)));
}
// Exact: 0.5 x (1 + erf(x / sqrt 2)); approximate: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
void gelu(C& c) {
  const DType t = out_dtype(c);
  const std::string x = c.in_as(0, t);
  std::string inner;
  if (c.attrs().get_or<bool>("approximate", false)) {
    const std::string cube = c.op1("Mul", {x, c.op1("Mul", {x, x})});
    const std::string poly = c.op1("Add", {x, c.op1("Mul", {cube, c.number(0.044715, t)})});
    inner = c.op1("Tanh", {c.op1("Mul", {poly, c.number(0.7978845608028654, t)})});
  } else {
    inner = c.op1("Erf", {c.op1("Mul", {x, c.number(0.7071067811865476, t)})});
  }
  const std::string half_x = c.op1("Mul", {x, c.number(0.5, t)});
  c.add("Mul", {half_x, c.op1("Add", {inner, c.number(1, t)})}, {c.out(0)});
}
void silu(C& c) {
  const std::string x = c.in_as(0, out_dtype(c));
  c.add("Mul", {x, c.op1("Sigmoid", {x})}, {c.out(0)});
}
void rsqrt(C& c) { c.add("Reciprocal", {c.op1("Sqrt", {c.in_as(0, out_dtype(c))})}, {c.out(0)}); }
void erfc(C& c) {
  const DType t = out_dtype(c);
  c.add("Sub", {c.number(1, t), c.op1("Erf", {c.in_as(0, t)})}, {c.out(0)});
}
void log1p(C& c) {
  const DType t = out_dtype(c);
  c.add("Log", {c.op1("Add", {c.in_as(0, t), c.number(1, t)})}, {c.out(0)});
}
void expm1(C& c) {
  const DType t = out_dtype(c);
  c.add("Sub", {c.op1("Exp", {c.in_as(0, t)}), c.number(1, t)}, {c.out(0)});
}
// Python's a % b: the sign of b. ONNX's Mod does that for integers; for
// floats fmod, moved by b where the signs differ.
void mod(C& c) {
  const DType t = out_dtype(c);
  const std::string a = c.in_as(0, t), b = c.in_as(1, t);
  if (!backend::is_floating(t)) return set_attr(c.add("Mod", {a, b}, {c.out(0)}), "fmod", int64_t(0));
  const std::string r = c.fresh();
  set_attr(c.add("Mod", {a, b}, {r}), "fmod", int64_t(1));
  const std::string zero = c.number(0, t);
  const std::string differ = c.op1("Xor", {c.op1("Less", {r, zero}), c.op1("Less", {b, zero})});
  const std::string move = c.op1("And", {differ, c.op1("Not", {c.op1("Equal", {r, zero})})});
  c.add("Where", {move, c.op1("Add", {r, b}), r}, {c.out(0)});
}
// Python's a // b. Integers: floor(a / b) through f64 (exact below 2^53).
// Floats as nn's kernel (backend/ops/elementwise_math.h, FloorDiv) and
// CPython: from fmod, so that 0.7 // 0.1 is 6, as 0.7 % 0.1 says (floor(a /
// b) gave 7); a divisor of 0 gives a / b. (A 0 quotient's sign is not kept.)
void floordiv(C& c) {
  const DType t = out_dtype(c);
  if (!backend::is_floating(t)) {
    const std::string q = c.op1("Floor", {c.op1("Div", {c.in_as(0, DType::f64), c.in_as(1, DType::f64)})});
    set_attr(c.add("Cast", {q}, {c.out(0)}), "to", int64_t(onnx_type_of(t)));
    return;
  }
  const std::string a = c.in_as(0, t), b = c.in_as(1, t), zero = c.number(0, t), one = c.number(1, t);
  const std::string m = c.fresh();
  set_attr(c.add("Mod", {a, b}, {m}), "fmod", int64_t(1));
  const std::string q = c.op1("Div", {c.op1("Sub", {a, m}), b});
  const std::string differ = c.op1("Xor", {c.op1("Less", {b, zero}), c.op1("Less", {m, zero})});
  const std::string down = c.op1("And", {c.op1("Not", {c.op1("Equal", {m, zero})}), differ});
  const std::string q1 = c.op1("Where", {down, c.op1("Sub", {q, one}), q});
  const std::string f = c.op1("Floor", {q1});
  const std::string up = c.op1("Greater", {c.op1("Sub", {q1, f}), c.number(0.5, t)});
  const std::string r = c.op1("Where", {up, c.op1("Add", {f, one}), f});
  c.add("Where", {c.op1("Equal", {b, zero}), c.op1("Div", {a, b}), r}, {c.out(0)});
}

// mean over the batch: sum(x, axes with 0) / count, the count a host
// number of the traced batch. With a dynamic batch the count is made from
// x's axis 0 at run time; the divisor otherwise.
std::string batch_count(C& c) {
  const ir::Node* s = c.producer(0);
  const backend::Tensor& k = c.known(1);
  if (!s || !s->op || s->op->id != OpId::sum || !k.defined() || k.numel() != 1) return "";
  const ir::ValueId x = s->inputs[0];
  const Ints& axes = s->attrs.get<Ints>("axes");
  const backend::Shape& xs = c.value_type(x).shape;
  if (c.value_batch(x) == 0 || std::find(axes.begin(), axes.end(), 0) == axes.end() || xs[0] == 0) return "";
  double count = 1;
  for (int64_t a : axes) count *= double(xs[int(a)]);
  if (backend::astype(k, DType::f64).item_double() != count) return "";
  const DType t = out_dtype(c);
  const std::string axis0 = c.fresh();
  onnx::NodeProto& shape = c.add("Shape", {c.value(x)}, {axis0});
  set_attr(shape, "start", int64_t(0));
  set_attr(shape, "end", int64_t(1));
  const std::string n = c.op1("Reshape", {axis0, c.ints({})});
  const std::string cast = c.fresh();
  set_attr(c.add("Cast", {n}, {cast}), "to", int64_t(onnx_type_of(t)));
  return c.op1("Mul", {cast, c.number(count / double(xs[0]), t)});
}
void div(C& c) {
  const std::string count = batch_count(c);
  if (count.empty()) return same(c, "Div");
  c.add("Div", {c.in_as(0, out_dtype(c)), count}, {c.out(0)});
}

void where(C& c) {
  const DType t = out_dtype(c);
  c.add("Where", {c.in_as(0, DType::boolean), c.in_as(1, t), c.in_as(2, t)}, {c.out(0)});
}
void cast(C& c) { set_attr(c.add("Cast", {c.in(0)}, {c.out(0)}), "to", int64_t(onnx_type_of(out_dtype(c)))); }
void identity(C& c) { c.add("Identity", {c.in(0)}, {c.out(0)}); }

// ---- reductions ----
// ReduceSum reads its axes as an input (opset 13), the others as an attribute.
void reduce(C& c, const char* op) {
  const Ints& axes = ints_attr(c, "axes");
  const int64_t keep = c.attrs().get_or<bool>("keepdims", false) ? 1 : 0;
  DType t = out_dtype(c);
  const DType work = t == DType::boolean ? DType::i32 : t;  // max of bools
  const std::string x = c.in_as(0, work);
  const std::string y = work == t ? c.out(0) : c.fresh();
  if (axes.empty()) {
    c.add("Identity", {x}, {y});
  } else if (std::string(op) == "ReduceSum") {
    set_attr(c.add(op, {x, c.ints(axes)}, {y}), "keepdims", keep);
  } else {
    onnx::NodeProto& n = c.add(op, {x}, {y});
    set_attr(n, "axes", axes);
    set_attr(n, "keepdims", keep);
  }
  if (work != t) set_attr(c.add("Cast", {y}, {c.out(0)}), "to", int64_t(onnx_type_of(t)));
  const bool batch_reduced = std::find(axes.begin(), axes.end(), 0) != axes.end();
  c.set_batch(0, batch_reduced || c.out_type(0).shape.ndim() == 0 ? 0 : c.batch(0));
}
void arg(C& c, const char* op) {
  const int64_t keep = c.attrs().get_or<bool>("keepdims", false) ? 1 : 0;
  // ArgMax has no bool kernel (ONNX lists none): as i32, true the larger.
  std::string x = c.in_type(0).dtype == DType::boolean ? c.in_as(0, DType::i32) : c.in(0);
  int64_t axis = 0;
  const bool flat = !c.attrs().has("axis");
  if (flat) x = c.op1("Reshape", {x, c.ints({-1})});
  else axis = c.attrs().get<int64_t>("axis");
  const std::string y = c.fresh();
  onnx::NodeProto& n = c.add(op, {x}, {y});
  set_attr(n, "axis", axis);
  set_attr(n, "keepdims", flat ? int64_t(0) : keep);
  if (flat) {  // nn's shape: [] or all ones
    c.add("Reshape", {y, c.ints(dims_of(c.out_type(0)))}, {c.out(0)});
    c.set_batch(0, 0);
  } else {
    c.add("Identity", {y}, {c.out(0)});
    c.set_batch(0, axis == 0 || c.out_type(0).shape.ndim() == 0 ? 0 : c.batch(0));
  }
}

// ---- linear algebra ----
void matmul(C& c) {
  const DType t = out_dtype(c);
  if (t == DType::boolean) {
    // ONNX's MatMul takes no bools: counted in i32, any count true (nn's
    // bool product is an or of ands).
    const std::string n = c.op1("MatMul", {c.in_as(0, DType::i32), c.in_as(1, DType::i32)});
    set_attr(c.add("Cast", {n}, {c.out(0)}), "to", int64_t(onnx_type_of(t)));
  } else {
    c.add("MatMul", {c.in_as(0, t), c.in_as(1, t)}, {c.out(0)});
  }
  // The batch stays axis 0 when it is a's rows or a batch dimension of b.
  const auto &a = c.in_type(0), &b = c.in_type(1);
  const int r = c.out_type(0).shape.ndim();
  int64_t f = 0;
  if (a.shape.ndim() >= 2 && a.shape.ndim() == r) f = std::max(f, c.batch(0));
  if (b.shape.ndim() >= 3 && b.shape.ndim() == r) f = std::max(f, c.batch(1));
  if (b.shape.ndim() == 2 && c.batch(1) > 0 && r == 2) c.fail("its right operand's batch axis is contracted away");
  c.set_batch(0, f);
}
void matmul_transposed(C& c, bool ta) {
  std::string a = c.in(0), b = c.in(1);
  auto t = [&](const std::string& x) {
    const std::string y = c.fresh();
    set_attr(c.add("Transpose", {x}, {y}), "perm", Ints{1, 0});
    return y;
  };
  if (ta) a = t(a);
  else b = t(b);
  c.add("MatMul", {a, b}, {c.out(0)});
  if ((!ta && c.batch(1) > 0)) c.fail("it moves the batch axis off axis 0");
  c.set_batch(0, ta ? 0 : c.batch(0));
}

// ---- shapes ----
void reshape(C& c) {
  Ints target = dims_of(c.out_type(0));
  if (c.batch(0) > 0) {
    // The batch is a factor of axis 0 of the result: -1 there keeps it dynamic.
    const int64_t n = c.batch_size();
    if (target.empty() || n == 0 || target[0] % n != 0)
      c.fail("with dynamic_batch=true the batch must stay a factor of axis 0, and this reshape of " +
             c.in_type(0).str() + " to " + c.out_type(0).str() +
             " does not keep it there (pass dynamic_batch=false to save_onnx for fixed sizes)");
    // -1 beside a 0 is ambiguous (ONNX refuses it).
    if (std::find(target.begin() + 1, target.end(), 0) != target.end())
      c.fail("with dynamic_batch=true axis 0 is written as -1, which a shape holding a 0 (" +
             c.out_type(0).str() + ") leaves ambiguous (pass dynamic_batch=false to save_onnx for fixed sizes)");
    c.set_batch(0, target[0] / n);
    target[0] = -1;
  } else {
    c.set_batch(0, 0);
  }
  onnx::NodeProto& node = c.add("Reshape", {c.in(0), c.ints(target)}, {c.out(0)});
  if (std::find(target.begin(), target.end(), 0) != target.end() && target[0] != -1)
    set_attr(node, "allowzero", int64_t(1));
}
void permute(C& c) {
  const Ints& dims = ints_attr(c, "dims");
  set_attr(c.add("Transpose", {c.in(0)}, {c.out(0)}), "perm", dims);
  if (c.batch(0) > 0 && !dims.empty() && dims[0] != 0)
    c.fail("with dynamic_batch=true the batch axis must stay axis 0, and this permute " + c.in_type(0).str() + " -> " +
           c.out_type(0).str() + " moves it (pass dynamic_batch=false to save_onnx for fixed sizes)");
}
void broadcast_to(C& c) {
  Ints shape = dims_of(c.out_type(0));
  if (c.batch(0) > 0) {
    if (c.in_type(0).shape.ndim() != int(shape.size())) c.fail("it moves the batch axis off axis 0");
    shape[0] = 1;  // Expand keeps the input's batch there
  }
  c.add("Expand", {c.in(0), c.ints(shape)}, {c.out(0)});
}
void concat(C& c) {
  const int64_t axis = c.attrs().get<int64_t>("axis");
  const DType t = out_dtype(c);
  // The inputs (and the casts in_as adds) before the Concat that reads
  // them: nodes are in topological order.
  std::vector<std::string> inputs;
  for (size_t i = 0; i < c.num_inputs(); ++i) inputs.push_back(c.in_as(i, t));
  onnx::NodeProto& n = c.add("Concat", {}, {c.out(0)});
  int64_t sum = 0, common = 0;
  bool with = false, without = false, unequal = false;
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    n.add_input(inputs[i]);
    const int64_t f = c.batch(i);
    (f > 0 ? with : without) = true;
    if (f > 0 && common > 0 && f != common) unequal = true;
    if (f > 0) common = f;
    sum += f;
  }
  const bool mixed = (with && without) || (axis != 0 && unequal);
  set_attr(n, "axis", axis);
  if (mixed) c.fail("it joins tensors that follow the batch with tensors that do not (pass dynamic_batch=false)");
  c.set_batch(0, axis == 0 ? sum : common);
}
// A strided region (start, step, size per axis; integer-indexed axes dropped).
void slice(C& c) {
  const Ints &start = ints_attr(c, "start"), &step = ints_attr(c, "step"), &size = ints_attr(c, "size");
  const Ints& drop = ints_attr(c, "drop");
  const backend::Shape& x = c.in_type(0).shape;
  // Part of a batch that follows the input: its bounds would stay the
  // traced ones (x[-1] read row 1 of every batch).
  if (c.batch(0) > 0 && !start.empty() && !slice_keeps_batch(c.attrs(), x))
    c.fail("it slices or indexes the batch axis (pass dynamic_batch=false)");
  Ints starts, ends, axes, steps;
  for (size_t d = 0; d < start.size(); ++d) {
    const bool all = start[d] == 0 && step[d] == 1 && size[d] == x[int(d)];
    if (all) continue;  // axis 0 of a batch: whatever the batch
    int64_t s = start[d], e;
    if (size[d] == 0) s = 0, e = 0;
    else if (step[d] > 0) e = s + (size[d] - 1) * step[d] + 1;
    else e = s + (size[d] - 1) * step[d] - 1, e = e < 0 ? INT64_MIN : e;
    starts.push_back(s), ends.push_back(e), axes.push_back(int64_t(d)), steps.push_back(size[d] == 0 ? 1 : step[d]);
  }
  const bool batch_kept = c.batch(0) > 0 && x.ndim() >= 1 && start[0] == 0 && step[0] == 1 && size[0] == x[0] &&
                          std::find(drop.begin(), drop.end(), 0) == drop.end();
  c.set_batch(0, batch_kept ? c.batch(0) : 0);
  std::string y = c.in(0);
  if (!axes.empty()) {
    const std::string o = drop.empty() ? c.out(0) : c.fresh();
    c.add("Slice", {y, c.ints(starts), c.ints(ends), c.ints(axes), c.ints(steps)}, {o});
    y = o;
  }
  if (!drop.empty()) c.add("Squeeze", {y, c.ints(drop)}, {c.out(0)});
  else if (axes.empty()) c.add("Identity", {y}, {c.out(0)});
}
// Rows of x by integer ids (embedding).
void take(C& c) {
  c.add("Gather", {c.in(0), c.in(1)}, {c.out(0)});  // axis 0
  c.set_batch(0, c.in_type(1).shape.ndim() >= 1 ? c.batch(1) : 0);
}
// nn's gather broadcasts axes of size 1 other than `axis` (index_select is
// a gather of ids [1, .., k, .., 1]); GatherElements takes indices of the
// output's shape. Both are expanded first to x's other axes, read at run
// time so that a dynamic batch follows, with the ids' size on `axis` (the
// plain GatherElements gave x[0, 0, ids] for every row, or failed the
// checker).
void gather(C& c) {
  const int64_t axis = c.attrs().get<int64_t>("axis");
  const backend::Shape &xs = c.in_type(0).shape, &is = c.in_type(1).shape;
  const int r = xs.ndim();
  bool same = true;
  for (int d = 0; d < r; ++d) same = same && (d == axis || xs[d] == is[d]);
  if (same) {
    set_attr(c.add("GatherElements", {c.in(0), c.in(1)}, {c.out(0)}), "axis", axis);
    return;
  }
  std::vector<int64_t> at_axis(size_t(r), 0), ids_size(size_t(r), 0);
  at_axis[size_t(axis)] = 1;
  ids_size[size_t(axis)] = is[int(axis)];
  const std::string mask = c.op1("Equal", {c.ints(at_axis), c.ints({1})});
  // Every other axis as broadcast between x and the ids (sizes equal or 1).
  const std::string x_shape = c.op1("Shape", {c.in(0)}), ids_shape = c.op1("Shape", {c.in(1)});
  const std::string both = c.op1("Max", {x_shape, ids_shape});
  const std::string ids_e = c.op1("Expand", {c.in(1), c.op1("Where", {mask, c.ints(ids_size), both})});
  const std::string x_e = c.op1("Expand", {c.in(0), c.op1("Where", {mask, x_shape, both})});
  set_attr(c.add("GatherElements", {x_e, ids_e}, {c.out(0)}), "axis", axis);
}
void scatter_add(C& c) {
  const DType t = out_dtype(c);
  // nn broadcasts ids and values over x's other axes, and each against the
  // other along `axis`; ScatterElements takes them of one shape: expanded.
  const int64_t axis = c.attrs().get<int64_t>("axis");
  const backend::Shape &x = c.in_type(0).shape, &ids = c.in_type(1).shape, &v = c.in_type(2).shape;
  Ints shape = dims_of(c.in_type(0));
  shape[size_t(axis)] = ids[int(axis)] == 1 ? v[int(axis)] : ids[int(axis)];
  std::string ids_name = c.in(1), v_name = c.in_as(2, t);
  for (auto [operand, name] : {std::pair{&ids, &ids_name}, std::pair{&v, &v_name}}) {
    if (Ints(operand->dims().begin(), operand->dims().end()) == shape) continue;
    Ints target = shape;
    if (c.batch(0) > 0 && axis != 0) {  // along axis 0 itself the ids' rows are the scatter's own
      if ((*operand)[0] != x[0]) c.fail("it spreads ids or values over the batch axis (pass dynamic_batch=false)");
      target[0] = 1;  // Expand keeps the operand's batch there
    }
    *name = c.op1("Expand", {*name, c.ints(target)});
  }
  onnx::NodeProto& n = c.add("ScatterElements", {c.in_as(0, t), ids_name, v_name}, {c.out(0)});
  set_attr(n, "axis", c.attrs().get<int64_t>("axis"));
  set_attr(n, "reduction", std::string("add"));
}
void one_hot(C& c) {
  const int64_t n = c.attrs().get<int64_t>("n");
  const std::string values = c.tensor(backend::from_doubles({0, 1}, backend::Shape{2}, out_dtype(c)));  // off, on
  // i64 ids: onnxruntime has no OneHot of i32 indices.
  set_attr(c.add("OneHot", {c.in_as(0, DType::i64), c.ints({n}), values}, {c.out(0)}), "axis", int64_t(-1));
  c.set_batch(0, c.in_type(0).shape.ndim() >= 1 ? c.batch(0) : 0);
}
void triangle(C& c, bool upper) {
  onnx::NodeProto& n = c.add("Trilu", {c.in(0), c.number(double(c.attrs().get_or<int64_t>("k", 0)), DType::i64)},
                             {c.out(0)});
  set_attr(n, "upper", int64_t(upper ? 1 : 0));
}
void cumsum(C& c) {
  onnx::NodeProto& n =
      c.add("CumSum", {c.in_as(0, out_dtype(c)), c.number(double(c.attrs().get<int64_t>("axis")), DType::i64)},
            {c.out(0)});
  if (c.attrs().get_or<bool>("reverse", false)) set_attr(n, "reverse", int64_t(1));
}

// ---- neural ----
void softmax(C& c, const char* op) {
  set_attr(c.add(op, {c.in(0)}, {c.out(0)}), "axis", c.attrs().get<int64_t>("axis"));
}
Ints pads_of(const Ints& p) { return {p[0], p[1], p[0], p[1]}; }
void conv2d(C& c) {
  const auto& w = c.in_type(1).shape;
  onnx::NodeProto& n = c.num_inputs() > 2 ? c.add("Conv", {c.in(0), c.in(1), c.in(2)}, {c.out(0)})
                                          : c.add("Conv", {c.in(0), c.in(1)}, {c.out(0)});
  set_attr(n, "kernel_shape", Ints{w[2], w[3]});
  set_attr(n, "strides", ints_attr(c, "stride"));
  set_attr(n, "pads", pads_of(ints_attr(c, "padding")));
  set_attr(n, "dilations", ints_attr(c, "dilation"));
  set_attr(n, "group", c.attrs().get<int64_t>("groups"));
}
void pool(C& c, const char* op) {
  if (c.node().outputs.size() > 1 && c.used(1)) c.fail("its argmax output has no ONNX form (it feeds a gradient)");
  onnx::NodeProto& n = c.add(op, {c.in(0)}, {c.out(0)});
  set_attr(n, "kernel_shape", ints_attr(c, "kernel"));
  set_attr(n, "strides", ints_attr(c, "stride"));
  set_attr(n, "pads", pads_of(ints_attr(c, "padding")));
  if (std::string(op) == "AveragePool") set_attr(n, "count_include_pad", int64_t(1));  // nn counts the padding
}
void batch_norm_apply(C& c) {
  const DType t = out_dtype(c);
  onnx::NodeProto& n = c.add("BatchNormalization",
                             {c.in_as(0, t), c.in_as(1, t), c.in_as(2, t), c.in_as(3, t), c.in_as(4, t)}, {c.out(0)});
  set_attr(n, "epsilon", float(c.attrs().get<double>("eps")));
}
// gamma / sqrt(var + eps)
void batch_norm_scale(C& c) {
  const DType t = out_dtype(c);
  const std::string s =
      c.op1("Sqrt", {c.op1("Add", {c.in_as(1, t), c.number(c.attrs().get<double>("eps"), t)})});
  c.add("Div", {c.in_as(0, t), s}, {c.out(0)});
}
void layer_norm(C& c) {
  for (size_t o = 1; o < c.node().outputs.size(); ++o)
    if (c.used(o)) c.fail("its mean and rstd outputs (kept for the gradient) have no ONNX form");
  const DType t = out_dtype(c);
  onnx::NodeProto& n = c.add("LayerNormalization", {c.in_as(0, t), c.in_as(1, t), c.in_as(2, t)}, {c.out(0)});
  set_attr(n, "axis", int64_t(c.in_type(0).shape.ndim() - c.in_type(1).shape.ndim()));
  set_attr(n, "epsilon", float(c.attrs().get<double>("eps")));
  // Its mean and variance in f64 for f64 data (the default stash_type is f32).
  if (t == DType::f64) set_attr(n, "stash_type", int64_t(onnx::TensorProto::DOUBLE));
}

// The mean over the batch of the rows' cross entropy: labels are class ids
// [N] or probabilities [N, C].
void cross_entropy(C& c) {
  const DType t = out_dtype(c);
  const std::string x = c.in_as(0, t);
  if (!backend::is_floating(c.in_type(1).dtype)) {
    set_attr(c.add("SoftmaxCrossEntropyLoss", {x, c.in_as(1, DType::i64)}, {c.out(0)}), "reduction",
             std::string("mean"));
    return;
  }
  const std::string logp = c.fresh();
  set_attr(c.add("LogSoftmax", {x}, {logp}), "axis", int64_t(-1));
  const std::string rows = c.fresh();
  set_attr(c.add("ReduceSum", {c.op1("Mul", {logp, c.in_as(1, t)}), c.ints({-1})}, {rows}), "keepdims", int64_t(0));
  const std::string mean = c.fresh();
  onnx::NodeProto& m = c.add("ReduceMean", {rows}, {mean});
  set_attr(m, "axes", Ints{0});
  set_attr(m, "keepdims", int64_t(0));
  c.add("Neg", {mean}, {c.out(0)});
}

#define E(id, ...) {OpId::id, [](C& c) { __VA_ARGS__; }}
const ExportEntry entries[] = {
    // unary
    E(exp, same(c, "Exp")), E(log, same(c, "Log")), E(sqrt, same(c, "Sqrt")), E(rsqrt, rsqrt(c)),
    E(sin, same(c, "Sin")), E(cos, same(c, "Cos")), E(tanh, same(c, "Tanh")), E(sigmoid, same(c, "Sigmoid")),
    E(leaky_relu, leaky_relu(c)), E(gelu, gelu(c)), E(softplus, same(c, "Softplus")), E(neg, same(c, "Neg")),
    E(copy, identity(c)),
    E(abs, no_bool(c, "Abs")), E(sign, no_bool(c, "Sign")), E(relu, no_bool(c, "Relu")),
    E(floor, float_only(c, "Floor")), E(ceil, float_only(c, "Ceil")), E(round, float_only(c, "Round")),
    E(logical_not, c.add("Not", {c.in_as(0, DType::boolean)}, {c.out(0)})),
    E(isnan, c.add("IsNaN", {c.in_as(0, backend::is_floating(c.in_type(0).dtype) ? c.in_type(0).dtype : DType::f32)},
                   {c.out(0)})),
    E(erf, same(c, "Erf")), E(erfc, erfc(c)), E(silu, silu(c)), E(log1p, log1p(c)), E(expm1, expm1(c)),
    // binary
    E(add, no_bool(c, "Add", "Or")), E(sub, same(c, "Sub")), E(mul, no_bool(c, "Mul", "And")), E(div, div(c)),
    E(pow, same(c, "Pow")), E(mod, mod(c)), E(floordiv, floordiv(c)), E(maximum, no_bool(c, "Max", "Or")),
    E(minimum, no_bool(c, "Min", "And")), E(eq, compare(c, "Equal")), E(ne, compare(c, "Equal", true)),
    E(lt, compare(c, "Less")), E(le, compare(c, "LessOrEqual")), E(gt, compare(c, "Greater")),
    E(ge, compare(c, "GreaterOrEqual")), E(logical_and, logical(c, "And")), E(logical_or, logical(c, "Or")),
    E(where, where(c)), E(cast, cast(c)), E(to_device, identity(c)),
    // reductions
    E(sum, reduce(c, "ReduceSum")), E(prod, reduce(c, "ReduceProd")), E(max, reduce(c, "ReduceMax")),
    E(min, reduce(c, "ReduceMin")), E(argmax, arg(c, "ArgMax")), E(argmin, arg(c, "ArgMin")),
    // linear algebra, shapes, indexing
    E(matmul, matmul(c)), E(matmul_tn, matmul_transposed(c, true)), E(matmul_nt, matmul_transposed(c, false)),
    E(reshape, reshape(c)), E(permute, permute(c)), E(broadcast_to, broadcast_to(c)), E(concat, concat(c)),
    E(slice, slice(c)), E(take, take(c)), E(gather, gather(c)), E(scatter_add, scatter_add(c)),
    E(one_hot, one_hot(c)), E(tril, triangle(c, false)), E(triu, triangle(c, true)), E(cumsum, cumsum(c)),
    // neural
    E(softmax, softmax(c, "Softmax")), E(log_softmax, softmax(c, "LogSoftmax")), E(conv2d, conv2d(c)),
    E(max_pool2d, pool(c, "MaxPool")), E(avg_pool2d, pool(c, "AveragePool")), E(batch_norm_apply, batch_norm_apply(c)),
    E(batch_norm_scale, batch_norm_scale(c)), E(layer_norm, layer_norm(c)),
    E(softmax_cross_entropy, cross_entropy(c)),
    // constants: computed by the walk
    {OpId::full, nullptr}, {OpId::arange, nullptr}, {OpId::linspace, nullptr}, {OpId::eye, nullptr},
};
#undef E

}  // namespace

const ExportEntry* find_export(OpId id) {
  for (const ExportEntry& e : entries)
    if (e.id == id) return &e;
  return nullptr;
}

std::string why_not_exported(OpId id) {
  switch (id) {
    case OpId::rand: case OpId::randn: case OpId::randint: case OpId::multinomial:
      return "it draws random numbers, which a model cannot (save_onnx traces dropout as in evaluation)";
    case OpId::batch_norm_train: case OpId::running_stat_update:
      return "batch norm in training mode (save_onnx traces the batch_norm built-in as in evaluation)";
    case OpId::all_reduce: case OpId::broadcast: case OpId::all_gather: case OpId::all_reduce_start:
    case OpId::all_reduce_wait:
      return "a collective talks to other processes, which a model cannot";
    case OpId::assign_slice: return "an assignment in place has no ONNX form";
    case OpId::fused: case OpId::matmul_epilogue:
      return "internal: graph passes made it, and save_onnx writes the graph before them";
    default: break;
  }
  const std::string name = backend::op_name(id);
  if (name.find("backward") != std::string::npos) return "a gradient op: save_onnx writes the forward pass only";
  return "";
}

std::vector<std::string> exportable_ops() {
  std::vector<std::string> names;
  for (const ExportEntry& e : entries) names.emplace_back(backend::op_name(e.id));
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace nn::onnx_io
