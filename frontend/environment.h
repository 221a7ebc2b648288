// Scopes: an Env maps symbols to values and points to its enclosing scope.
// Small scopes are scanned; big ones (module globals, the prelude) keep an index.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "frontend/value.h"

namespace nn::frontend {

struct Env;
using EnvPtr = std::shared_ptr<Env>;

struct Env {
  explicit Env(EnvPtr parent_env = nullptr) : parent(std::move(parent_env)) {}
  EnvPtr parent;
  // Whether a trace made it (a frame, block or loop turn of the code a
  // graph runs, Interpreter::new_scope): a trace guards the names it reads
  // from the scopes that were there before it (a module's, a closure's;
  // frontend/host_read_guard.h), not those of its own code.
  bool made_in_trace = false;
  std::vector<Symbol> names;
  std::vector<Value> values;

  Value* find_local(Symbol s) {
    const size_t i = index_of(s);
    return i == kAbsent ? nullptr : slot(i);
  }
  Value* find(Symbol s) {
    for (Env* e = this; e; e = e->parent.get())
      if (Value* v = e->find_local(s)) return v;
    return nullptr;
  }
  // Empties the scope, returning its values so that the caller destroys them
  // while the scope itself is still alive.
  std::vector<Value> take_values() {
    std::vector<Value> out = std::move(values);
    values.clear();
    names.clear();
    index.clear();
    pending.reset();
    return out;
  }
  // Declares (or redeclares, as `let` may) a name in this scope.
  void define(Symbol s, Value v) {
    if (Value* old = find_local(s)) {
      *old = std::move(v);
      return;
    }
    append(s, std::move(v));
  }
  // Declares a name whose value `make` makes when it is first read (the
  // prelude's functions are parsed when a program first names them:
  // frontend/prelude.cpp). One scope has one maker.
  void define_pending(Symbol s, const std::function<void(Symbol)>& make) {
    size_t i = index_of(s);
    if (i == kAbsent) {
      append(s, Value());
      i = names.size() - 1;
    }
    if (!pending) pending = std::make_unique<Pending>(Pending{make, {}});
    if (pending->not_made.size() <= i) pending->not_made.resize(i + 1);
    pending->not_made[i] = 1;
  }

 private:
  static constexpr size_t kAbsent = SIZE_MAX;
  size_t index_of(Symbol s) const {
    if (!index.empty()) {
      auto it = index.find(s);
      return it == index.end() ? kAbsent : it->second;
    }
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == s) return i;
    return kAbsent;
  }
  Value* slot(size_t i) {
    if (pending && i < pending->not_made.size() && pending->not_made[i]) {
      pending->not_made[i] = 0;  // made now: the definition finds it made
      pending->make(names[i]);
    }
    return &values[i];
  }
  void append(Symbol s, Value v) {
    if (names.empty()) {  // a call's frame: its parameters and locals at once, not one growth each
      names.reserve(4);
      values.reserve(4);
    }
    names.push_back(s);
    values.push_back(std::move(v));
    if (!index.empty() || names.size() > kIndexAbove) {
      if (index.empty())
        for (size_t i = 0; i < names.size(); ++i) index.emplace(names[i], uint32_t(i));
      else
        index.emplace(s, uint32_t(names.size() - 1));
    }
  }
  static constexpr size_t kIndexAbove = 12;
  // Names made on first read; only the prelude's scope has any, so other
  // scopes carry one null pointer.
  struct Pending {
    std::function<void(Symbol)> make;
    std::vector<uint8_t> not_made;  // per value: 1 while not made yet
  };
  std::unique_ptr<Pending> pending;
  std::unordered_map<Symbol, uint32_t> index;
};

// Holds a scope while code runs in it (a call's frame, a block, one turn of
// a loop). A closure stored in the scope it captures (`let g = fn(z) {...}`
// in a function) makes a cycle that reference counting never frees, and the
// frame's tensors would stay until the interpreter ends. At the end, when
// such closures, held nowhere else, are all that still hold the scope, it is
// emptied (environment.cpp). Anything else holding it (a closure handed
// back, stored elsewhere or shared) keeps it whole.
class ScopeEnd {
 public:
  explicit ScopeEnd(const EnvPtr& env) : env_(env) {}
  ~ScopeEnd();
  ScopeEnd(const ScopeEnd&) = delete;
  ScopeEnd& operator=(const ScopeEnd&) = delete;

 private:
  const EnvPtr& env_;
};

}  // namespace nn::frontend
