// The per-thread run state an interpreter installs (backend/run_context.h).
#include "backend/run_context.h"

#include <omp.h>

#include "backend/autocast.h"
#include "backend/interrupt.h"

namespace nn::backend {
namespace {
Generator g_process_generator;  // code outside any RunScope (the process's)
// What RunScope installed, in one thread-local block: a call from the host
// saves and restores it whole.
struct Installed {
  Generator* generator = nullptr;
  MemoryAccount* account = nullptr;
  std::atomic<bool>* stop = nullptr;
  const LocText* loc_text = nullptr;
};
thread_local Installed t_installed;
}  // namespace

Generator& current_generator() { return t_installed.generator ? *t_installed.generator : g_process_generator; }
MemoryAccount* current_account() { return t_installed.account; }
void set_current_account(MemoryAccount* account) { t_installed.account = account; }
std::atomic<bool>* current_stop_request() { return t_installed.stop; }
const LocText* current_loc_text() { return t_installed.loc_text; }

RunScope::RunScope(const RunState& state)
    : saved_generator_(t_installed.generator),
      device_(state.device),
      saved_autocast_(autocast_dtype()),
      saved_account_(t_installed.account),
      saved_stop_(t_installed.stop),
      saved_loc_text_(t_installed.loc_text),
      nested_(t_installed.generator == state.generator) {
  t_installed = {state.generator, state.account, state.stop, state.loc_text};
  if (!nested_) set_autocast_dtype(state.autocast);
  if (state.threads > 0 && omp_get_max_threads() != state.threads) {
    saved_threads_ = omp_get_max_threads();
    omp_set_num_threads(state.threads);
  }
}

RunScope::~RunScope() {
  t_installed = {saved_generator_, saved_account_, saved_stop_, saved_loc_text_};
  if (!nested_) set_autocast_dtype(saved_autocast_);
  if (saved_threads_) omp_set_num_threads(saved_threads_);
}

}  // namespace nn::backend
