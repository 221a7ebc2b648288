// The registry of ops, filled once by the op families' registration calls.
#include "backend/op_registry.h"

#include "backend/cuda_backend.h"
#include "backend/ops/register.h"

namespace nn::backend {

Registry& Registry::get() {
  static Registry r;
  return r;
}

Registry::Registry() {
  // Explicit calls rather than static constructors: a static library would
  // drop registration objects nothing refers to.
  register_all_ops(*this);
  register_cuda_kernels(*this);
}

const OpDef& Registry::add(OpDef def) {
  auto name = def.name;
  auto [it, inserted] = ops_.emplace(name, std::make_unique<OpDef>(std::move(def)));
  if (!inserted) throw Error("internal: op `" + name + "` registered twice");
  return *it->second;
}

const OpDef* Registry::find(std::string_view name) const {
  auto it = ops_.find(std::string(name));
  return it == ops_.end() ? nullptr : it->second.get();
}

const OpDef& Registry::op(std::string_view name) const {
  const OpDef* d = find(name);
  if (!d) throw Error("internal: no op named `" + std::string(name) + "`");
  return *d;
}

OpDef& Registry::edit(std::string_view name) {
  auto it = ops_.find(std::string(name));
  if (it == ops_.end()) throw Error("internal: no op named `" + std::string(name) + "`");
  return *it->second;
}

std::vector<const OpDef*> Registry::all() const {
  std::vector<const OpDef*> v;
  for (auto& [k, d] : ops_) v.push_back(d.get());
  return v;
}

}  // namespace nn::backend
