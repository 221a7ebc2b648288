// The processes of one run (SPEC §14): this process's rank in the world and
// the collectives over host buffers that the collective ops call
// (ops/collective.cpp). One communicator per process: MPI's when nn was
// launched by mpirun or mpiexec (and built with MPI, cmake/mpi.cmake), else a
// world of one rank where every collective is a copy. MPI starts on first
// use, so a plain run never pays for it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "backend/dtype.h"

namespace nn::backend::comm {

enum class ReduceOp : uint8_t { sum, mean, max, min };
const char* reduce_op_name(ReduceOp op);
bool parse_reduce_op(std::string_view name, ReduceOp& out);

struct World {
  int rank = 0;
  int size = 1;
  int local_rank = 0;  // among the ranks on this machine
};

// A started collective, completed by wait().
using Request = uint64_t;

class Communicator {
 public:
  virtual ~Communicator() = default;
  const World& world() const { return world_; }

  // In place over `count` elements of f32, f64, i32, i64 or bool (max and
  // min only) in host memory. `mean` divides the sum by the size (floats).
  virtual void all_reduce(void* data, int64_t count, DType dtype, ReduceOp op) = 0;
  virtual void broadcast(void* data, size_t bytes, int root) = 0;
  // `recv` holds size() * bytes: rank r's `send` at offset r * bytes.
  virtual void all_gather(const void* send, void* recv, size_t bytes) = 0;
  virtual void barrier() = 0;

  // An all_reduce started now and done when wait(r) returns; progress()
  // lets it advance meanwhile (MPI moves a started collective along only
  // inside its calls: the executor calls progress() between kernels).
  virtual Request start_all_reduce(void* data, int64_t count, DType dtype, ReduceOp op) = 0;
  // Returns when it was seen done, in steady_clock nanoseconds (a progress
  // call may have seen it before the wait began).
  virtual int64_t wait(Request r) = 0;
  virtual void progress() {}
  bool has_pending() const { return pending_ > 0; }

  // Host memory where an all-reduce of a buffer costs least (the memory the
  // ranks of one machine share: peers reduce it in place), for a graph's
  // arena; null where there is none or no room now. Given back with
  // give_back_shared.
  virtual void* take_shared(size_t) { return nullptr; }
  virtual void give_back_shared(void*) {}

  // Ends every rank with `code` (a diagnostic on this one). Never returns.
  [[noreturn]] virtual void abort(int code) = 0;

 protected:
  World world_;
  int pending_ = 0;
};

// The process's communicator, made on first use.
Communicator& communicator();
// The communicator when one was made already, else null: for callers that
// must not start MPI (the executor's progress check, the exit path).
Communicator* communicator_if_started();
// This process's world as its launcher's environment tells it, without
// starting MPI: rank 0 of 1 when not launched by mpirun or mpiexec.
World launch_world();
// Set by `nn --nproc` for its ranks: "1" where its own stderr is a terminal
// (theirs reach it through mpiexec).
inline constexpr const char* kStderrIsTerminal = "NN_STDERR_IS_TERMINAL";
// Whether this process's stderr ends on a terminal, itself or through the
// `nn --nproc` that launched it.
bool stderr_is_terminal();
bool launched_by_mpi();
// Whether this build has the MPI communicator.
bool mpi_built();
// The mpiexec this build was configured with ("" without MPI).
const char* mpiexec_path();
// steady_clock's time in nanoseconds, as the profiler counts it.
int64_t now_ns();
// Ends MPI where it was started; call from the thread that first used it.
void finalize();

}  // namespace nn::backend::comm
