// The walk over the tensors inside a value: order and paths, which
// containers each reach opens, other values seen, stopping, containers
// opened once (so a list holding itself ends), and map_tensors rebuilding
// the containers it opens while sharing everything else.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "backend/ops.h"
#include "frontend/tensor_walk.h"

using namespace nn;
using namespace nn::frontend;

namespace {

Value tensor(double x) { return Value(backend::full(backend::Shape({1}), x)); }

double number(const backend::Tensor& t) { return t.item_double(); }

// [t1, (t2, {w: t3, n: 4})]
Value nested() {
  RecordPtr r = make_record();
  r->fields.emplace_back(intern("w"), tensor(3));
  r->fields.emplace_back(intern("n"), Value(int64_t(4)));
  return Value(make_list({tensor(1), Value(make_tuple({tensor(2), Value(r)}))}));
}

// "path=value" for each tensor the walk visits.
std::vector<std::string> visited(const Value& v, Reach reach) {
  std::vector<std::string> out;
  TensorVisitor visit;
  visit.tensor = [&](const backend::Tensor& t, const ValuePath& path) {
    out.push_back(path.str() + "=" + std::to_string(int(number(t))));
    return Walk::go_on;
  };
  for_each_tensor(v, "xs", reach, visit);
  return out;
}

}  // namespace

TEST_CASE("tensor walk: depth first in order, with paths; records opened only when asked") {
  CHECK(visited(nested(), Reach::sequences) == std::vector<std::string>{"xs[0]=1", "xs[1][0]=2"});
  CHECK(visited(nested(), Reach::sequences_and_records) ==
        std::vector<std::string>{"xs[0]=1", "xs[1][0]=2", "xs[1][1].w=3"});
  CHECK(visited(tensor(7), Reach::sequences) == std::vector<std::string>{"xs=7"});
  CHECK(visited(Value(int64_t(5)), Reach::sequences_and_records).empty());
}

TEST_CASE("tensor walk: other values, containers before their items") {
  std::vector<std::string> others;
  TensorVisitor visit;
  visit.other = [&](const Value& v, const ValuePath& path) { others.push_back(path.str() + ":" + type_name(v)); };
  for_each_tensor(nested(), "a", Reach::sequences, visit);
  CHECK(others == std::vector<std::string>{"a:list", "a[1]:tuple", "a[1][1]:record"});
}

TEST_CASE("tensor walk: the visitor stops it; a container is opened once, so a cycle ends") {
  int seen = 0;
  TensorVisitor visit;
  visit.tensor = [&](const backend::Tensor&, const ValuePath&) { return ++seen == 2 ? Walk::stop : Walk::go_on; };
  CHECK(for_each_tensor(nested(), "a", Reach::sequences_and_records, visit) == Walk::stop);
  CHECK(seen == 2);

  ListPtr self = make_list({tensor(1)});
  self->items.push_back(Value(self));
  std::unordered_set<const void*> opened;
  seen = 0;
  visit.tensor = [&](const backend::Tensor&, const ValuePath&) {
    ++seen;
    return Walk::go_on;
  };
  CHECK(for_each_tensor(Value(self), "l", Reach::sequences, visit, &opened) == Walk::go_on);
  CHECK(seen == 1);
  // Walked already: a second walk with the same set opens nothing.
  CHECK(for_each_tensor(Value(self), "l", Reach::sequences, visit, &opened) == Walk::go_on);
  CHECK(seen == 1);
  self->items.clear();  // unlink the cycle
}

TEST_CASE("tensor walk: the pathless form visits the same tensors in the same order") {
  std::vector<double> xs;
  for_each_tensor(nested(), Reach::sequences_and_records, [&](const backend::Tensor& t) { xs.push_back(number(t)); });
  CHECK(xs == std::vector<double>{1, 2, 3});
}

TEST_CASE("map_tensors: tensors replaced, opened containers new, the rest shared") {
  const Value v = nested();
  std::vector<std::string> paths;
  Value m = map_tensors(v, "v", Reach::sequences, [&](const backend::Tensor& t, const ValuePath& path) {
    paths.push_back(path.str());
    return backend::full(backend::Shape({1}), 10 * number(t));
  });
  CHECK(paths == std::vector<std::string>{"v[0]", "v[1][0]"});
  REQUIRE(m.is_list());
  CHECK(m.as_list() != v.as_list());
  CHECK(number(m.as_list()->items[0].as_tensor()) == 10);
  const Value& tup = m.as_list()->items[1];
  REQUIRE(tup.is_tuple());
  CHECK(number(tup.as_tuple()->items[0].as_tensor()) == 20);
  // Not opened: the very record of v, its tensor untouched.
  const Value& rec = tup.as_tuple()->items[1];
  CHECK(rec.as_record() == v.as_list()->items[1].as_tuple()->items[1].as_record());

  Value all = map_tensors(v, "v", Reach::sequences_and_records, [&](const backend::Tensor& t, const ValuePath&) {
    return backend::full(backend::Shape({1}), -number(t));
  });
  const RecordPtr& r = all.as_list()->items[1].as_tuple()->items[1].as_record();
  CHECK(r != rec.as_record());
  REQUIRE(r->fields.size() == 2);
  CHECK(number(r->fields[0].second.as_tensor()) == -3);
  CHECK(r->fields[1].second.as_int() == 4);
}
