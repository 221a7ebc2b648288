// Buffers: which values of a graph share memory. A buffer is the memory of
// one value (its root) together with the views of it (reshape shares its
// input's memory) and the outputs written over it in place (Node::overwrites).
// Whether a buffer is the caller's, the host's or the run's own does not
// depend on the order the nodes run in; its live range does (memory_plan.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace nn::ir {

enum class BufferKind : uint8_t {
  bound,  // an input, param, state or constant: the caller's tensor
  own,    // holds a value the host may keep after the run (an output, a state's
          // new value not written in place): a block of its own on every run
  arena,  // lives only during the run: an offset in its device's arena
};

struct Buffer {
  ValueId root = kNone;  // the value that first holds the memory
  size_t bytes = 0;      // the root's size
  BufferKind kind = BufferKind::arena;
};

struct Buffers {
  std::vector<uint32_t> of_value;  // per value: index into `list`
  std::vector<Buffer> list;
  const Buffer& of(ValueId v) const { return list[of_value[v]]; }
};

// The buffers of g, from its views and in-place annotations.
Buffers find_buffers(const Graph& g);

// The value whose memory v shares through views alone (v itself when v is
// not a view): a view class is a root and every reshape of it. Captured
// tensors sharing a block are one class too.
std::vector<ValueId> view_roots(const Graph& g);

size_t value_bytes(const Value& v);

}  // namespace nn::ir
