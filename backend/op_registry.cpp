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
  const bool listed = def.id != OpId::unlisted;
  if (listed) def.name = op_name(def.id);
  if (by_name_.contains(def.name)) throw Error("internal: op `" + def.name + "` registered twice");
  auto& slot = listed ? ops_[static_cast<size_t>(def.id)] : unlisted_.emplace_back();
  slot = std::make_unique<OpDef>(std::move(def));
  by_name_.emplace(slot->name, slot.get());
  return *slot;
}

void Registry::missing_entry(OpId id) {
  throw Error(std::string("internal: op `") + op_name(id) + "` has no registry entry");
}

const OpDef* Registry::find(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? nullptr : it->second;
}

const OpDef& Registry::op(std::string_view name) const {
  const OpDef* d = find(name);
  if (!d) throw Error("internal: no op named `" + std::string(name) + "`");
  return *d;
}

OpDef& Registry::edit(OpId id) {
  op(id);  // throws when there is no entry
  return *ops_[static_cast<size_t>(id)];
}

std::vector<const OpDef*> Registry::all() const {
  std::vector<const OpDef*> v;
  for (auto& d : ops_)
    if (d) v.push_back(d.get());
  for (auto& d : unlisted_) v.push_back(d.get());
  return v;
}

std::vector<OpId> Registry::missing() const {
  std::vector<OpId> v;
  for (size_t i = 0; i < ops_.size(); ++i)
    if (!ops_[i]) v.push_back(static_cast<OpId>(i));
  return v;
}

}  // namespace nn::backend
