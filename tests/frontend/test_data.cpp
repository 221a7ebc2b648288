// Data built-ins: load_digits, split (seeded, leaving the global generator
// alone), batches (counts, shuffles under seed(), one pass), progress
// (same items as the iterable; its bar's text).
#include <doctest/doctest.h>

#include <algorithm>

#include "frontend/builtins/progress_bar.h"
#include "frontend/format.h"
#include "frontend/interpreter.h"
#include "script_test_util.h"

using namespace nn::frontend;
using namespace nntest;

namespace {
// Every item an iterator value yields, printed.
std::vector<std::string> items(Interpreter& vm, const std::string& code) {
  Value it = vm.run_code("t.nn", code);
  std::vector<std::string> out;
  while (auto v = it.as_iterator()->next()) out.push_back(to_str(*v));
  return out;
}
}  // namespace

TEST_CASE("load_digits: shapes, dtypes, scaling and known values") {
  Interpreter vm;
  vm.run_code("t.nn", "let (x, y) = load_digits()");
  CHECK(run(vm, "x.dtype") == "f32");
  CHECK(run(vm, "x.shape") == "[1797, 64]");
  CHECK(run(vm, "y.shape") == "[1797]");
  CHECK(run(vm, "y.dtype") == "i64");
  CHECK(run(vm, "min(x)") == "0.0");
  CHECK(run(vm, "max(x)") == "1.0");
  // The first row of digits.csv: 0,0,5,13,9,1,0,0,... label 0; the second's label is 1.
  CHECK(run(vm, "x[0, 0:6] * 16") == "f32[6] [0.0, 0.0, 5.0, 13.0, 9.0, 1.0]");
  CHECK(run(vm, "y[0:3]") == "i64[3] [0, 1, 2]");
  CHECK(run(vm, "min(y)") == "0");
  CHECK(run(vm, "max(y)") == "9");
}

TEST_CASE("split: sizes, a permutation of the rows, seeded, global generator untouched") {
  Interpreter vm;
  vm.run_code("t.nn", "let x = reshape(arange(20), [10, 2])\nlet y = arange(10)");
  vm.run_code("t.nn", "let (a, b, c, d) = split(x, y, 0.75)");
  CHECK(run(vm, "a.shape") == "[8, 2]");  // round(7.5) = 8
  CHECK(run(vm, "c.shape") == "[2, 2]");
  CHECK(run(vm, "d.shape") == "[2]");
  // Rows stay paired with their labels, and every row is used once.
  CHECK(run(vm, "a[:, 0] / 2 == b") == run(vm, "ones([8], bool)"));
  CHECK(run(vm, "sum(b) + sum(d)") == "45");
  CHECK(run(vm, "sum(b * b) + sum(d * d)") == "285");
  // The same seed gives the same split; another seed another one.
  CHECK(run(vm, "split(x, y, 0.75)[1]") == run(vm, "b"));
  CHECK(run(vm, "split(x, y, 0.75, seed=1)[1]") != run(vm, "b"));
  // The global generator is neither read nor advanced.
  std::string r1 = run(vm, "seed(3)\nrand([3])");
  std::string r2 = run(vm, "seed(3)\nsplit(x, y, 0.5, seed=9)\nrand([3])");
  CHECK(r1 == r2);
  CHECK(run(vm, "split(x, y, 1.0)[2].shape") == "[0, 2]");
  CHECK(run(vm, "split(x, y, 0)[0].shape") == "[0, 2]");
  CHECK(script_error(vm, "split(x, y, 1.5)") == "split needs a fraction between 0 and 1, got 1.5");
  CHECK(script_error(vm, "split(x, y[0:3], 0.5)") ==
        "split needs x and y with the same number of rows, got i64[10, 2] and i64[3]");
}

TEST_CASE("batches: counts, the last batch, shuffles under seed(), one pass") {
  Interpreter vm;
  vm.run_code("t.nn", "let x = reshape(arange(20), [10, 2])\nlet y = arange(10)");
  CHECK(run(vm, "len(batches(x, y, 3))") == "4");
  CHECK(run(vm, "len(batches(x, y, 3, drop_last=true))") == "3");
  CHECK(run(vm, "len(batches(x, y, 20, drop_last=true))") == "0");
  CHECK(items(vm, "batches(x, y, 4)") ==
        std::vector<std::string>{"(i64[4, 2]\n[[0, 1],\n [2, 3],\n [4, 5],\n [6, 7]], i64[4] [0, 1, 2, 3])",
                                 "(i64[4, 2]\n[[ 8,  9],\n [10, 11],\n [12, 13],\n [14, 15]], i64[4] [4, 5, 6, 7])",
                                 "(i64[2, 2]\n[[16, 17],\n [18, 19]], i64[2] [8, 9])"});
  CHECK(items(vm, "batches(y, none, 4, drop_last=true)") ==
        std::vector<std::string>{"i64[4] [0, 1, 2, 3]", "i64[4] [4, 5, 6, 7]"});
  // Shuffled: pairs kept, every row once, decided by seed(), a new order per call.
  vm.run_code(
      "t.nn",
      "fn order() {\n"
      "  let ys = zeros([0], i64)\n"
      "  for (xb, yb) in batches(x, y, 3, shuffle=true) { assert(xb[:, 0] / 2 == yb)\n ys = concat([ys, yb]) }\n"
      "  ys\n"
      "}");
  std::string first = run(vm, "seed(5)\norder()");
  std::string second = run(vm, "order()");
  CHECK(first == run(vm, "seed(5)\norder()"));
  CHECK(first != second);
  CHECK(first != run(vm, "y"));
  CHECK(run(vm, "seed(5)\nsum(order())") == "45");
  CHECK(run(vm, "seed(5)\nlet o = order()\nsum(o * o)") == "285");
  CHECK(script_error(vm, "let b = batches(x, y, 4)\nfor t in b {}\nfor t in b {}") ==
        "this batches() iterator is used up: call batches() again for another pass");
  CHECK(script_error(vm, "batches(x, y, 0)") == "batches needs a batch size of at least 1, got 0");
  CHECK(script_error(vm, "batches(x, y[0:2], 4)") ==
        "batches needs x and y with the same number of rows, got i64[10, 2] and i64[2]");
}

TEST_CASE("progress: yields what it wraps; silent when stderr is not a terminal") {
  Interpreter vm;
  CHECK(items(vm, "progress(2..5)") == std::vector<std::string>{"2", "3", "4"});
  CHECK(items(vm, "progress([\"a\", 1])") == std::vector<std::string>{"a", "1"});
  CHECK(items(vm, "progress([[1, 2], [3, 4]])") == std::vector<std::string>{"i64[2] [1, 2]", "i64[2] [3, 4]"});
  CHECK(items(vm, "progress(batches(arange(5), none, 3))") ==
        std::vector<std::string>{"i64[3] [0, 1, 2]", "i64[2] [3, 4]"});
  CHECK(run(vm, "len(progress(batches(zeros([10]), none, 3)))") == "4");
  CHECK(run(vm, "len(progress(0..7))") == "7");
  CHECK(run(vm, "let n = 0\nfor i in progress(0..4) { n += i }\nn") == "6");
  CHECK(script_error(vm, "progress(3)") ==
        "progress needs something to iterate over (a range, list, tuple, tensor or iterator), got an int");

  CHECK(progress_line(37, 100, 1.0) == " 37/100 [###########...................]  37% 1.0s eta 1.7s");
  CHECK(progress_line(100, 100, 75.0) == "100/100 [##############################] 100% 1m15s");
  CHECK(progress_line(0, 4, 0.0) == "0/4 [..............................]   0% 0.0s");
  CHECK(progress_line(12, std::nullopt, 2.25) == "12 it 2.2s");
}
