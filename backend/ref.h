// Intrusive reference counting: one atomic count inside the object, so a
// handle is one pointer and copying it is one atomic increment.
#pragma once
#include <atomic>
#include <cstdint>
#include <utility>

namespace nn::backend {

class RefCounted {
 public:
  RefCounted() = default;
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;
  int32_t use_count() const { return refs_.load(std::memory_order_relaxed); }

 protected:
  ~RefCounted() = default;

 private:
  template <class T> friend class Ref;
  mutable std::atomic<int32_t> refs_{0};
};

template <class T>
class Ref {
 public:
  Ref() = default;
  explicit Ref(T* p) : p_(p) { retain(); }
  Ref(const Ref& o) : p_(o.p_) { retain(); }
  Ref(Ref&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  Ref& operator=(const Ref& o) {
    Ref(o).swap(*this);
    return *this;
  }
  Ref& operator=(Ref&& o) noexcept {
    Ref(std::move(o)).swap(*this);
    return *this;
  }
  ~Ref() { release(); }

  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  bool operator==(const Ref& o) const { return p_ == o.p_; }
  void swap(Ref& o) noexcept { std::swap(p_, o.p_); }
  void reset() { Ref().swap(*this); }

 private:
  void retain() {
    if (p_) p_->refs_.fetch_add(1, std::memory_order_relaxed);
  }
  void release() {
    if (p_ && p_->refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete p_;
  }
  T* p_ = nullptr;
};

template <class T, class... A>
Ref<T> make_ref(A&&... a) {
  return Ref<T>(new T(std::forward<A>(a)...));
}

}  // namespace nn::backend
