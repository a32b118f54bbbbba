// The memory behind tensors. A Storage is a shared handle: every view of a tensor holds the
// same StorageImpl, so writes through one view are seen by all and the memory lives until the
// last view is gone.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "core/allocator.h"
#include "core/device.h"

namespace op {

class StorageImpl {
 public:
  StorageImpl(size_t nbytes, Device device, DataPtr data, bool resizable)
      : nbytes_(nbytes), device_(device), data_(std::move(data)), resizable_(resizable) {}
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  void* data() const { return data_.get(); }  // nullptr for meta storage
  bool resizable() const { return resizable_; }  // false for memory owned elsewhere
  // The version counter every view of this memory shares: in-place operators bump it, and
  // autograd's saved variables compare it at backward (a tensor changed since it was saved).
  uint32_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }
  // Swaps in new memory (resizing); the old memory is released here.
  void replace(DataPtr data, size_t nbytes) {
    data_ = std::move(data);
    nbytes_ = nbytes;
  }

 private:
  size_t nbytes_;
  Device device_;
  DataPtr data_;
  bool resizable_;
  std::atomic<uint32_t> version_{0};
};

class Storage {
 public:
  Storage() = default;
  // Allocates nbytes with the device's allocator; meta storage records the size only.
  static Storage allocate(size_t nbytes, Device device);
  // Wraps memory owned elsewhere (e.g. a numpy array); `release` runs when the last view dies.
  static Storage from_external(void* data, size_t nbytes, Device device, std::function<void(void*)> release);

  bool defined() const { return impl_ != nullptr; }
  size_t nbytes() const { return impl_ ? impl_->nbytes() : 0; }
  Device device() const;
  void* data() const { return impl_ ? impl_->data() : nullptr; }
  bool has_data() const { return data() != nullptr; }
  long use_count() const { return impl_.use_count(); }
  bool is_alias_of(const Storage& other) const { return impl_ != nullptr && impl_ == other.impl_; }
  // The shared version counter (StorageImpl::version); 0 and a no-op bump without storage.
  uint32_t version() const { return impl_ ? impl_->version() : 0; }
  void bump_version() const {
    if (impl_) impl_->bump_version();
  }
  // Reallocates to nbytes when larger, keeping the old bytes; every tensor over this storage
  // sees the new memory. Throws for external memory (it belongs to someone else).
  void grow(size_t nbytes) const;

 private:
  explicit Storage(std::shared_ptr<StorageImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<StorageImpl> impl_;
};

}  // namespace op
