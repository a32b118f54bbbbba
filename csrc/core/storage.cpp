#include "core/storage.h"

#include "core/error.h"

namespace op {

namespace {

Allocator* allocator_or_throw(Device device) {
  Allocator* allocator = allocator_for(device.type());
  OP_CHECK(allocator != nullptr, "no allocator for device '", device.str(),
           "': this build has no support for it (was it built with --cuda?)");
  return allocator;
}

}  // namespace

Storage Storage::allocate(size_t nbytes, Device device) {
  if (device.is_meta())
    return Storage(std::make_shared<StorageImpl>(nbytes, device, DataPtr(nullptr, [](void*) {}), true));
  return Storage(std::make_shared<StorageImpl>(nbytes, device, allocator_or_throw(device)->allocate(nbytes), true));
}

Storage Storage::from_external(void* data, size_t nbytes, Device device, std::function<void(void*)> release) {
  OP_CHECK(!device.is_meta(), "meta storage cannot wrap external memory");
  return Storage(std::make_shared<StorageImpl>(nbytes, device, DataPtr(data, std::move(release)), false));
}

void Storage::grow(size_t nbytes) const {
  OP_CHECK(impl_ != nullptr, "cannot resize an undefined storage");
  if (nbytes <= impl_->nbytes()) return;
  OP_CHECK(impl_->resizable(), "cannot resize a tensor whose storage wraps external memory (e.g. a numpy array) from ",
           impl_->nbytes(), " to ", nbytes, " bytes; use a tensor the runtime allocated");
  const Device device = impl_->device();
  if (device.is_meta()) {
    impl_->replace(DataPtr(nullptr, [](void*) {}), nbytes);
    return;
  }
  Allocator* allocator = allocator_or_throw(device);
  DataPtr data = allocator->allocate(nbytes);
  if (impl_->nbytes() > 0) allocator->copy_data(data.get(), impl_->data(), impl_->nbytes());
  impl_->replace(std::move(data), nbytes);
}

Device Storage::device() const {
  OP_CHECK(impl_ != nullptr, "undefined storage has no device");
  return impl_->device();
}

}  // namespace op
