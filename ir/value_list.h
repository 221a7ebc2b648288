// ValueList: a node's inputs or its outputs. Up to 4 ids live inside the
// node itself, more on the heap: most ops read one to three values and make
// one, so tracing, copying and rewriting a graph allocate nothing for them
// (a std::vector costs one allocation per list, two per node). Reads like a
// std::vector<ValueId>, converts to and from one, and is as big as one.
// Any short list of 32-bit ids that is mostly tiny fits it as well:
// fuse-elementwise keeps a group's member nodes in one.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <vector>

namespace nn::ir {

using ValueId = uint32_t;

class ValueList {
 public:
  static constexpr uint32_t kInline = 4;

  ValueList() = default;
  ValueList(std::initializer_list<ValueId> ids) { assign(ids.begin(), ids.end()); }
  ValueList(const std::vector<ValueId>& ids) { assign(ids.data(), ids.data() + ids.size()); }  // NOLINT: implicit
  ValueList(const ValueList& o) { assign(o.begin(), o.end()); }
  ValueList(ValueList&& o) noexcept { take(o); }
  ValueList& operator=(const ValueList& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  ValueList& operator=(ValueList&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  ~ValueList() { release(); }

  operator std::vector<ValueId>() const { return {begin(), end()}; }  // NOLINT: implicit

  uint32_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  ValueId* data() { return on_heap() ? heap_ : inline_; }
  const ValueId* data() const { return on_heap() ? heap_ : inline_; }
  ValueId* begin() { return data(); }
  ValueId* end() { return data() + size_; }
  const ValueId* begin() const { return data(); }
  const ValueId* end() const { return data() + size_; }
  ValueId& operator[](size_t i) { return data()[i]; }
  ValueId operator[](size_t i) const { return data()[i]; }
  ValueId& front() { return data()[0]; }
  ValueId front() const { return data()[0]; }
  ValueId& back() { return data()[size_ - 1]; }
  ValueId back() const { return data()[size_ - 1]; }

  void reserve(size_t n) {
    if (n <= capacity_) return;
    auto* grown = new ValueId[n];
    std::copy(begin(), end(), grown);
    if (on_heap()) delete[] heap_;
    heap_ = grown;
    capacity_ = uint32_t(n);
  }
  void push_back(ValueId v) {
    if (size_ == capacity_) reserve(size_t(capacity_) * 2);
    data()[size_++] = v;
  }
  void resize(size_t n, ValueId fill = 0) {
    reserve(n);
    std::fill(data() + std::min<size_t>(size_, n), data() + n, fill);
    size_ = uint32_t(n);
  }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }
  // Drops the ids `pred` holds for, the others kept in order.
  template <class Pred>
  void erase_if(Pred pred) {
    size_ = uint32_t(std::remove_if(begin(), end(), pred) - begin());
  }
  // Inserts [first, last) before pos.
  ValueId* insert(ValueId* pos, const ValueId* first, const ValueId* last) {
    const size_t at = size_t(pos - begin()), n = size_t(last - first);
    if (at == size_ && (last <= begin() || first >= begin() + capacity_)) {  // appends from elsewhere
      if (size_ + n > capacity_) reserve(std::max<size_t>(size_ + n, size_t(capacity_) * 2));
      std::copy(first, last, end());
      size_ += uint32_t(n);
      return begin() + at;
    }
    std::vector<ValueId> tail(begin() + at, end());
    std::vector<ValueId> added(first, last);  // [first, last) may lie in this list
    resize(at);
    reserve(at + n + tail.size());
    for (ValueId v : added) data()[size_++] = v;
    for (ValueId v : tail) data()[size_++] = v;
    return begin() + at;
  }
  ValueId* erase(ValueId* pos) {
    std::copy(pos + 1, end(), pos);
    --size_;
    return pos;
  }

  friend bool operator==(const ValueList& a, const ValueList& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator==(const ValueList& a, const std::vector<ValueId>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  bool on_heap() const { return capacity_ > kInline; }
  void release() {
    if (on_heap()) delete[] heap_;
    capacity_ = kInline;
    size_ = 0;
  }
  void assign(const ValueId* first, const ValueId* last) {
    const size_t n = size_t(last - first);
    if (n > capacity_) {
      release();
      reserve(n);
    }
    if (on_heap()) {
      if (n) std::memmove(heap_, first, n * sizeof(ValueId));  // an empty vector's data() may be null
    } else {
      for (size_t i = 0; i < n; ++i) inline_[i] = first[i];  // at most kInline: no call
    }
    size_ = uint32_t(n);
  }
  // Takes o's ids (its heap array, or a copy of its inline ones); o is left empty.
  void take(ValueList& o) {
    if (o.on_heap()) {
      heap_ = o.heap_;
      capacity_ = o.capacity_;
    } else {
      std::memcpy(inline_, o.inline_, sizeof inline_);  // all slots: a fixed-size copy, no call
    }
    size_ = o.size_;
    o.capacity_ = kInline;
    o.size_ = 0;
  }

  union {
    ValueId inline_[kInline] = {};  // zeroed: moves copy all the slots
    ValueId* heap_;
  };
  uint32_t size_ = 0;
  uint32_t capacity_ = kInline;
};

}  // namespace nn::ir
