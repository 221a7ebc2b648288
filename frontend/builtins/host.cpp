// Host built-ins: print, str, len, range, time, assert, device, exit, mem,
// and conversions of one-element tensors to host numbers.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <ostream>
#include <stdexcept>

#include "backend/ops.h"
#include "backend/ops/elementwise_math.h"
#include "frontend/builtins/builtins.h"
#include "frontend/format.h"
#include "frontend/interpreter.h"
#include "frontend/tensor_walk.h"

namespace nn::frontend::builtins {
namespace {

// The text of a number as Python's int() and float() read it: blanks around
// it dropped, then a sign and decimal digits (and for a float a point, an
// exponent, inf or nan); "" for anything else, such as C's hex forms
// ("0x10", "0x1p3"), which std::stoll and std::stod would take.
std::string python_number_text(const std::string& s, bool floating) {
  const size_t b = s.find_first_not_of(" \t\n\r\f\v"), e = s.find_last_not_of(" \t\n\r\f\v");
  if (b == std::string::npos) return "";
  std::string t = s.substr(b, e - b + 1);
  size_t i = t[0] == '+' || t[0] == '-' ? 1 : 0;
  std::string word = t.substr(i);
  std::transform(word.begin(), word.end(), word.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (floating && (word == "inf" || word == "infinity" || word == "nan")) return t;
  size_t digits = 0;
  for (; i < t.size() && std::isdigit(static_cast<unsigned char>(t[i])); ++i) ++digits;
  if (floating && i < t.size() && t[i] == '.')
    for (++i; i < t.size() && std::isdigit(static_cast<unsigned char>(t[i])); ++i) ++digits;
  if (digits == 0) return "";
  if (floating && i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    size_t exp = 0;
    for (; i < t.size() && std::isdigit(static_cast<unsigned char>(t[i])); ++i) ++exp;
    if (exp == 0) return "";
  }
  return i == t.size() ? t : "";
}

// float(x) and int(x) give host numbers; PyTorch's t.float() and t.long()
// (method sugar makes them these calls) change a tensor's dtype instead.
void not_a_cast(Args& a, const char* fn, const char* dtype) {
  if (a[0].is_tensor() && a[0].as_tensor().numel() != 1)
    a.fail(0, std::string(fn) + "() gives a host number from a number or a one-element tensor, not from " +
                  a[0].as_tensor().type().str() + "; to change a tensor's dtype write astype(x, " + dtype + ")");
}
// The items of a list, tuple, range, string (its characters) or tensor (its
// rows), as `for` takes them, for the built-ins over sequences.
std::vector<Value> sequence_items(Args& a, const Value& v, const char* fn, size_t k) {
  if (v.is_list() || v.is_tuple()) return v.is_list() ? v.as_list()->items : v.as_tuple()->items;
  std::vector<Value> out;
  if (v.is_tensor() && v.as_tensor().ndim() > 0) {
    for (int64_t i = 0; i < v.as_tensor().shape()[0]; ++i) {
      backend::IndexItem row;
      row.kind = backend::IndexItem::index;
      row.i = i;
      out.push_back(Value(backend::index(v.as_tensor(), {row})));
    }
  } else if (v.is_range()) {
    const RangeValue r = v.as_range();
    check_items_fit(r.size());
    out.reserve(size_t(r.size()));
    for (int64_t i = 0; i < r.size(); ++i) out.push_back(Value(r.at(i)));
  } else if (v.is_str()) {
    const HostString& s = v.as_host_str();
    for (int64_t i = 0; i < s.chars(); ++i) out.push_back(Value(std::string(s.char_at(i))));
  } else {
    const std::string what =
        std::string(fn) + "() needs lists, tuples, ranges, strings or tensors of 1 or more axes, not " + a_type_name(v);
    if (k < a.size()) a.fail(k, what);  // a named parameter: its own span
    frontend::fail(a.call_span(), what);
  }
  return out;
}

}  // namespace

void install_host(Interpreter& vm) {
  def(vm, "print", "*values", [](Args& a) {
    // Inside a graph, print on every run: a host call node that gets every
    // tensor of the arguments, in lists, tuples and records too (none for a
    // line of host values, the same on every run).
    if (ir::Tracer* tr = ir::Tracer::active()) {
      std::vector<backend::Tensor> traced;
      std::vector<Value> items = a.rest();
      for (const Value& v : items)
        for_each_tensor(v, Reach::sequences_and_records, [&](const backend::Tensor& t) { traced.push_back(t); });
      Interpreter* vm = &a.vm();
      tr->add_host_call("print", traced, [vm, items](std::span<const backend::Tensor> now) {
        std::string line;
        size_t k = 0;
        for (size_t i = 0; i < items.size(); ++i) {
          if (i) line += ' ';
          // The same walk, in the same order, puts this run's tensors in.
          line += to_str(map_tensors(items[i], "", Reach::sequences_and_records,
                                     [&](const backend::Tensor&, const ValuePath&) { return now[k++]; }));
        }
        vm->out() << line << '\n';
      });
      return Value();
    }
    std::string line;
    for (size_t i = 0; i < a.rest().size(); ++i) {
      if (i) line += ' ';
      line += to_str(a.rest()[i]);
    }
    line += '\n';
    a.vm().out() << line;
    return Value();
  });
  def(vm, "str", "v", [](Args& a) {
    a.vm().note_whole_read(a[0]);
    return Value(to_str(a[0]));
  });
  def(vm, "len", "v", [](Args& a) {
    const Value& v = a[0];
    switch (v.kind()) {
      case Value::Kind::Str: return Value(v.as_host_str().chars());
      case Value::Kind::List: return Value(int64_t(v.as_list()->items.size()));
      case Value::Kind::Tuple: return Value(int64_t(v.as_tuple()->items.size()));
      case Value::Kind::Record:
        a.vm().note_record_read(v.as_record());
        return Value(int64_t(v.as_record()->fields.size()));
      case Value::Kind::Range:
        if (v.as_range().count() > uint64_t(INT64_MAX))
          a.fail(0, "len: the range has " + std::to_string(v.as_range().count()) + " items, more than an int holds");
        return Value(v.as_range().size());
      case Value::Kind::Tensor:
        if (v.as_tensor().ndim() == 0) a.fail(0, "len() of a 0-d tensor");
        return Value(v.as_tensor().shape()[0]);
      case Value::Kind::Iterator:
        if (auto n = v.as_iterator()->length()) return Value(*n);
        [[fallthrough]];
      default: a.fail(0, "len() of " + a_type_name(v));
    }
  });
  // Python's range: range(n), range(a, b), range(a, b, step).
  def(vm, "range", "a, b=none, step=1", [](Args& a) {
    const int64_t step = a.integer(2);
    if (step == 0) a.fail(2, "range step cannot be zero");
    if (a[1].is_none()) return Value(RangeValue{0, a.integer(0), step});
    return Value(RangeValue{a.integer(0), a.integer(1), step});
  });
  // A new list of the items of a list, tuple, range or string, last first.
  def(vm, "reversed", "xs", [](Args& a) {
    std::vector<Value> items = sequence_items(a, a[0], "reversed", 0);
    auto out = make_list({items.rbegin(), items.rend()});
    out->count();
    return Value(out);
  });
  // Python's enumerate and zip, as lists of tuples.
  def(vm, "enumerate", "xs, start=0", [](Args& a) {
    std::vector<Value> items = sequence_items(a, a[0], "enumerate", 0);
    const int64_t start = a.integer(1);
    if (!items.empty() && start > INT64_MAX - int64_t(items.size() - 1))
      a.fail(1, "integer overflow: counting " + std::to_string(items.size()) + " items from " + std::to_string(start) +
                    " passes 9223372036854775807, the largest 64-bit int");
    auto out = make_list();
    for (size_t i = 0; i < items.size(); ++i)
      out->items.push_back(Value(make_tuple({Value(start + int64_t(i)), std::move(items[i])})));
    out->count();
    return Value(out);
  });
  def(vm, "zip", "*seqs", [](Args& a) {
    std::vector<std::vector<Value>> seqs;
    size_t n = SIZE_MAX;
    for (size_t k = 0; k < a.rest().size(); ++k) {
      seqs.push_back(sequence_items(a, a.rest()[k], "zip", k));
      n = std::min(n, seqs.back().size());
    }
    auto out = make_list();
    for (size_t i = 0; i < n && !seqs.empty(); ++i) {
      std::vector<Value> row;
      for (auto& s : seqs) row.push_back(std::move(s[i]));
      out->items.push_back(Value(make_tuple(std::move(row))));
    }
    out->count();
    return Value(out);
  });
  def(vm, "time", "", [](Args& a) {
    refuse_in_graph(a, "time");
    using namespace std::chrono;
    return Value(duration<double>(system_clock::now().time_since_epoch()).count());
  });
  auto holds = [](const Value& c) {
    if (!c.is_tensor())
      return !(c.is_none() || (c.is_bool() && !c.as_bool()) || (c.is_int() && c.as_int() == 0) ||
               (c.is_float() && c.as_float() == 0));
    const backend::Tensor& t = c.as_tensor();
    if (t.numel() == 1) return t.item_bool();
    // A tensor condition holds when every element does (none: it holds).
    return t.numel() == 0 || backend::min(backend::astype(t, backend::DType::boolean)).item_bool();
  };
  def(vm, "assert", "c, msg=\"\"", [holds](Args& a) {
    if (!holds(a[0])) {
      std::string msg = a[1].is_str() ? a[1].as_str() : to_str(a[1]);
      frontend::fail(a.call_span(), msg.empty() ? "assertion failed" : "assertion failed: " + msg);
    }
    return Value();
  });
  // The stdlib's checks of its arguments: the message is the diagnostic,
  // reported at the script's call of the stdlib function.
  def(vm, "_check", "c, msg", [holds](Args& a) {
    if (!holds(a[0])) frontend::fail(a.call_span(), a[1].is_str() ? a[1].as_str() : to_str(a[1]));
    return Value();
  });
  def(vm, "device", "name", [](Args& a) {
    backend::Device* d = backend::find_device(a.str(0));
    if (!d) a.fail(0, "device `" + a.str(0) + "` is not available: " + backend::device_unavailable_reason(a.str(0)));
    return Value(DeviceValue{d});
  });
  def(vm, "exit", "code=0", [](Args& a) -> Value {
    // A process's status is one byte: exit(256) would end with 0, success.
    const int64_t code = a.integer(0);
    if (code < 0 || code > 255) a.fail(0, "an exit code runs from 0 to 255, not " + std::to_string(code));
    throw ExitRequest{int(code)};
  });
  def(vm, "mem", "device=none", [](Args& a) {
    refuse_in_graph(a, "mem");
    backend::Device* d = backend::default_device();
    if (a[0].is_device()) d = a[0].as_device();
    else if (a[0].is_str()) {
      d = backend::find_device(a[0].as_str());
      if (!d)
        a.fail(0, "device `" + a[0].as_str() + "` is not available: " + backend::device_unavailable_reason(a[0].as_str()));
    }
    backend::MemoryStats s = d->stats();
    auto r = make_record();
    r->set(intern("current"), Value(int64_t(s.current)));
    r->set(intern("peak"), Value(int64_t(s.peak)));
    r->set(intern("cached"), Value(int64_t(s.cached)));
    r->set(intern("device"), Value(d->name()));
    return Value(r);
  });
  def(vm, "type", "v", [](Args& a) { return Value(std::string(kind_name(a[0].kind()))); });
  def(vm, "fields", "r", [](Args& a) {
    if (!a[0].is_record()) a.fail(0, "fields() needs a record, not " + a_type_name(a[0]));
    a.vm().note_record_read(a[0].as_record());
    auto out = make_list();
    for (auto& [k, v] : a[0].as_record()->fields)
      out->items.push_back(Value(make_tuple({Value(symbol_name(k)), v})));
    return Value(out);
  });
  def(vm, "append", "list, v", [](Args& a) {
    if (!a[0].is_list()) a.fail(0, "append() needs a list, not " + a_type_name(a[0]));
    List& list = *a[0].as_list();
    a.vm().note_appended(a[1], a.call_span());
    list.items.push_back(a[1]);
    try {
      list.count();
    } catch (...) {
      list.items.pop_back();
      throw;
    }
    a.vm().note_stored(a[0], a[1]);
    return a[0];
  });
  def(vm, "item", "x", [](Args& a) {
    backend::Tensor t = a.tensor(0);
    if (t.numel() != 1) a.fail(0, "item() needs a tensor with one element, not " + t.type().str());
    a.vm().note_value_read(t);
    if (t.dtype() == backend::DType::boolean) return Value(t.item_bool());
    if (is_integral(t.dtype())) return Value(t.item_int());
    return Value(t.item_double());
  });
  def(vm, "int", "x", [](Args& a) {
    const Value& v = a[0];
    not_a_cast(a, "int", "i64");
    if (v.is_str()) {
      const std::string text = python_number_text(v.as_str(), false);
      try {
        size_t used = 0;
        int64_t i = text.empty() ? 0 : std::stoll(text, &used);
        if (!text.empty() && used == text.size()) return Value(i);
      } catch (const std::out_of_range&) {
        a.fail(0, "cannot convert \"" + v.as_str() + "\" to an int: it does not fit in 64 bits");
      } catch (const std::exception&) {
      }
      a.fail(0, "cannot convert \"" + v.as_str() + "\" to an int");
    }
    if (v.is_int() || v.is_bool() || (v.is_tensor() && is_integral(v.as_tensor().dtype()))) return Value(a.integer(0));
    // Truncated toward zero, as Python's; where no int holds the result,
    // an error (astype saturates and takes NaN to 0, as PyTorch's casts).
    const double d = a.number(0);
    if (d != d) a.fail(0, "cannot convert nan to an int");
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
      a.fail(0, "cannot convert " + to_str(Value(d)) + " to an int: it does not fit in 64 bits");
    return Value(int64_t(d));
  });
  def(vm, "float", "x", [](Args& a) {
    const Value& v = a[0];
    not_a_cast(a, "float", "f32");
    if (v.is_str()) {
      // strtod, not stod: "1e400" is inf and "1e-400" 0, as Python's.
      const std::string text = python_number_text(v.as_str(), true);
      if (text.empty()) a.fail(0, "cannot convert \"" + v.as_str() + "\" to a float");
      return Value(std::strtod(text.c_str(), nullptr));
    }
    return Value(a.number(0));
  });
}

}  // namespace nn::frontend::builtins
