// Data built-ins (SPEC §8): load_digits and data_file (the data shipped in
// the stdlib's data/ folder), split (a seeded train/test split), batches (an
// iterator of mini-batches) and progress (a progress bar around any
// iterable).
#include <cmath>
#include <filesystem>

#include "backend/comm/communicator.h"
#include "backend/ops.h"
#include "backend/philox.h"
#include "frontend/builtins/builtins.h"
#include "frontend/builtins/csv_format.h"
#include "frontend/builtins/file_io.h"
#include "frontend/builtins/progress_bar.h"
#include "frontend/format.h"
#include "frontend/host_data.h"
#include "frontend/interpreter.h"

namespace nn::frontend::builtins {
namespace {
using backend::DType;
using backend::Tensor;

// ---- permutations ----

// A uniform integer in [0, n) from a Philox block (Lemire's multiply-shift;
// its bias, below n / 2^64, is far under anything a split could show).
uint64_t below(const backend::Philox4x32::Block& b, uint64_t n) {
  uint64_t r = uint64_t(b[0]) << 32 | b[1];
  return uint64_t((unsigned __int128)r * n >> 64);
}

// Fisher–Yates over 0..n-1; value k of the stream draws the swap for
// position n-1-k.
template <class BlockAt>
std::vector<int64_t> permutation(int64_t n, BlockAt block_at) {
  std::vector<int64_t> p(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) p[size_t(i)] = i;
  for (int64_t i = n - 1, k = 0; i > 0; --i, ++k)
    std::swap(p[size_t(i)], p[size_t(below(block_at(k), uint64_t(i) + 1))]);
  return p;
}

// split's stream: Philox keyed by the seed, with a tag in the third counter
// word (the global generator leaves it 0), so it is its own stream and the
// global generator is neither read nor advanced.
std::vector<int64_t> split_permutation(int64_t n, uint64_t seed) {
  constexpr uint32_t kTag = 0x53504c54;  // "SPLT"
  return permutation(n, [&](int64_t k) {
    return backend::Philox4x32::generate({uint32_t(k), uint32_t(uint64_t(k) >> 32), kTag, 0u},
                                         {uint32_t(seed), uint32_t(seed >> 32)});
  });
}

// batches' shuffle draws from the global generator, so seed() and --seed
// decide it and every new batches() call shuffles differently.
std::vector<int64_t> global_permutation(int64_t n) {
  backend::PhiloxDraw d = backend::philox_reserve(uint64_t(n));
  return permutation(n, [&](int64_t k) { return backend::Philox4x32::at(d.seed, d.offset + uint64_t(k)); });
}

Tensor ids_tensor(const std::vector<int64_t>& p, size_t lo, size_t hi) {
  return backend::from_ints(std::vector<int64_t>(p.begin() + ptrdiff_t(lo), p.begin() + ptrdiff_t(hi)),
                            backend::Shape{int64_t(hi - lo)}, DType::i64);
}

Tensor rows(const Tensor& x, int64_t lo, int64_t hi) {
  backend::IndexItem it;
  it.start = lo;
  it.stop = hi;
  return backend::index(x, {it});
}

// The tensor argument i with at least one axis; its length along axis 0.
int64_t leading(Args& a, size_t i, const Tensor& t) {
  if (t.ndim() == 0) a.fail(i, "expected a tensor with a leading (sample) axis, got a 0-d " + t.type().str());
  return t.shape()[0];
}

// ---- batches ----

// Mini-batches of (x, y) along axis 0. One pass: a second loop over a used
// iterator is an error rather than silently empty (call batches() again).
struct BatchIterator : Iterator {
  Tensor x, y;                 // y undefined: batches of x alone
  std::vector<int64_t> order;  // empty: in order
  int64_t n = 0, size = 1, count = 0, next_batch = 0;
  bool ended = false;

  std::optional<Value> advance() override {
    if (next_batch >= count) {
      if (ended) throw backend::Error("this batches() iterator is used up: call batches() again for another pass");
      ended = true;
      return std::nullopt;
    }
    const int64_t lo = next_batch * size, hi = std::min(n, lo + size);
    ++next_batch;
    Tensor xb, yb;
    if (order.empty()) {
      xb = rows(x, lo, hi);
      if (y.defined()) yb = rows(y, lo, hi);
    } else {
      Tensor ids = backend::to_device(ids_tensor(order, size_t(lo), size_t(hi)), x.device());
      xb = backend::take(x, ids);
      if (y.defined()) yb = backend::take(y, ids);
    }
    if (!y.defined()) return Value(xb);
    return Value(make_tuple({Value(xb), Value(yb)}));
  }
  std::optional<int64_t> length() const override { return count; }
};

// shard=true (SPEC §14): rank k of N keeps every N-th sample of the epoch's
// order from k, as PyTorch's DistributedSampler, so that step i of N ranks
// with batch B covers step i of one process with batch N·B. The remainder
// (n mod N samples) is dropped: every rank has as many steps. A shuffled
// order is rank 0's on every rank (each drew its own from its generator,
// which a script may seed per rank): else the ranks' shares would overlap.
void shard(BatchIterator& it, const backend::comm::World& w) {
  if (w.size == 1) return;
  if (!it.order.empty()) {
    const Tensor shared = backend::broadcast(ids_tensor(it.order, 0, it.order.size()), 0);
    const int64_t* p = shared.data<int64_t>();
    it.order.assign(p, p + shared.numel());
  }
  std::vector<int64_t> mine;
  const int64_t per_rank = it.n / w.size;
  for (int64_t t = 0; t < per_rank; ++t) {
    const int64_t j = t * w.size + w.rank;
    mine.push_back(it.order.empty() ? j : it.order[size_t(j)]);
  }
  it.order = std::move(mine);
  it.n = int64_t(it.order.size());
}

// ---- progress ----

// Yields the items of any iterable, as a for loop would, drawing a bar.
struct ProgressIterator : Iterator {
  Value seq;
  int64_t i = 0;
  std::optional<int64_t> total;
  ProgressBar bar;

  ProgressIterator(Value s, std::optional<int64_t> t) : seq(std::move(s)), total(t), bar(ProgressBar::for_stderr(t)) {}

  std::optional<Value> item() {
    switch (seq.kind()) {
      case Value::Kind::Range:
        if (i >= seq.as_range().size()) return std::nullopt;
        return Value(seq.as_range().at(i));
      case Value::Kind::List:
        if (size_t(i) >= seq.as_list()->items.size()) return std::nullopt;
        return seq.as_list()->items[size_t(i)];
      case Value::Kind::Tuple:
        if (size_t(i) >= seq.as_tuple()->items.size()) return std::nullopt;
        return seq.as_tuple()->items[size_t(i)];
      case Value::Kind::Tensor: {
        if (i >= seq.as_tensor().shape()[0]) return std::nullopt;
        backend::IndexItem it;
        it.kind = backend::IndexItem::index;
        it.i = i;
        return Value(backend::index(seq.as_tensor(), {it}));
      }
      default:
        return seq.as_iterator()->next();
    }
  }
  std::optional<Value> advance() override {
    bar.update(i);
    std::optional<Value> v = item();
    if (!v) {
      bar.finish(i);
      return std::nullopt;
    }
    ++i;
    return v;
  }
  std::optional<int64_t> length() const override { return total; }
  void for_each_value(const std::function<void(const Value&)>& f) const override { f(seq); }
};

}  // namespace

void install_data(Interpreter& vm) {
  def(vm, "load_digits", "", [](Args&) {
    // Shipped data: read even when allow_files is false.
    const std::string path = (std::filesystem::path(fileio::data_dir()) / "digits.csv").string();
    csv::Table t = csv::read(path, false);
    if (t.cols != 65 || t.rows == 0)
      throw fileio::FileError(path, "expected rows of 64 pixels and a label, found " + std::to_string(t.rows) +
                                        " rows of " + std::to_string(t.cols) + " cells");
    Tensor x = Tensor::empty(backend::Shape{t.rows, 64}, DType::f32);
    Tensor y = Tensor::empty(backend::Shape{t.rows}, DType::i64);
    float* xp = x.data<float>();
    int64_t* yp = y.data<int64_t>();
    for (int64_t r = 0; r < t.rows; ++r) {
      const double* row = t.values.data() + r * 65;
      for (int c = 0; c < 64; ++c) xp[r * 64 + c] = float(row[c] / 16.0);
      yp[r] = int64_t(row[64]);
    }
    return Value(make_tuple({Value(on_default_device(x)), Value(on_default_device(y))}));
  });
  def(vm, "data_file", "name", [](Args& a) {
    namespace fs = std::filesystem;
    const std::string& name = a.str(0);
    fs::path p = fs::path(fileio::data_dir()) / name;
    std::error_code ec;
    if (name.empty() || name.find('/') != std::string::npos || !fs::is_regular_file(p, ec)) {
      std::string have;
      for (auto& e : fs::directory_iterator(fileio::data_dir(), ec))
        if (e.path().extension() != ".md") have += (have.empty() ? "" : ", ") + e.path().filename().string();
      a.fail(0, "no data file `" + name + "` is shipped with nn" + (have.empty() ? "" : " (there are: " + have + ")"));
    }
    return Value(p.string());
  });
  def(vm, "split", "x, y, frac, seed=0", [](Args& a) {
    Tensor x = a.tensor(0), y = a.tensor(1);
    const int64_t n = leading(a, 0, x);
    if (leading(a, 1, y) != n)
      a.fail(1, "split needs x and y with the same number of rows, got " + x.type().str() + " and " + y.type().str());
    const double frac = a.number(2);
    if (!(frac >= 0 && frac <= 1)) a.fail(2, "split needs a fraction between 0 and 1, got " + to_str(Value(frac)));
    const std::vector<int64_t> p = split_permutation(n, uint64_t(a.integer(3)));
    const size_t ntrain = size_t(std::llround(frac * double(n)));
    Tensor tr = backend::to_device(ids_tensor(p, 0, ntrain), x.device());
    Tensor te = backend::to_device(ids_tensor(p, ntrain, size_t(n)), x.device());
    return Value(make_tuple({Value(backend::take(x, tr)), Value(backend::take(y, tr)), Value(backend::take(x, te)),
                             Value(backend::take(y, te))}));
  });
  def(vm, "batches", "x, y, size, shuffle=false, drop_last=false, shard=false", [](Args& a) {
    auto it = std::make_shared<BatchIterator>();
    it->x = a.tensor(0);
    it->n = leading(a, 0, it->x);
    if (!a[1].is_none()) {
      it->y = a.tensor(1);
      if (leading(a, 1, it->y) != it->n)
        a.fail(1, "batches needs x and y with the same number of rows, got " + it->x.type().str() + " and " +
                      it->y.type().str());
    }
    it->size = a.integer(2);
    if (it->size < 1) a.fail(2, "batches needs a batch size of at least 1, got " + std::to_string(it->size));
    // Its order is drawn on the host: in a graph, once, when traced.
    if (a.boolean(3)) {
      refuse_in_graph(a, "batches(shuffle=true)");
      it->order = global_permutation(it->n);
    }
    if (a.boolean(5)) shard(*it, backend::comm::communicator().world());
    it->count = it->n / it->size + (!a.boolean(4) && it->n % it->size != 0);  // n + size - 1 could overflow
    return Value(IteratorPtr(it));
  });
  def(vm, "progress", "iterable", [](Args& a) {
    const Value& v = a[0];
    std::optional<int64_t> total;
    switch (v.kind()) {
      case Value::Kind::Range:
        total = v.as_range().size();
        break;
      case Value::Kind::List:
        total = int64_t(v.as_list()->items.size());
        break;
      case Value::Kind::Tuple:
        total = int64_t(v.as_tuple()->items.size());
        break;
      case Value::Kind::Tensor:
        if (v.as_tensor().ndim() == 0) a.fail(0, "cannot iterate over a 0-d tensor " + v.as_tensor().type().str());
        total = v.as_tensor().shape()[0];
        break;
      case Value::Kind::Iterator:
        total = v.as_iterator()->length();
        break;
      default:
        a.fail(0, "progress needs something to iterate over (a range, list, tuple, tensor or iterator), got " +
                      a_type_name(v));
    }
    return Value(IteratorPtr(std::make_shared<ProgressIterator>(v, total)));
  });
}

}  // namespace nn::frontend::builtins
