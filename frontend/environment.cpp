// The end of a scope: breaking the cycle of closures stored in the scope
// they capture (environment.h, ScopeEnd).
#include "frontend/environment.h"

#include "frontend/function.h"

namespace nn::frontend {

ScopeEnd::~ScopeEnd() {
  long holders = env_.use_count() - 1;  // besides the one this guard watches
  if (holders <= 0) return;
  for (const Value& v : env_->values) {
    if (!v.is_function()) continue;
    const FunctionPtr& f = v.as_function();
    if (f->kind == Function::Kind::Closure && f->env == env_ && f.use_count() == 1) --holders;
  }
  if (holders != 0) return;
  // Destroyed here, while the scope is still held.
  std::vector<Value> dead = env_->take_values();
}

}  // namespace nn::frontend
