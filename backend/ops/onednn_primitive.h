// What nn's oneDNN kernels (conv_onednn.cpp, batch_norm_onednn.cpp) share:
// the CPU engine, a primitive prepared with the reorders between nn's
// layouts and the primitive's own, running one on nn's pointers, and a
// bounded cache of prepared primitives keyed by shape. Included only where
// nn is built with oneDNN (NN_HAVE_ONEDNN).
//
// Every byte a primitive needs beyond nn's tensors (reordered copies, the
// primitive's scratchpad) is a scratch tensor of nn's pool, so that it is
// counted as nn's. Primitives are immutable and run with a scratchpad given
// per call, so interpreters on several threads share them.
#pragma once
#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "backend/onednn_library.h"
#include "backend/tensor.h"

namespace nn::backend::onednn {

using dnnl::memory;
using tag = memory::format_tag;
constexpr auto f32 = memory::data_type::f32;

dnnl::engine& cpu_engine();

// One argument of a primitive: the layout nn stores it in, the layout the
// primitive wants, and the reorder between them when they differ (into the
// primitive for inputs, out of it for outputs).
struct Arg {
  int id = 0;
  memory::desc plain, wanted;
  std::optional<dnnl::reorder> reorder;
  bool output = false;
  Arg(int id, const memory::desc& plain, const memory::desc& wanted, bool output);
};

// A primitive with its arguments and its scratchpad's size; `id` names it
// to the threads' tables of bound memory objects (an address could be
// reused after the cache drops it).
struct Prepared {
  dnnl::primitive primitive;
  std::vector<Arg> args;
  memory::desc scratchpad;
  uint64_t id = next_id();
  static uint64_t next_id() {
    static std::atomic<uint64_t> n{0};
    return ++n;
  }
};

// Attributes that make a primitive take its scratchpad from the caller.
dnnl::primitive_attr user_scratchpad();

template <class Primitive, class PrimitiveDesc>
Prepared prepare(const PrimitiveDesc& pd, std::vector<Arg> args) {
  return Prepared{Primitive(pd), std::move(args), pd.scratchpad_desc()};
}

// A scratch tensor of nn's pool holding at least `bytes`.
Tensor scratch_bytes(size_t bytes);

// Called on each output, in the primitive's layout, before it is reordered
// to nn's (conv2d_relu's ReLU).
using OutputHook = void (*)(float* data, int64_t count);

// Runs p on the given pointers (one per p.args, in order). With
// `inner_outputs` an output's pointer is a buffer in the primitive's own
// layout (Arg::wanted), and it stays in that layout.
void run(const Prepared& p, const std::vector<void*>& ptrs, OutputHook hook = nullptr, bool inner_outputs = false);

// How many distinct shapes a cache keeps (a training step of ResNet-50
// uses about 25 distinct convolutions).
constexpr size_t kCachedShapes = 64;

// The primitives of each shape (Entry, made on first use of its key) for
// the kCachedShapes keys used last: making one costs far more than running
// a small one, and a host whose shapes keep changing must not keep them all.
template <class Key, class Entry>
class PrimitiveCache {
 public:
  // A prepared primitive and the entry that holds it, kept alive while it
  // runs even if the cache drops the entry meanwhile. Empty where oneDNN
  // refused the shape (asked again next time: a refusal is not remembered).
  struct Use {
    std::shared_ptr<Entry> owner;
    const Prepared* p = nullptr;
  };

  // which(entry) names the primitive wanted, making it where need be; make()
  // makes the entry. Both run under the cache's lock.
  template <class Make, class Which>
  Use use(const Key& key, Make make, Which which) {
    std::lock_guard<std::mutex> lock(mutex_);
    try {
      Slot& s = slots_[key];
      s.last_use = ++clock_;
      if (!s.entry) s.entry = std::make_shared<Entry>(make());
      Use u{s.entry, &which(*s.entry)};
      if (slots_.size() > kCachedShapes)  // the least recently used goes
        slots_.erase(std::min_element(slots_.begin(), slots_.end(), [](const auto& a, const auto& b) {
          return a.second.last_use < b.second.last_use;
        }));
      return u;
    } catch (const dnnl::error&) {
      if (!slots_[key].entry) slots_.erase(key);
      return {};
    }
  }

  size_t size() {
    std::lock_guard<std::mutex> lock(mutex_);
    return slots_.size();
  }

 private:
  struct Slot {
    std::shared_ptr<Entry> entry;
    uint64_t last_use = 0;
  };
  std::mutex mutex_;
  std::map<Key, Slot> slots_;
  uint64_t clock_ = 0;
};

}  // namespace nn::backend::onednn
