// The per-thread run state an interpreter installs (backend/run_context.h).
#include "backend/run_context.h"

#include <omp.h>

#include "backend/autocast.h"
#include "backend/interrupt.h"

namespace nn::backend {
namespace {
Generator g_process_generator;  // code outside any RunScope (the process's)
thread_local Generator* t_generator = nullptr;
}  // namespace

Generator& current_generator() { return t_generator ? *t_generator : g_process_generator; }

RunScope::RunScope(const RunState& state)
    : saved_generator_(t_generator),
      device_(state.device),
      saved_autocast_(autocast_dtype()),
      saved_account_(current_account()),
      saved_stop_(t_stop_request),
      nested_(t_generator == state.generator) {
  t_generator = state.generator;
  set_current_account(state.account);
  t_stop_request = state.stop;
  if (!nested_) set_autocast_dtype(state.autocast);
  if (state.threads > 0 && omp_get_max_threads() != state.threads) {
    saved_threads_ = omp_get_max_threads();
    omp_set_num_threads(state.threads);
  }
}

RunScope::~RunScope() {
  t_generator = saved_generator_;
  set_current_account(saved_account_);
  t_stop_request = saved_stop_;
  if (!nested_) set_autocast_dtype(saved_autocast_);
  if (saved_threads_) omp_set_num_threads(saved_threads_);
}

}  // namespace nn::backend
