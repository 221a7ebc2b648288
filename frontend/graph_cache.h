// What graph mode keeps per graph function or graph block: up to 8 compiled
// graphs, one per call signature, most recently used last.
#pragma once
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "frontend/capture_guard.h"
#include "frontend/host_read_guard.h"
#include "frontend/source.h"
#include "frontend/value.h"
#include "ir/compile.h"

namespace nn::frontend {

// One argument of a call as the cache compares it: a tensor by type, any
// other value by value (or identity, for records and functions).
struct SignatureItem {
  std::string name;  // "xb", "xs[1]"
  bool is_tensor = false;
  backend::TensorType type;
  std::string value;  // non-tensors: how the value compares
  bool operator==(const SignatureItem& o) const {
    return name == o.name && is_tensor == o.is_tensor && value == o.value &&
           (!is_tensor || (type.dtype == o.type.dtype && type.shape == o.type.shape && type.device == o.type.device));
  }
};
using Signature = std::vector<SignatureItem>;

// The graph as ir::compile made it (raw, graph, passes, plan, times), and
// what the interpreter adds.
struct CompiledGraph : ir::CompiledGraph {
  Signature signature;
  // The autocast dtype it was traced under (f32: none): its casts are in
  // the graph, so a call under another autocast traces again.
  backend::DType autocast = backend::DType::f32;
  // Whether grad mode was on: under no_grad a grad() inside the graph is an
  // error, and requires_grad of what it computes is false, as in eager code.
  bool grad_mode = true;
  // Whether a call now may run this entry: the same autocast and grad mode.
  bool fits_mode() const;
  Value result;                     // graph functions: the traced return value
  std::vector<Symbol> assigns;      // graph blocks: the variable of each output
  CaptureGuards guards;             // where its captured tensors were found
  HostReads host_reads;             // the host values it read from outside
  // The functions and records its signature names by address, held so that
  // no other one takes that address while the entry lives (a freed lambda's
  // successor matched the entry and replayed the old lambda's code).
  std::vector<Value> held_args;
  // Its collective calls as its trace made them ("" for none): what every
  // rank checks before each run (SPEC §14), as it checks an eager call.
  std::string collective_run;
  // Which memory its run writes, for the check that a call's arguments do
  // not share it (memory_shared_with_writes): the arguments it updates, and
  // the blocks of the captured tensors it updates and of all it captured.
  std::vector<bool> input_written;
  std::unordered_set<const void*> written_captured_blocks;
  std::unordered_set<const void*> captured_blocks;
  void note_writes();
  double trace_ms = 0;
  uint64_t runs = 0;
  size_t peak_bytes = 0;  // memory the last run took at its peak
};

struct GraphCache {
  static constexpr size_t kCapacity = 8;
  std::string name;  // "train_step", or "graph block at f.nn:3:1"
  std::vector<std::unique_ptr<CompiledGraph>> entries;
  size_t traces = 0;
  size_t guard_retraces = 0;  // traces again because a captured tensor was rebound
  const CompiledGraph* latest() const { return entries.empty() ? nullptr : entries.back().get(); }
};

}  // namespace nn::frontend
