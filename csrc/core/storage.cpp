#include "core/storage.h"

#include "core/error.h"

namespace op {

Storage Storage::allocate(size_t nbytes, Device device) {
  if (device.is_meta()) return Storage(std::make_shared<StorageImpl>(nbytes, device, DataPtr(nullptr, [](void*) {})));
  Allocator* allocator = allocator_for(device.type());
  OP_CHECK(allocator != nullptr, "no allocator for device '", device.str(),
           "': this build has no support for it (was it built with --cuda?)");
  return Storage(std::make_shared<StorageImpl>(nbytes, device, allocator->allocate(nbytes)));
}

Storage Storage::from_external(void* data, size_t nbytes, Device device, std::function<void(void*)> release) {
  OP_CHECK(!device.is_meta(), "meta storage cannot wrap external memory");
  return Storage(std::make_shared<StorageImpl>(nbytes, device, DataPtr(data, std::move(release))));
}

Device Storage::device() const {
  OP_CHECK(impl_ != nullptr, "undefined storage has no device");
  return impl_->device();
}

}  // namespace op
