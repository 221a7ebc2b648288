// File built-ins and formats: .npy (NumPy's own files in tests/data/npy and
// round trips), IDX, safetensors checkpoints (nested records), CSV, corrupt
// files giving exact diagnostics, atomic saves and allow_files.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "backend/ops.h"
#include "frontend/builtins/file_io.h"
#include "frontend/builtins/idx_format.h"
#include "frontend/builtins/npy_format.h"
#include "frontend/builtins/safetensors_format.h"
#include "frontend/format.h"
#include "frontend/interpreter.h"
#include "script_test_util.h"

using namespace nn::frontend;
using namespace nntest;
namespace fs = std::filesystem;
using nn::backend::DType;
using nn::backend::Tensor;

namespace {

// A fresh folder under the system's temp folder, removed with its contents.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "nn_test_files_XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
  size_t entries() const { return size_t(std::distance(fs::directory_iterator(path), fs::directory_iterator())); }
};

std::string fixture(const std::string& name) {
  const char* dir = std::getenv("NN_TEST_DATA");
  REQUIRE_MESSAGE(dir != nullptr, "NN_TEST_DATA is not set (ctest sets it)");
  return (fs::path(dir) / "npy" / name).string();
}

void write_bytes(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }
std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The message of the error a C++ call throws, "" when none.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const nn::backend::Error& e) {
    return e.what();
  }
  return "";
}
std::string npy_error(const std::string& path) {
  return error_of([&] { nn::frontend::npy::read(path); });
}

template <class T>
std::vector<T> values(const Tensor& t) {
  const T* p = t.data<T>();
  return std::vector<T>(p, p + t.numel());
}

// An .npy file by hand: version, header text (padded by us), data bytes.
std::string npy_bytes(const std::string& header, const std::string& data, int major = 1) {
  std::string h = header;
  h += '\n';
  std::string out = std::string("\x93NUMPY", 6) + char(major) + '\0';
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i) out += char((h.size() >> (8 * i)) & 0xFF);
  return out + h + data;
}
std::string f32_header(const std::string& shape) {
  return "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
}

}  // namespace

TEST_CASE("npy: NumPy's files read with their exact values") {
  using nn::frontend::npy::read;
  Tensor a = read(fixture("f32_2d.npy"));
  CHECK(a.type().str() == "f32[2, 3]");
  CHECK(values<float>(a) == std::vector<float>{1.5f, -2.0f, 3.25f, 0.0f, 1e-3f, -7.5f});
  Tensor b = read(fixture("f64_1d.npy"));
  CHECK(b.type().str() == "f64[4]");
  CHECK(values<double>(b) == std::vector<double>{0.1, 2.5, -3.0, 1e100});
  Tensor c = read(fixture("i64_3d.npy"));
  CHECK(c.type().str() == "i64[2, 3, 4]");
  for (int64_t k = 0; k < 24; ++k) CHECK(c.data<int64_t>()[k] == k - 12);
  Tensor d = read(fixture("i32_1d.npy"));
  CHECK(values<int32_t>(d) == std::vector<int32_t>{INT32_MIN, 0, INT32_MAX});
  Tensor e = read(fixture("bool_1d.npy"));
  CHECK(e.type().str() == "bool[4]");
  CHECK(values<bool>(e) == std::vector<bool>{true, false, true, true});
  Tensor f = read(fixture("f64_0d.npy"));
  CHECK(f.ndim() == 0);
  CHECK(f.item_double() == 3.5);
  CHECK(read(fixture("f32_empty.npy")).type().str() == "f32[0, 3]");
  Tensor v2 = read(fixture("f32_v2.npy"));
  CHECK(values<float>(v2) == std::vector<float>{1, 2, 3, 4});
  CHECK(v2.type().str() == "f32[2, 2]");
  // Fortran order (np.save of a transposed array): the same values as the
  // C-ordered arange they were made from.
  Tensor fo = read(fixture("fortran.npy"));
  CHECK(fo.type().str() == "f32[2, 3]");
  CHECK(values<float>(fo) == std::vector<float>{0, 1, 2, 3, 4, 5});
  Tensor fo3 = read(fixture("fortran_3d.npy"));
  CHECK(fo3.type().str() == "i64[2, 3, 4]");
  std::vector<int64_t> upto24(24);
  for (int i = 0; i < 24; ++i) upto24[size_t(i)] = i;
  CHECK(values<int64_t>(fo3) == upto24);
  // NumPy's float16 of 0.1 is 0.0999755859375, of 6e-8 the subnormal 2^-24.
  Tensor h = read(fixture("f16_1d.npy"));
  CHECK(h.type().str() == "f16[5]");
  CHECK(values<double>(nn::backend::astype(h, DType::f64)) ==
        std::vector<double>{1, -2.5, 65504, 0.0999755859375, 5.960464477539063e-08});
}

TEST_CASE("npy: what nn does not read is named") {
  CHECK(npy_error(fixture("big_endian.npy")) ==
        fixture("big_endian.npy") + ": big-endian data ('>i4') is not supported (nn reads <f2 <f4 <f8 <i4 <i8 |b1)");
  CHECK(npy_error(fixture("u8.npy")) == fixture("u8.npy") + ": unsupported dtype '|u1' (nn reads <f2 <f4 <f8 <i4 <i8 |b1)");
}

TEST_CASE("npy: nn writes the bytes NumPy writes, and reads them back") {
  TempDir tmp;
  for (const char* name :
       {"f32_2d.npy", "f64_1d.npy", "i64_3d.npy", "i32_1d.npy", "bool_1d.npy", "f64_0d.npy", "f32_empty.npy", "f16_1d.npy"}) {
    CAPTURE(name);
    Tensor t = nn::frontend::npy::read(fixture(name));
    nn::frontend::npy::write(t, tmp / name);
    CHECK(read_bytes(tmp / name) == read_bytes(fixture(name)));
  }
  Interpreter vm;
  vm.set_global("p", Value(tmp / "r.npy"));
  vm.run_code("t.nn", "let x = [[1, 2], [3, 4]]\nsave_npy(x, p)\nlet y = load_npy(p)");
  CHECK(to_str(*vm.find_global("y")) == to_str(*vm.find_global("x")));
  vm.run_code("t.nn", "save_npy(2.5, p)");
  CHECK(run(vm, "load_npy(p)") == "2.5");
  CHECK(vm.run_code("t.nn", "load_npy(p).dtype").as_dtype() == DType::f64);
}

TEST_CASE("npy: corrupt files are diagnostics, never allocations") {
  TempDir tmp;
  auto check = [&](const std::string& bytes, const std::string& expected) {
    std::string p = tmp / "bad.npy";
    write_bytes(p, bytes);
    CHECK(npy_error(p) == p + ": " + expected);
  };
  check("hello world", "not an .npy file (it does not start with \\x93NUMPY)");
  check("", "not an .npy file (it does not start with \\x93NUMPY)");
  check(std::string("\x93NUM", 4), "truncated: the preamble needs 8 bytes, the file has 4");
  check(std::string("\x93NUMPY\x05\x00", 8) + "xxxx", "unsupported .npy version 5.0 (nn reads 1.0, 2.0 and 3.0)");
  check(std::string("\x93NUMPY\x01\x00\xff\xff", 10) + "{}",
        "truncated: the header needs 65535 bytes at offset 10, only 2 remain");
  check(std::string("\x93NUMPY\x02\x00\xff\xff\xff\x7f", 12),
        "header too long (2147483647 bytes; nn reads up to 1048576)");
  check(npy_bytes(f32_header("(2, 3)"), std::string(20, '\0')),
        "truncated: the shape (2, 3) of '<f4' needs 24 bytes of data, the file has 20 after the header");
  check(npy_bytes(f32_header("(2, 3)"), std::string(28, '\0')),
        "data size mismatch: the shape (2, 3) of '<f4' needs 24 bytes of data, the file has 28 after the header");
  // A header claiming 10^18 elements: refused by comparing with the file size.
  check(npy_bytes(f32_header("(1000000000, 1000000000)"), std::string(8, '\0')),
        "truncated: the shape (1000000000, 1000000000) of '<f4' needs 4000000000000000000 bytes of data, the file "
        "has 8 after the header");
  check(npy_bytes(f32_header("(10000000000, 10000000000)"), ""),
        "its shape is too large (the element count overflows)");
  check(npy_bytes(f32_header("(1, 1, 1, 1, 1, 1, 1, 1, 1)"), ""), "has 9 dimensions; nn tensors have at most 8");
  check(npy_bytes("{'descr': '<f4', 'fortran_order': False}", ""), "bad header: no 'shape' key");
  check(npy_bytes("not a dict", ""), "bad header: expected `{` at `not a dict\n`");
  check(npy_bytes("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}", ""),
        "structured dtypes are not supported (descr is not a string)");
  check(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", ""),
        "bad header: expected a non-negative integer at `-1,)}\n`");
  // Version 2.0 written by hand is read like 1.0.
  std::string p = tmp / "v2.npy";
  write_bytes(p, npy_bytes(f32_header("(1,)"), std::string("\0\0\x80\x3f", 4), 2));
  CHECK(nn::frontend::npy::read(p).item_double() == 1.0);
  CHECK(npy_error(tmp / "missing.npy") == tmp / "missing.npy" + ": cannot open: No such file or directory");
  CHECK(npy_error(tmp.path.string()) == tmp.path.string() + ": is a folder, not a file");
}

TEST_CASE("idx: MNIST-style files, their dtypes and their errors") {
  TempDir tmp;
  using nn::frontend::idx::read;
  std::string p = tmp / "a.idx";
  // ubyte, 2 x 3
  write_bytes(p, std::string("\0\0\x08\x02\0\0\0\x02\0\0\0\x03", 12) + std::string("\x00\x01\x02\x7f\x80\xff", 6));
  Tensor t = read(p);
  CHECK(t.type().str() == "i64[2, 3]");
  CHECK(values<int64_t>(t) == std::vector<int64_t>{0, 1, 2, 127, 128, 255});
  Tensor f = read(p, DType::f32);
  CHECK(values<float>(f) == std::vector<float>{0, 1, 2, 127, 128, 255});
  // sbyte 1-d (labels-like), short, int, float, double: big-endian decoding.
  write_bytes(p, std::string("\0\0\x09\x01\0\0\0\x02\xff\x05", 10));
  CHECK(values<int64_t>(read(p)) == std::vector<int64_t>{-1, 5});
  write_bytes(p, std::string("\0\0\x0b\x01\0\0\0\x02\xff\xfe\x01\x00", 12));
  CHECK(values<int64_t>(read(p)) == std::vector<int64_t>{-2, 256});
  write_bytes(p, std::string("\0\0\x0c\x01\0\0\0\x01\x80\0\0\0", 12));
  CHECK(values<int64_t>(read(p)) == std::vector<int64_t>{INT32_MIN});
  write_bytes(p, std::string("\0\0\x0d\x01\0\0\0\x01\x3f\xc0\0\0", 12));
  CHECK(read(p).type().str() == "f32[1]");
  CHECK(read(p).item_double() == 1.5);
  CHECK(read(p, DType::i32).item_int() == 1);
  write_bytes(p, std::string("\0\0\x0e\x01\0\0\0\x01\xc0\x04\0\0\0\0\0\0", 16));
  CHECK(read(p).type().str() == "f64[1]");
  CHECK(read(p).item_double() == -2.5);

  auto check = [&](const std::string& bytes, const std::string& expected) {
    write_bytes(p, bytes);
    CHECK(error_of([&] { read(p); }) == p + ": " + expected);
  };
  check(std::string("\x01\0\x08\x02", 4), "not an IDX file (bad magic 0x01000802: the first two bytes must be 0)");
  check(std::string("\0\0", 2), "truncated: the magic number needs 4 bytes, the file has 2");
  check(std::string("\0\0\x0a\x01", 4), "not an IDX file (unknown data type 0x0a in magic 0x00000a01)");
  check(std::string("\0\0\x08\x02\0\0\0\x02", 8),
        "truncated: the shape (2 dimensions) needs 8 bytes at offset 4, only 4 remain");
  check(std::string("\0\0\x08\x01\0\0\0\x03\x01", 9),
        "truncated: the shape (3) of ubyte needs 3 bytes of data, the file has 1 after the header");
  check(std::string("\0\0\x08\x01\0\0\0\x01\x01\x02", 10),
        "data size mismatch: the shape (1) of ubyte needs 1 bytes of data, the file has 2 after the header");
  check(std::string("\0\0\x0e\x03\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 16),
        "its shape is too large (the element count overflows)");
  check(std::string("\0\0\x08\x02\xff\xff\xff\xff\xff\xff\xff\xff", 12),
        "truncated: the shape (4294967295, 4294967295) of ubyte needs 18446744065119617025 bytes of data, the file "
        "has 0 after the header");
}

// A safetensors file's JSON header (after its 8-byte little-endian length)
// and its data.
std::pair<std::string, std::string> header_and_data(const std::string& bytes) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = n << 8 | uint8_t(bytes[size_t(i)]);
  return {bytes.substr(8, n), bytes.substr(8 + n)};
}

TEST_CASE("safetensors: nested records round trip through dotted names") {
  TempDir tmp;
  Interpreter vm;
  vm.set_global("p", Value(tmp / "ck.safetensors"));
  vm.run_code("t.nn",
              "let m = {layers: [{w: [[1.5, 2.0]], b: [0.5]}, {w: [[3.0], [4.0]], b: [-1.0]}],\n"
              "         step: tensor(7), mask: [true, false], f: fn(x) { x }, d: zeros([2], f64),\n"
              "         hp: {kind: \"M\", eps: 1e-5, n: -3, on: true, b: none, big: 1.0 / 0.0, nan: 0.0 / 0.0}}\n"
              "save(m, p)\n"
              "let r = load(p)\n");
  CHECK(run(vm, "r.layers[1].w") == run(vm, "m.layers[1].w"));
  CHECK(run(vm, "r.layers[0].b") == "f32[1] [0.5]");
  CHECK(run(vm, "r.step") == "7");
  CHECK(run(vm, "r.mask") == "bool[2] [true, false]");
  CHECK(vm.run_code("t.nn", "r.d.dtype").as_dtype() == DType::f64);
  CHECK(vm.run_code("t.nn", "len(r)").as_int() == 5);  // the function was not saved
  CHECK(run(vm, "r.hp") ==
        "{kind: \"M\", eps: 1e-05, n: -3, on: true, b: none, big: inf, nan: nan}");
  // The file as the format says: 8-byte length, JSON header, aligned data.
  std::string bytes = read_bytes(tmp / "ck.safetensors");
  const auto [header, data] = header_and_data(bytes);
  const uint64_t n = header.size();
  CHECK((8 + n) % 8 == 0);
  CHECK(header.find("\"__metadata__\":{\"format\":\"nn\",\"nn.values\":\"{") != std::string::npos);
  CHECK(header.find("\"layers.0.w\":{\"dtype\":\"F32\",\"shape\":[1,2],\"data_offsets\":[24,32]}") !=
        std::string::npos);
  CHECK(header.find("\"mask\":{\"dtype\":\"BOOL\",\"shape\":[2],\"data_offsets\":[48,50]}") != std::string::npos);
  CHECK(header.find("\"step\":{\"dtype\":\"I64\",\"shape\":[],\"data_offsets\":[0,8]}") != std::string::npos);
  CHECK(bytes.size() == 8 + n + 8 + 4 + 8 + 4 + 8 + 2 + 16);
  // A list at the top comes back as a list; an empty record as an empty record.
  CHECK(run(vm, "let a = [1, 2]\nlet b = [3.0]\nsave([a, b], p)\nload(p)") ==
        "[i64[2] [1, 2], f32[1] [3.0]]");
  CHECK(run(vm, "save({}, p)\nload(p)") == "{}");
}

TEST_CASE("safetensors: f16 and bf16 tensors are written as F16 and BF16, little-endian, and read back") {
  TempDir tmp;
  Interpreter vm;
  vm.set_global("p", Value(tmp / "half.safetensors"));
  vm.run_code("t.nn", "let m = {h: astype([1.0, -2.5], f16), b: astype([1.0, -2.5], bf16)}\nsave(m, p)\nlet r = load(p)\n");
  CHECK(run(vm, "r.h") == "f16[2] [1.0, -2.5]");
  CHECK(run(vm, "r.b") == "bf16[2] [1.0, -2.5]");
  const auto [header, data] = header_and_data(read_bytes(tmp / "half.safetensors"));
  CHECK(header.find("\"h\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4]}") != std::string::npos);
  CHECK(header.find("\"b\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[4,8]}") != std::string::npos);
  // IEEE half 1.0 = 0x3C00, -2.5 = 0xC100; bfloat16 1.0 = 0x3F80, -2.5 = 0xC020.
  CHECK(data == std::string("\x00\x3C\x00\xC1\x80\x3F\x20\xC0", 8));
}

TEST_CASE("safetensors: bad files and bad values are diagnostics") {
  TempDir tmp;
  std::string p = tmp / "bad.safetensors";
  auto file = [](const std::string& json, const std::string& data) {
    std::string out(8, '\0');
    for (int i = 0; i < 8; ++i) out[size_t(i)] = char((uint64_t(json.size()) >> (8 * i)) & 0xFF);
    return out + json + data;
  };
  auto check = [&](const std::string& bytes, const std::string& expected) {
    write_bytes(p, bytes);
    CHECK(error_of([&] { nn::frontend::safetensors::read(p); }) == p + ": " + expected);
  };
  check("abc", "truncated: the header length needs 8 bytes at offset 0, only 3 remain");
  check(std::string("\xff\xff\xff\xff\0\0\0\0", 8), "header too long (4294967295 bytes; nn reads up to 100000000)");
  check(std::string("\x10\0\0\0\0\0\0\0{}", 10), "truncated: the header needs 16 bytes at offset 8, only 2 remain");
  check(file("{\"a\": ", ""), "bad header: not valid JSON");
  check(file("[1, 2]", ""), "bad header: not a JSON object");
  check(file(R"({"w": {"dtype": "U16", "shape": [1], "data_offsets": [0, 2]}})", "ab"),
        "tensor `w`: unsupported dtype U16 (nn reads F32 F64 I32 I64 BOOL F16 BF16)");
  check(file(R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}})", "abcd"),
        "tensor `w`: shape/data size mismatch: the shape [2] of F32 needs 8 bytes, its data_offsets span 4");
  check(file(R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})", "abcd"),
        "truncated: tensor `w` ends at byte 8 of the data, the file has 4 bytes of data");
  check(file(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})", "abcdefgh"),
        "data size mismatch: the header's tensors end at byte 4 of the data, the file has 8 bytes of data");
  check(file(R"({"w": {"dtype": "F32", "shape": [1000000, 1000000, 1000000], "data_offsets": [0, 4]}})", "abcd"),
        "tensor `w`: shape/data size mismatch: the shape [1000000, 1000000, 1000000] of F32 needs "
        "4000000000000000000 bytes, its data_offsets span 4");
  check(file(R"({"w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}})", "abcd"),
        "bad header: tensor `w` has a shape that is not a list of sizes");
  check(file(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [4, 0]}})", "abcd"),
        "bad header: tensor `w` has no valid data_offsets [begin, end]");
  check(file(R"({"w": {"dtype": "F32", "shape": [1]}})", "abcd"),
        "bad header: tensor `w` has no valid data_offsets [begin, end]");
  // The tensors' data tiles the data: no overlap, no gap.
  check(file(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},)"
             R"( "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})",
             "abcdefgh"),
        "bad header: tensor `b` (data_offsets [4, 8]) overlaps tensor `a` (data_offsets [0, 8])");
  check(file(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},)"
             R"( "b": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]}})",
             "abcdefghijkl"),
        "bad header: 4 bytes of the data before tensor `b` (data_offsets [8, 12]) belong to no tensor");
  // Deep nesting is not a stack overflow.
  check(file(std::string(100000, '[') + std::string(100000, ']'), ""), "bad header: not a JSON object");

  Interpreter vm;
  vm.set_global("p", Value(p));
  // A file from another tool (no nn.values): tensors in file order, nested by their names.
  write_bytes(p, file(R"({"x.1": {"dtype": "I32", "shape": [], "data_offsets": [4, 8]},)"
                      R"( "x.0": {"dtype": "I32", "shape": [], "data_offsets": [0, 4]},)"
                      R"( "y": {"dtype": "BOOL", "shape": [2], "data_offsets": [8, 10]}})",
                      std::string("\x01\0\0\0\x02\0\0\0\x01\x05", 10)));
  CHECK(run(vm, "load(p)") == "{x: [1, 2], y: bool[2] [true, true]}");
  write_bytes(p, file(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},)"
                      R"( "a.b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})",
                      "abcdefgh"));
  CHECK(script_error(vm, "load(p)") == p + ": names clash: `a` is a value and has fields (`a.b`)");
  // A name of 10,001 dotted parts: refused (3,000,000 overflowed the stack
  // that builds the records); 10,000 parts load.
  std::string deep = "a";
  for (int i = 0; i < 10000; ++i) deep += ".a";
  write_bytes(p, file(R"({")" + deep + R"(": {"dtype": "F32", "shape": [], "data_offsets": [0, 4]}})", "abcd"));
  CHECK(script_error(vm, "load(p)") == p + ": a name of more than 10000 dotted parts (`" + deep.substr(0, 40) + "...`)");
  write_bytes(p, file(R"({")" + deep.substr(2) + R"(": {"dtype": "F32", "shape": [], "data_offsets": [0, 4]}})", "abcd"));
  CHECK(run(vm, "let r = load(p)\ntype(r.a.a.a)") == "record");
  CHECK(script_error(vm, "save({a: {b: [zeros([1]), 0..2]}}, p)") ==
        "save: `a.b.1` is a range, which save cannot write (it writes tensors, numbers, strings, bools and none, "
        "in records, lists and tuples)");
  write_bytes(p, file(R"({"__metadata__": {"nn.values": "[1]"}})", ""));
  CHECK(script_error(vm, "load(p)") == p + ": bad __metadata__: nn.values is not a JSON object");
  write_bytes(p, file(R"({"__metadata__": {"nn.values": "{\"w\": {}}"}})", ""));
  CHECK(script_error(vm, "load(p)") ==
        p + ": bad __metadata__: nn.values names tensor `w`, which the file does not hold");
  CHECK(script_error(vm, "save(zeros([2]), p)") ==
        "save needs a record of tensors, not a tensor f32[2] (save_npy writes one tensor)");
}

TEST_CASE("saves are atomic: a failed save leaves the old file and no temporary file") {
  TempDir tmp;
  std::string p = tmp / "ck.safetensors";
  Interpreter vm;
  vm.set_global("p", Value(p));
  vm.run_code("t.nn", "save({w: [1.0, 2.0]}, p)");
  const std::string old = read_bytes(p);
  // A value that is not a tensor: refused before the file is touched.
  CHECK(!script_error(vm, "save({w: [3.0], lr: 0..2}, p)").empty());
  CHECK(read_bytes(p) == old);
  CHECK(tmp.entries() == 1);
  {
    // Stopped mid-way (an exception, a crash): the temporary file goes.
    fileio::AtomicFile f(p);
    f.write("partial", 7);
    CHECK(fs::exists(f.temp_path()));
    CHECK(fs::path(f.temp_path()).parent_path() == tmp.path);
  }
  CHECK(read_bytes(p) == old);
  CHECK(tmp.entries() == 1);
  {
    // The rename fails (the target became a non-empty folder meanwhile).
    std::string q = tmp / "x.npy";
    fileio::AtomicFile f(q);
    f.write("new", 3);
    fs::create_directories(fs::path(q) / "inside");
    std::string err = error_of([&] { f.commit(); });
    CHECK(err.rfind(q + ": cannot replace the file: ", 0) == 0);
    fs::remove_all(q);
  }
  CHECK(tmp.entries() == 1);
  // A folder that does not exist, and a folder as the target.
  CHECK(script_error(vm, "save({w: [1.0]}, p + \"/no/x.st\")") ==
        p + "/no/x.st: the folder `" + p + "/no` does not exist");
  CHECK(script_error(vm, "save_npy([1.0], \"" + (tmp / "none") + "/x.npy\")") ==
        tmp / "none" + "/x.npy: the folder `" + (tmp / "none") + "` does not exist");
  CHECK(script_error(vm, "save_npy([1.0], \"" + tmp.path.string() + "\")") ==
        tmp.path.string() + ": is a folder, not a file");
  CHECK(read_bytes(p) == old);
}

TEST_CASE("saves write through links; a FIFO or a device is refused, never replaced") {
  TempDir tmp;
  Interpreter vm;
  vm.set_global("dir", Value(tmp.path.string()));
  vm.run_code("t.nn", "save({a: ones([2])}, dir + \"/real.st\")");
  // Through a link to a link (relative): the file they name gets the new
  // contents, and both links stay links.
  fs::create_symlink("real.st", tmp / "link.st");
  fs::create_symlink("link.st", tmp / "link2.st");
  vm.run_code("t.nn", "save({a: zeros([3])}, dir + \"/link2.st\")");
  CHECK(fs::is_symlink(tmp / "link.st"));
  CHECK(fs::is_symlink(tmp / "link2.st"));
  CHECK(run(vm, "load(dir + \"/real.st\").a") == "f32[3] [0.0, 0.0, 0.0]");
  // A link to a file not there yet makes that file.
  fs::create_symlink("new.st", tmp / "to_new.st");
  vm.run_code("t.nn", "save_npy(ones([1]), dir + \"/to_new.st\")");
  CHECK(fs::is_regular_file(tmp / "new.st"));
  CHECK(fs::is_symlink(tmp / "to_new.st"));
  // Links in a loop, and a FIFO.
  fs::create_symlink("loop_b", tmp / "loop_a");
  fs::create_symlink("loop_a", tmp / "loop_b");
  CHECK(script_error(vm, "save({a: ones([1])}, dir + \"/loop_a\")") ==
        tmp / "loop_a" + ": is a chain of links that does not end");
  REQUIRE(mkfifo((tmp / "fifo").c_str(), 0600) == 0);
  CHECK(script_error(vm, "save({a: ones([1])}, dir + \"/fifo\")") == tmp / "fifo" + ": is not a regular file");
  CHECK(fs::is_fifo(tmp / "fifo"));
  // Reading one is refused too, at once: opening a FIFO no one writes
  // blocked every loader for ever.
  for (const char* loader : {"load", "load_npy", "load_csv", "load_idx", "load_text"})
    CHECK(script_error(vm, std::string(loader) + "(dir + \"/fifo\")") == tmp / "fifo" + ": is not a regular file");
  CHECK(script_error(vm, "load_state({a: ones([1])}, dir + \"/fifo\")") == tmp / "fifo" + ": is not a regular file");
}

TEST_CASE("save: a container met again inside itself is written once (no endless walk)") {
  TempDir tmp;
  Interpreter vm;
  vm.set_global("p", Value(tmp / "c.st"));
  vm.run_code("t.nn", "let r = {a: ones([1])}\nr.self = r\nsave(r, p)\nr.self = none");
  CHECK(run(vm, "load(p)") == "{a: f32[1] [1.0]}");
  // Shared without a cycle: both places are written, the tensor once.
  vm.run_code("t.nn", "let s = {w: ones([1])}\nsave({x: s, y: s}, p)");
  CHECK(run(vm, "load(p)") == "{x: {w: f32[1] [1.0]}, y: {w: f32[1] [1.0]}}");
}

TEST_CASE("save: empty records, lists and tuples keep their places") {
  // They vanished: [{}, t] came back as the record {1: t}.
  TempDir tmp;
  Interpreter vm;
  vm.set_global("p", Value(tmp / "e.st"));
  vm.run_code("t.nn", "save({l: [{}, ones([1])], m: [[], 5], e: {}, t: ()}, p)");
  CHECK(run(vm, "load(p)") == "{l: [{}, f32[1] [1.0]], m: [[], 5], e: {}, t: []}");
  CHECK(run(vm, "load(p).l[1]") == "f32[1] [1.0]");
}

TEST_CASE("load_csv: numbers, header, blank lines, and cells that are not numbers") {
  TempDir tmp;
  std::string p = tmp / "t.csv";
  Interpreter vm;
  vm.set_global("p", Value(p));
  write_bytes(p, "a,b,c\r\n1, 2.5 ,-3\r\n\r\n+4,5e2,nan\r\n");
  CHECK(run(vm, "load_csv(p)") == "f32[2, 3]\n[[1.0,   2.5, -3.0],\n [4.0, 500.0,  nan]]");
  write_bytes(p, "1,2\n3,4\n");
  CHECK(vm.run_code("t.nn", "load_csv(p, header=false, dtype=i64).shape").as_list()->items.size() == 2);
  CHECK(run(vm, "load_csv(p, header=false, dtype=i64)") == "i64[2, 2]\n[[1, 2],\n [3, 4]]");
  CHECK(run(vm, "load_csv(p)") == "f32[1, 2]\n[[3.0, 4.0]]");
  // Integers past 2^53 read exactly into i64 (through a double they were
  // 9007199254740992), also beside cells that are not integers; a value
  // the dtype cannot hold is an error (it was saturated).
  write_bytes(p, "9007199254740993,123456789012345679\n-5,+7\n");
  CHECK(run(vm, "load_csv(p, header=false, dtype=i64)") ==
        "i64[2, 2]\n[[9007199254740993, 123456789012345679],\n [              -5,                  7]]");
  CHECK(script_error(vm, "load_csv(p, header=false, dtype=i32)") ==
        p + ":1: cell 1 holds 9007199254740993, which i32 cannot hold");
  // Named by its line in the file, as the file's other errors are (after a
  // header and a blank line).
  write_bytes(p, "a,b\n1,2\n\n3,9007199254740993\n");
  CHECK(script_error(vm, "load_csv(p, dtype=i32)") == p + ":4: cell 2 holds 9007199254740993, which i32 cannot hold");
  write_bytes(p, "9007199254740995,2.5\n-7,-3.75\n");
  CHECK(run(vm, "load_csv(p, header=false, dtype=i64)") ==
        "i64[2, 2]\n[[9007199254740995,  2],\n [              -7, -3]]");
  write_bytes(p, "1,nan\n");
  CHECK(script_error(vm, "load_csv(p, header=false, dtype=i32)") ==
        p + ":1: cell 2 holds nan, which i32 cannot hold");
  write_bytes(p, "-9223372036854775809\n");  // past int64: its double is -2^63, which fits
  CHECK(script_error(vm, "load_csv(p, header=false, dtype=i64)") ==
        p + ":1: cell 1 holds -9.223372036854776e+18, which i64 cannot hold");
  write_bytes(p, "1,+-5\n");
  CHECK(script_error(vm, "load_csv(p, header=false)") == p + ":1: cell 2 is not a number: `+-5`");
  write_bytes(p, "h\n1,2\n3,abc\n");
  CHECK(script_error(vm, "load_csv(p)") == p + ":3: cell 2 is not a number: `abc`");
  write_bytes(p, "1,2\n3\n");
  CHECK(script_error(vm, "load_csv(p, header=false)") == p + ":2: this row has 1 cells, the first row has 2");
  write_bytes(p, "1,,2\n");
  CHECK(script_error(vm, "load_csv(p, header=false)") == p + ":1: cell 2 is empty");
  // A header alone: no rows, the header's columns (it was [0, 0]).
  write_bytes(p, "h\n");
  CHECK(run(vm, "load_csv(p).shape") == "[0, 1]");
  write_bytes(p, "a,b\n\n");
  CHECK(run(vm, "load_csv(p).shape") == "[0, 2]");
  write_bytes(p, "");
  CHECK(run(vm, "load_csv(p).shape") == "[0, 0]");
}

TEST_CASE("allow_files=false: no file is opened, except the data shipped with nn") {
  TempDir tmp;
  InterpreterOptions opts;
  opts.allow_files = false;
  Interpreter vm(opts);
  std::string p = tmp / "x.npy";
  vm.set_global("p", Value(p));
  CHECK(script_error(vm, "save_npy([1.0], p)") == "file access is not allowed: cannot write `" + p + "`");
  CHECK(script_error(vm, "load_npy(p)") == "file access is not allowed: cannot read `" + p + "`");
  CHECK(script_error(vm, "load_idx(p)") == "file access is not allowed: cannot read `" + p + "`");
  CHECK(script_error(vm, "load_csv(p)") == "file access is not allowed: cannot read `" + p + "`");
  CHECK(script_error(vm, "load(p)") == "file access is not allowed: cannot read `" + p + "`");
  CHECK(script_error(vm, "save({a: zeros([1])}, p)") == "file access is not allowed: cannot write `" + p + "`");
  CHECK(tmp.entries() == 0);
  // `..` out of the data folder is not inside it.
  CHECK(script_error(vm, "load_csv(data_file(\"iris.csv\") + \"/../../README.md\")")
            .rfind("file access is not allowed", 0) == 0);
  CHECK(run(vm, "load_csv(data_file(\"iris.csv\")).shape") == "[150, 5]");
  CHECK(run(vm, "load_digits()[0].shape") == "[1797, 64]");
}

TEST_CASE("save: strings that are not UTF-8 are saved with replacement characters") {
  TempDir tmp;
  Interpreter vm;
  vm.set_global("p", Value(tmp / "s.st"));
  vm.set_global("bad", Value(std::string("a\xff")));
  CHECK(run(vm, "save({s: bad}, p)\nload(p).s") == "a\xef\xbf\xbd");
}
