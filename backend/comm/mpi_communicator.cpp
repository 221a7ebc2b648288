// The communicator over MPI (Open MPI; backend/comm/communicator.h), made
// when nn runs under mpirun or mpiexec. MPI is asked for serialized threads:
// a mutex keeps calls from two interpreter threads apart. Errors come back
// as Error (MPI_ERRORS_RETURN), never as MPI's own abort. Where every rank
// is on this machine, non-blocking all-reduces go through shared memory
// (comm/shared_memory_all_reduce.h) in an MPI window; MPI carries the rest.
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "backend/comm/communicator.h"
#include "backend/comm/mpi_library.h"
#include "backend/comm/shared_memory_all_reduce.h"
#include "backend/error.h"

namespace nn::backend::comm {
namespace {

MPI_Datatype mpi_type(DType t) {
  switch (t) {
    case DType::f32: return MPI_FLOAT;
    case DType::f64: return MPI_DOUBLE;
    case DType::i32: return MPI_INT32_T;
    case DType::i64: return MPI_INT64_T;
    case DType::boolean: return MPI_UINT8_T;
    default: throw Error("collectives: no MPI type for " + std::string(dtype_name(t)));
  }
}

// MPI's own max and min of floats keep or drop a NaN by where it lies; these
// make a NaN on any rank the result, as the shared memory path does.
template <typename T, bool kMax>
void nan_extreme(void* in, void* inout, int* len, MPI_Datatype*) {
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  for (int i = 0; i < *len; ++i)
    if (a[i] != a[i] || (kMax ? a[i] > b[i] : a[i] < b[i])) b[i] = a[i];
}

struct NanOps {
  MPI_Op max_f32, min_f32, max_f64, min_f64;
};

const NanOps& nan_ops() {
  static const NanOps ops = [] {
    NanOps o{};
    MPI_Op_create(&nan_extreme<float, true>, 1, &o.max_f32);
    MPI_Op_create(&nan_extreme<float, false>, 1, &o.min_f32);
    MPI_Op_create(&nan_extreme<double, true>, 1, &o.max_f64);
    MPI_Op_create(&nan_extreme<double, false>, 1, &o.min_f64);
    return o;
  }();
  return ops;
}

MPI_Op mpi_op(ReduceOp op, DType t) {
  const bool f32 = t == DType::f32, f64 = t == DType::f64;
  switch (op) {
    case ReduceOp::sum: case ReduceOp::mean: return MPI_SUM;
    case ReduceOp::max: return f32 ? nan_ops().max_f32 : f64 ? nan_ops().max_f64 : MPI_MAX;
    case ReduceOp::min: return f32 ? nan_ops().min_f32 : f64 ? nan_ops().min_f64 : MPI_MIN;
  }
  return MPI_SUM;
}

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error(std::string(what) + ": MPI failed: " + std::string(text, size_t(len)));
}

// The sum divided by the number of ranks, for `mean`.
void divide(void* data, int64_t count, DType t, int size) {
  if (t == DType::f32) {
    float* p = static_cast<float*>(data);
    for (int64_t i = 0; i < count; ++i) p[i] /= float(size);
  } else if (t == DType::f64) {
    double* p = static_cast<double*>(data);
    for (int64_t i = 0; i < count; ++i) p[i] /= double(size);
  }
}

// "0" keeps every all-reduce on MPI's messages (docs/distributed.md).
constexpr const char* kSharedMemoryVariable = "NN_SHARED_MEMORY_COLLECTIVES";

bool env_says_no(const char* name) {
  const char* v = std::getenv(name);
  return v && std::string_view(v) == "0";
}

int int_count(int64_t count, const char* what) {
  if (count > INT_MAX) throw Error(std::string(what) + ": more than 2^31 - 1 elements in one collective");
  return int(count);
}

class Mpi final : public Communicator {
 public:
  Mpi() {
    // Open MPI's non-blocking all-reduce picks an algorithm that takes twice
    // the blocking one's time on one machine (2 MB, 2 ranks: 1.1 ms against
    // 0.4); the ring is as fast. A user's own choice stays.
    setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "1", 0);
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_.size);
    MPI_Comm local;
    check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_.rank, MPI_INFO_NULL, &local),
          "MPI_Comm_split_type");
    MPI_Comm_rank(local, &world_.local_rank);
    int local_size = 0;
    MPI_Comm_size(local, &local_size);
    MPI_Comm_free(&local);
    if (world_.size > 1 && local_size == world_.size && !env_says_no(kSharedMemoryVariable)) map_shared_areas();
  }

  void all_reduce(void* data, int64_t count, DType dtype, ReduceOp op) override {
    if (shared_ && SharedMemoryAllReduce::supports(dtype, op)) {
      wait(start_all_reduce(data, count, dtype, op));
      return;
    }
    std::lock_guard lock(mu_);
    drain_shared();
    check(MPI_Allreduce(MPI_IN_PLACE, data, int_count(count, "all_reduce"), mpi_type(dtype), mpi_op(op, dtype),
                        MPI_COMM_WORLD),
          "all_reduce");
    if (op == ReduceOp::mean) divide(data, count, dtype, world_.size);
  }
  void broadcast(void* data, size_t bytes, int root) override {
    std::lock_guard lock(mu_);
    drain_shared();
    check(MPI_Bcast(data, int_count(int64_t(bytes), "broadcast"), MPI_BYTE, root, MPI_COMM_WORLD), "broadcast");
  }
  void all_gather(const void* send, void* recv, size_t bytes) override {
    std::lock_guard lock(mu_);
    drain_shared();
    const int n = int_count(int64_t(bytes), "all_gather");
    check(MPI_Allgather(send, n, MPI_BYTE, recv, n, MPI_BYTE, MPI_COMM_WORLD), "all_gather");
  }
  void barrier() override {
    std::lock_guard lock(mu_);
    drain_shared();
    check(MPI_Barrier(MPI_COMM_WORLD), "barrier");
  }

  Request start_all_reduce(void* data, int64_t count, DType dtype, ReduceOp op) override {
    std::lock_guard lock(mu_);
    Started s{MPI_REQUEST_NULL, data, count, dtype, op == ReduceOp::mean, 0, std::nullopt};
    if (shared_ && SharedMemoryAllReduce::supports(dtype, op)) {
      s.shared = shared_->start(data, count, dtype, op);
      return remember(s);
    }
    drain_shared();
    check(MPI_Iallreduce(MPI_IN_PLACE, data, int_count(count, "all_reduce"), mpi_type(dtype), mpi_op(op, dtype),
                         MPI_COMM_WORLD, &s.request),
          "all_reduce");
    return remember(s);
  }
  int64_t wait(Request id) override {
    std::lock_guard lock(mu_);
    auto it = started_.find(id);
    if (it == started_.end()) return now_ns();
    Started s = it->second;
    started_.erase(it);
    --pending_;
    if (s.shared) return shared_->wait(*s.shared);
    // Shared memory requests started since move on meanwhile: a peer may be
    // waiting on them before it lets this one finish.
    for (int done = 0; !done;) {
      check(MPI_Test(&s.request, &done, MPI_STATUS_IGNORE), "all_reduce");
      if (shared_) shared_->progress();
    }
    if (s.mean) divide(s.data, s.count, s.dtype, world_.size);
    return s.done_ns ? s.done_ns : now_ns();
  }
  void* take_shared(size_t bytes) override {
    std::lock_guard lock(mu_);
    return shared_ ? shared_->take(bytes) : nullptr;
  }
  void give_back_shared(void* memory) override {
    std::lock_guard lock(mu_);
    shared_->give_back(memory);
  }
  void progress() override {
    std::lock_guard lock(mu_);
    if (shared_) shared_->progress();
    for (auto& [id, s] : started_) {
      int done = 0;
      if (s.request == MPI_REQUEST_NULL) continue;
      MPI_Test(&s.request, &done, MPI_STATUS_IGNORE);
      if (done) s.done_ns = now_ns();
    }
  }
  [[noreturn]] void abort(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }

 private:
  struct Started {
    MPI_Request request;
    void* data;
    int64_t count;
    DType dtype;
    bool mean;
    int64_t done_ns;  // when a progress call saw it done; 0: not yet
    std::optional<Request> shared;  // its request there, when it went through shared memory
  };

  Request remember(const Started& s) {
    const Request id = ++next_;
    started_.emplace(id, s);
    ++pending_;
    return id;
  }

  // Each rank's area in one window over the world (all on this machine):
  // pages are taken only as requests reach them.
  void map_shared_areas() {
    constexpr size_t kAreaBytes = SharedMemoryAllReduce::kHeaderBytes + (size_t(64) << 20);
    // MPI places each rank's part on 8 bytes; the header's counters want a
    // cache line each. Rounding up gives the same place in every process
    // (the window is mapped on a page boundary in each).
    constexpr size_t kLine = 64;
    auto line_up = [](void* p) {
      return reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(p) + kLine - 1) / kLine * kLine);
    };
    char* mine = nullptr;
    MPI_Win window;
    if (MPI_Win_allocate_shared(MPI_Aint(kAreaBytes + kLine), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &window) !=
        MPI_SUCCESS)
      return;  // MPI's messages carry every all-reduce
    SharedMemoryAllReduce::init_area(line_up(mine));
    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    std::vector<void*> areas;
    for (int k = 0; k < world_.size; ++k) {
      MPI_Aint bytes = 0;
      int unit = 0;
      void* base = nullptr;
      check(MPI_Win_shared_query(window, k, &bytes, &unit, &base), "MPI_Win_shared_query");
      areas.push_back(line_up(base));
    }
    shared_ = std::make_unique<SharedMemoryAllReduce>(std::move(areas), kAreaBytes, world_.rank);
  }

  // A blocking MPI call must not leave a peer waiting on this rank's shared
  // memory phases: started all-reduces complete first.
  void drain_shared() {
    if (shared_) shared_->drain();
  }
  std::mutex mu_;
  std::unique_ptr<SharedMemoryAllReduce> shared_;
  std::unordered_map<Request, Started> started_;
  Request next_ = 0;
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_communicator() { return std::make_unique<Mpi>(); }

void finalize_mpi() {
  int init = 0, done = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&done);
  if (init && !done) MPI_Finalize();
}

}  // namespace nn::backend::comm
