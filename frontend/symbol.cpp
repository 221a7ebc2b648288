// The process-wide symbol table. Names are never removed, so a Symbol stays
// valid for the life of the process; lookups and inserts take a lock so that
// several interpreters may run in separate threads.
#include "frontend/symbol.h"

#include <deque>
#include <mutex>
#include <unordered_map>

namespace nn::frontend {
namespace {
struct Table {
  std::mutex mu;
  std::deque<std::string> names{""};  // deque: references stay valid as it grows
  std::unordered_map<std::string_view, Symbol> ids;
};
Table& table() {
  static Table t;
  return t;
}
}  // namespace

Symbol intern(std::string_view name) {
  Table& t = table();
  std::lock_guard lock(t.mu);
  auto it = t.ids.find(name);
  if (it != t.ids.end()) return it->second;
  t.names.emplace_back(name);
  Symbol s = Symbol(t.names.size() - 1);
  t.ids.emplace(std::string_view(t.names.back()), s);
  return s;
}

const std::string& symbol_name(Symbol s) {
  Table& t = table();
  std::lock_guard lock(t.mu);
  return t.names.at(s);
}

}  // namespace nn::frontend
