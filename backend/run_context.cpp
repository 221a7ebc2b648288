// The per-thread run state an interpreter installs (backend/run_context.h).
#include "backend/run_context.h"

#include <omp.h>

#include "backend/autocast.h"

namespace nn::backend {
namespace {
Generator g_process_generator;  // code outside any RunScope (the process's)
thread_local Generator* t_generator = nullptr;
}  // namespace

Generator& current_generator() { return t_generator ? *t_generator : g_process_generator; }

RunScope::RunScope(Generator* g, int threads, Device* device, DType autocast)
    : saved_generator_(t_generator), device_(device), saved_autocast_(autocast_dtype()), nested_(t_generator == g) {
  t_generator = g;
  if (!nested_) set_autocast_dtype(autocast);
  if (threads > 0 && omp_get_max_threads() != threads) {
    saved_threads_ = omp_get_max_threads();
    omp_set_num_threads(threads);
  }
}

RunScope::~RunScope() {
  t_generator = saved_generator_;
  if (!nested_) set_autocast_dtype(saved_autocast_);
  if (saved_threads_) omp_set_num_threads(saved_threads_);
}

}  // namespace nn::backend
