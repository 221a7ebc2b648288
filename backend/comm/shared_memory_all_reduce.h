// Non-blocking all-reduce among ranks that share one machine, through a
// shared memory area per rank (mapped in every rank's process) rather than
// MPI's messages. For N ranks each buffer is cut into N chunks; rank r
// publishes the chunks others reduce (a copy into its area), reduces chunk
// r from every rank's copy into its own buffer and its area, then copies
// the other ranks' reduced chunks back: one read of each peer's data and
// one of each result, the least traffic an all-reduce can make. Every rank
// reduces its chunk in rank order, so all ranks hold the same bits.
//
// Each phase runs as soon as the peers' phases it needs are done, inside
// start(), progress() or wait(): the executor calls progress() between
// kernels, so a bucket advances while backward runs. Requests are numbered
// in the order they start, the same on every rank (SPEC §14), and pass each
// phase in that order; a rank's counters in its area's header say how far it
// has come, so peers wait on them without messages. Nothing here calls MPI:
// the communicator maps the areas (comm/mpi_communicator.cpp).
//
// A buffer that lies in its rank's area (memory from take(): a graph's
// arena) is reduced in place: peers read its chunks where they are and
// write their sums straight into it, which spares both copies.
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "backend/comm/communicator.h"

namespace nn::backend::comm {

class SharedMemoryAllReduce {
 public:
  // Bytes of an area's header; its owner calls init_area on it before any
  // rank makes a SharedMemoryAllReduce over it.
  static constexpr size_t kHeaderBytes = 4096;
  static void init_area(void* area);

  // areas[k]: rank k's area of area_bytes (header included), as mapped here.
  SharedMemoryAllReduce(std::vector<void*> areas, size_t area_bytes, int rank);

  static bool supports(DType dtype, ReduceOp op);
  // Starts an all-reduce of `count` elements at `data` (which must stay put
  // until wait returns); a buffer larger than a quarter of the area goes as
  // several requests.
  Request start(void* data, int64_t count, DType dtype, ReduceOp op);
  // Advances every started request as far as the peers allow.
  void progress();
  // Completes r and every request started before it; returns when r was
  // seen done, in now_ns() time.
  int64_t wait(Request r);
  // Completes every started request.
  void drain();
  bool idle() const { return pending_.empty(); }

  // `bytes` of this rank's area for buffers to be reduced in place, until
  // given back; null when the area has no such room now.
  void* take(size_t bytes);
  void give_back(void* memory);

 private:
  struct Header;
  struct Pending {
    uint64_t seq;
    char* data;
    int64_t count;
    DType dtype;
    ReduceOp op;
    size_t offset;  // in this rank's area, past the header
    int phase;      // 0 published, 1 reduced, 2 done
    bool last;      // the last piece of what start() was given: its Request
    bool in_place;  // data lies in this rank's area, at offset
  };
  Header& header(int k) const;
  char* payload(int k) const;
  // Where rank k's request seq lies in its area, with the in-place bit.
  uint64_t slot(int k, uint64_t seq) const;
  // [begin, end) of rank k's chunk of a request, in elements.
  void chunk(const Pending& p, int k, int64_t& begin, int64_t& end) const;
  bool in_area(const void* data, size_t bytes) const;
  // The lowest offset of a free region of `bytes`, SIZE_MAX when none.
  size_t lowest_free(size_t bytes);
  void wait_for_slot(uint64_t seq);
  size_t reserve(size_t bytes, uint64_t seq);
  uint64_t slowest_finished() const;
  void publish(Pending& p);
  bool try_reduce(Pending& p);
  bool try_gather(Pending& p);
  void spin(unsigned& turns);

  std::vector<void*> areas_;
  size_t payload_bytes_;
  int rank_;
  int size_;
  uint64_t next_seq_ = 0;
  std::deque<Pending> pending_;
  // Regions of this rank's area that peers may still read, (seq, offset,
  // bytes), and those taken (seq kTaken).
  struct Held {
    uint64_t seq;
    size_t offset;
    size_t bytes;
  };
  std::vector<Held> held_;
  std::unordered_map<Request, int64_t> done_ns_;  // requests seen done before their wait
};

}  // namespace nn::backend::comm
