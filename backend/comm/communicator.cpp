// The communicator of this process (backend/comm/communicator.h): the world
// a launcher's environment describes, a world of one rank, and the choice
// between it and MPI's (comm/mpi_communicator.cpp) on first use.
#include "backend/comm/communicator.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

#include <unistd.h>

namespace nn::backend::comm {

#ifdef NN_HAVE_MPI
std::unique_ptr<Communicator> make_mpi_communicator();  // comm/mpi_communicator.cpp
void finalize_mpi();
#endif

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::mean: return "mean";
    case ReduceOp::max: return "max";
    case ReduceOp::min: return "min";
  }
  return "?";
}

bool parse_reduce_op(std::string_view name, ReduceOp& out) {
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::mean, ReduceOp::max, ReduceOp::min})
    if (name == reduce_op_name(op)) {
      out = op;
      return true;
    }
  return false;
}

namespace {

// An integer environment variable, or -1.
int env_int(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return -1;
  char* end = nullptr;
  long x = std::strtol(v, &end, 10);
  return *end ? -1 : int(x);
}

// A world of one rank: each collective leaves its data as it is.
class SingleProcess final : public Communicator {
 public:
  void all_reduce(void*, int64_t, DType, ReduceOp) override {}
  void broadcast(void*, size_t, int) override {}
  void all_gather(const void* send, void* recv, size_t bytes) override {
    if (send != recv) std::memmove(recv, send, bytes);
  }
  void barrier() override {}
  Request start_all_reduce(void*, int64_t, DType, ReduceOp) override { return 0; }
  int64_t wait(Request) override { return now_ns(); }
  [[noreturn]] void abort(int code) override { std::_Exit(code); }
};

std::once_flag g_once;
std::unique_ptr<Communicator> g_comm;
std::atomic<Communicator*> g_started{nullptr};

}  // namespace

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool mpi_built() {
#ifdef NN_HAVE_MPI
  return true;
#else
  return false;
#endif
}

const char* mpiexec_path() {
  // NN_MPIEXEC names another one (a machine whose Open MPI lives elsewhere).
  if (const char* other = std::getenv("NN_MPIEXEC"); other && *other) return other;
#ifdef NN_MPIEXEC
  return NN_MPIEXEC;
#else
  return "";
#endif
}

bool launched_by_mpi() {
  return mpi_built() && (env_int("OMPI_COMM_WORLD_SIZE") > 0 || env_int("PMI_SIZE") > 0 || env_int("PMIX_RANK") >= 0);
}

World launch_world() {
  World w;
  if (!launched_by_mpi()) return w;
  // Open MPI's variables, else those of the PMI launchers (MPICH, Slurm).
  const bool ompi = env_int("OMPI_COMM_WORLD_SIZE") > 0;
  w.size = ompi ? env_int("OMPI_COMM_WORLD_SIZE") : std::max(1, env_int("PMI_SIZE"));
  w.rank = std::max(0, ompi ? env_int("OMPI_COMM_WORLD_RANK") : env_int("PMI_RANK"));
  w.local_rank = std::max(0, ompi ? env_int("OMPI_COMM_WORLD_LOCAL_RANK") : env_int("MPI_LOCALRANKID"));
  return w;
}

bool stderr_is_terminal() {
  if (isatty(STDERR_FILENO)) return true;
  const char* v = launched_by_mpi() ? std::getenv(kStderrIsTerminal) : nullptr;
  return v && std::strcmp(v, "1") == 0;
}

Communicator& communicator() {
  std::call_once(g_once, [] {
#ifdef NN_HAVE_MPI
    if (launched_by_mpi()) g_comm = make_mpi_communicator();
#endif
    if (!g_comm) g_comm = std::make_unique<SingleProcess>();
    g_started.store(g_comm.get());
  });
  return *g_comm;
}

Communicator* communicator_if_started() { return g_started.load(std::memory_order_relaxed); }

void finalize() {
#ifdef NN_HAVE_MPI
  // Only a communicator made over MPI opened the library.
  if (g_started.load() && launched_by_mpi()) finalize_mpi();
#endif
}

}  // namespace nn::backend::comm
