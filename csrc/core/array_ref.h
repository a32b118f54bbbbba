// A non-owning view of a contiguous sequence, so kernels can take `IntArrayRef sizes` from a
// vector, an initializer list or a boxed IValue without copying.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <vector>

#include "core/error.h"

namespace op {

template <class T>
class ArrayRef {
 public:
  using value_type = T;
  constexpr ArrayRef() = default;
  constexpr ArrayRef(const T& one) : data_(&one), size_(1) {}  // NOLINT: a single element is a list of one
  constexpr ArrayRef(const T* data, size_t size) : data_(data), size_(size) {}
  template <class A>
  ArrayRef(const std::vector<T, A>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
  // The list must outlive the ArrayRef: fine for call arguments, not for stored members.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
  constexpr ArrayRef(const std::initializer_list<T>& list)  // NOLINT
      : data_(list.begin() == list.end() ? nullptr : list.begin()), size_(list.size()) {}
#pragma GCC diagnostic pop

  constexpr const T* begin() const { return data_; }
  constexpr const T* end() const { return data_ + size_; }
  constexpr const T* data() const { return data_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  const T& operator[](size_t i) const { return data_[i]; }
  const T& at(size_t i) const {
    OP_CHECK(i < size_, "index ", i, " out of range for a list of ", size_);
    return data_[i];
  }
  const T& back() const { return at(size_ - 1); }
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }

 private:
  const T* data_ = nullptr;
  size_t size_ = 0;
};

template <class T>
bool operator==(ArrayRef<T> a, ArrayRef<T> b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i])) return false;
  return true;
}

template <class T>
bool operator!=(ArrayRef<T> a, ArrayRef<T> b) {
  return !(a == b);
}

using IntArrayRef = ArrayRef<int64_t>;

}  // namespace op
