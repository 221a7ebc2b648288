// Tests of how values print (frontend/format.h): floats, tensors of every
// rank, summarised tensors, containers and functions, with exact strings.
#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>
#include <limits>

#include "frontend/format.h"
#include "frontend/function.h"

namespace {

using nn::backend::DType;
using nn::backend::Shape;
using nn::backend::Tensor;
using namespace nn::frontend;

// A CPU tensor holding `values` in row-major order (no op library needed).
template <class T>
Tensor make(const Shape& shape, std::initializer_list<T> values) {
  Tensor t = Tensor::empty(shape, nn::backend::dtype_of<T>());
  REQUIRE(int64_t(values.size()) == t.numel());
  T* p = t.data<T>();
  for (T v : values) *p++ = v;
  return t;
}

// A CPU tensor whose element i is i (converted to T).
template <class T>
Tensor iota(const Shape& shape) {
  Tensor t = Tensor::empty(shape, nn::backend::dtype_of<T>());
  T* p = t.data<T>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = T(i);
  return t;
}

}  // namespace

TEST_CASE("format_float: shortest round trip, Python layout") {
  CHECK(format_float(2.0) == "2.0");
  CHECK(format_float(0.1) == "0.1");
  CHECK(format_float(-2.5) == "-2.5");
  CHECK(format_float(123.456) == "123.456");
  CHECK(format_float(0.0) == "0.0");
  CHECK(format_float(-0.0) == "-0.0");
  CHECK(format_float(0.0001) == "0.0001");
  CHECK(format_float(1e-05) == "1e-05");
  CHECK(format_float(1.5e-07) == "1.5e-07");
  CHECK(format_float(1e15) == "1000000000000000.0");
  CHECK(format_float(1e16) == "1e+16");
  CHECK(format_float(1e20) == "1e+20");
  CHECK(format_float(1.5e300) == "1.5e+300");
  CHECK(format_float(5e-324) == "5e-324");
  CHECK(format_float(1.0 / 3.0) == "0.3333333333333333");
  CHECK(format_float(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(format_float(-std::numeric_limits<double>::infinity()) == "-inf");
  CHECK(format_float(std::nan("")) == "nan");
  CHECK(format_float32(0.1f) == "0.1");
  CHECK(format_float32(16777216.0f) == "16777216.0");
}

TEST_CASE("0-d tensors print their bare value") {
  CHECK(format_tensor(make<float>({}, {0.1f})) == "0.1");  // the float's digits, not the double's
  CHECK(format_tensor(make<float>({}, {1e20f})) == "1e+20");
  CHECK(format_tensor(make<float>({}, {1e-05f})) == "1e-05");
  CHECK(format_tensor(make<float>({}, {-0.0f})) == "-0.0");
  CHECK(format_tensor(make<float>({}, {std::numeric_limits<float>::quiet_NaN()})) == "nan");
  CHECK(format_tensor(make<float>({}, {-std::numeric_limits<float>::infinity()})) == "-inf");
  CHECK(format_tensor(make<double>({}, {0.1})) == "0.1");
  CHECK(format_tensor(make<int64_t>({}, {-42})) == "-42");
  CHECK(format_tensor(make<int32_t>({}, {7})) == "7");
  CHECK(format_tensor(make<bool>({}, {true})) == "true");
  CHECK(format_tensor(make<float>({}, {3.0f}), false) == "3.0");
}

TEST_CASE("f16 and bf16 elements print the shortest digits that read back to them") {
  // Bit patterns: f16 0x2e66 is 0.0999755859375 (the f16 nearest 0.1), 0x3c01
  // is 1 + 2^-10 (1.001 is nearer it than 1.0 or 1 + 2^-9), 0x7bff is 65504
  // (f16's largest; 65500 rounds to it), 0x6801 is 2050 (between 2048 and
  // 2052), 0x0001 is 2^-24 (6e-08 is nearest it, 5e-08 too far); bf16 0x3dcd
  // is 0.10009765625, 0x3f80 is 1.0.
  auto half = [](DType d, std::initializer_list<uint16_t> bits) {
    Tensor t = Tensor::empty({int64_t(bits.size())}, d);
    uint16_t* p = t.data<uint16_t>();
    for (uint16_t b : bits) *p++ = b;
    return t;
  };
  CHECK(format_tensor(half(DType::f16, {0x2e66, 0x3c01, 0x7bff, 0x6801, 0x0001, 0x8000})) ==
        "f16[6] [0.1, 1.001, 65500.0, 2050.0, 6e-08, -0.0]");
  CHECK(format_tensor(half(DType::f16, {0x7c00, 0xfc00, 0x7e00})) == "f16[3] [inf, -inf, nan]");
  CHECK(format_tensor(half(DType::bf16, {0x3dcd, 0x3f80})) == "bf16[2] [0.1, 1.0]");
  Tensor zero_d = Tensor::empty({}, DType::f16);
  *zero_d.data<uint16_t>() = 0x4248;  // 3.140625: 3.14 is the shortest that reads back to it
  CHECK(format_tensor(zero_d) == "3.14");
}

TEST_CASE("1-d tensors print on the header's line") {
  CHECK(format_tensor(make<int64_t>({3}, {1, 2, 3})) == "i64[3] [1, 2, 3]");
  CHECK(format_tensor(make<float>({3}, {0.1f, 2.0f, -1e-05f})) == "f32[3] [0.1, 2.0, -1e-05]");
  CHECK(format_tensor(make<bool>({2}, {true, false})) == "bool[2] [true, false]");
  CHECK(format_tensor(make<int64_t>({3}, {1, 2, 3}), false) == "[1, 2, 3]");
  CHECK(format_tensor(make<double>({1}, {1e20})) == "f64[1] [1e+20]");
}

TEST_CASE("2-d tensors: rows on their own lines, columns aligned") {
  Tensor t = make<float>({2, 3}, {1.0f, 2.5f, -3.0f, 4.0f, 5.0f, 6.0f});
  CHECK(format_tensor(t) ==
        "f32[2, 3]\n"
        "[[1.0, 2.5, -3.0],\n"
        " [4.0, 5.0,  6.0]]");
  CHECK(format_tensor(t, false) ==
        "[[1.0, 2.5, -3.0],\n"
        " [4.0, 5.0,  6.0]]");
}

TEST_CASE("negative numbers align right") {
  Tensor t = make<int64_t>({2, 2}, {-10, 2, 3, -4});
  CHECK(format_tensor(t) ==
        "i64[2, 2]\n"
        "[[-10,  2],\n"
        " [  3, -4]]");
}

TEST_CASE("bool matrices") {
  Tensor t = make<bool>({2, 2}, {true, false, false, true});
  CHECK(format_tensor(t) ==
        "bool[2, 2]\n"
        "[[ true, false],\n"
        " [false,  true]]");
}

TEST_CASE("3-d tensors separate their blocks with a blank line") {
  CHECK(format_tensor(iota<int32_t>({2, 2, 2})) ==
        "i32[2, 2, 2]\n"
        "[[[0, 1],\n"
        "  [2, 3]],\n"
        "\n"
        " [[4, 5],\n"
        "  [6, 7]]]");
  CHECK(format_tensor(iota<int64_t>({1, 2, 3})) ==
        "i64[1, 2, 3]\n"
        "[[[0, 1, 2],\n"
        "  [3, 4, 5]]]");
}

TEST_CASE("empty tensors") {
  CHECK(format_tensor(Tensor::empty({0}, DType::f32)) == "f32[0] []");
  CHECK(format_tensor(Tensor::empty({2, 0}, DType::i64)) == "i64[2, 0] []");
  CHECK(format_tensor(Tensor::empty({0}, DType::f32), false) == "[]");
}

TEST_CASE("tensors over 1000 elements are summarised") {
  CHECK(format_tensor(iota<float>({2000})) == "f32[2000] cpu [0.0, 1.0, 2.0, ..., 1997.0, 1998.0, 1999.0]");
  CHECK(format_tensor(iota<int64_t>({40, 50})) ==
        "i64[40, 50] cpu\n"
        "[[   0,    1,    2, ...,   47,   48,   49],\n"
        " [  50,   51,   52, ...,   97,   98,   99],\n"
        " [ 100,  101,  102, ...,  147,  148,  149],\n"
        " ...,\n"
        " [1850, 1851, 1852, ..., 1897, 1898, 1899],\n"
        " [1900, 1901, 1902, ..., 1947, 1948, 1949],\n"
        " [1950, 1951, 1952, ..., 1997, 1998, 1999]]");
  // A short axis is shown whole even when the tensor is summarised.
  CHECK(format_tensor(iota<int64_t>({2, 1000})) ==
        "i64[2, 1000] cpu\n"
        "[[   0,    1,    2, ...,  997,  998,  999],\n"
        " [1000, 1001, 1002, ..., 1997, 1998, 1999]]");
  // 1000 elements exactly is not summarised.
  std::string full = format_tensor(iota<int32_t>({1000}));
  CHECK(full.find("...") == std::string::npos);
  CHECK(full.rfind("i32[1000] [0, 1, 2, 3,", 0) == 0);
  // Rank 3: the elided block sits between blank lines.
  std::string cube = format_tensor(iota<int32_t>({10, 10, 20}));
  CHECK(cube.rfind("i32[10, 10, 20] cpu\n[[[   0,    1,    2, ...,   17,   18,   19],\n", 0) == 0);
  CHECK(cube.find("]],\n\n ...,\n\n [[") != std::string::npos);
  CHECK(cube.find("  ...,\n") != std::string::npos);
}

TEST_CASE("host values") {
  CHECK(to_repr(Value()) == "none");
  CHECK(to_repr(Value(true)) == "true");
  CHECK(to_repr(Value(false)) == "false");
  CHECK(to_repr(Value(int64_t(-3))) == "-3");
  CHECK(to_repr(Value(2.0)) == "2.0");
  CHECK(to_repr(Value(1e-05)) == "1e-05");
  CHECK(to_repr(Value(RangeValue{0, 5})) == "0..5");
  CHECK(to_repr(Value(DType::f32)) == "f32");
  CHECK(to_repr(Value(DType::boolean)) == "bool");
  CHECK(to_repr(Value(DeviceValue{nn::backend::cpu_device()})) == "cpu");
}

TEST_CASE("strings: raw for str, quoted for repr") {
  Value s(std::string("a \"b\"\n\tc\\"));
  CHECK(to_str(s) == "a \"b\"\n\tc\\");
  CHECK(to_repr(s) == "\"a \\\"b\\\"\\n\\tc\\\\\"");
  CHECK(to_repr(Value(std::string("\x01"))) == "\"\\x01\"");
  CHECK(to_str(Value(2.5)) == "2.5");
}

TEST_CASE("containers") {
  CHECK(to_repr(Value(make_list())) == "[]");
  CHECK(to_repr(Value(make_tuple({}))) == "()");
  CHECK(to_repr(Value(make_tuple({Value(1)}))) == "(1,)");
  CHECK(to_repr(Value(make_tuple({Value(1), Value(2)}))) == "(1, 2)");
  CHECK(to_repr(Value(make_record())) == "{}");

  RecordPtr r = make_record();
  r->set(intern("w"), Value(1.5));
  r->set(intern("b"), Value());
  Value nested(make_list({Value(1), Value("a"), Value(make_tuple({Value(2)})), Value(r), Value(RangeValue{0, 5}),
                          Value(DType::f32), Value(make_list({Value("x")}))}));
  CHECK(to_repr(nested) == "[1, \"a\", (2,), {w: 1.5, b: none}, 0..5, f32, [\"x\"]]");
  // str() of a container still quotes the strings inside it.
  CHECK(to_str(nested) == to_repr(nested));

  Value with_tensors(make_list({Value(make<int64_t>({2}, {1, 2})), Value(make<float>({}, {0.5f}))}));
  CHECK(to_repr(with_tensors) == "[i64[2] [1, 2], 0.5]");
}

TEST_CASE("containers that hold themselves") {
  RecordPtr r = make_record();
  r->set(intern("a"), Value(1));
  r->set(intern("me"), Value(r));
  CHECK(to_repr(Value(r)) == "{a: 1, me: {...}}");
  ListPtr l = make_list({Value(1)});
  l->items.push_back(Value(l));
  CHECK(to_repr(Value(l)) == "[1, [...]]");
  r->fields.clear();  // break the cycles so the test does not leak
  l->items.clear();
}

TEST_CASE("functions") {
  FunctionDef named;
  named.name = "f";
  FunctionDef lambda;
  FunctionDef graph;
  graph.name = "train_step";
  graph.is_graph = true;

  auto closure = [](const FunctionDef* def) {
    auto f = std::make_shared<Function>();
    f->kind = Function::Kind::Closure;
    f->def = std::shared_ptr<const FunctionDef>(def, [](const FunctionDef*) {});  // a local: not owned
    return FunctionPtr(f);
  };
  CHECK(to_repr(Value(closure(&named))) == "<fn f>");
  CHECK(to_repr(Value(closure(&lambda))) == "<fn>");
  CHECK(to_repr(Value(closure(&graph))) == "<graph train_step>");

  auto builtin = std::make_shared<Function>();
  builtin->kind = Function::Kind::Builtin;
  builtin->builtin = std::make_shared<Builtin>(Builtin{"sum", {}, false, nullptr});
  CHECK(to_repr(Value(FunctionPtr(builtin))) == "<built-in fn sum>");

  auto bound = std::make_shared<Function>();
  bound->kind = Function::Kind::Bound;
  bound->self = Value(1);
  bound->target = builtin;
  CHECK(to_repr(Value(FunctionPtr(bound))) == "<bound fn sum>");

  Value list(make_list({Value(1), Value("a"), Value(closure(&named))}));
  CHECK(to_repr(list) == "[1, \"a\", <fn f>]");
}
