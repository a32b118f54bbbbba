#include "core/allocator.h"

#include <array>
#include <atomic>
#include <cstdlib>

#include "core/error.h"

namespace op {

namespace {

class HostAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    // Round up so aligned_alloc's size requirement holds; never allocate zero bytes.
    size_t rounded = ((nbytes + 63) / 64) * 64;
    void* p = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
    OP_CHECK(p != nullptr, "out of host memory allocating ", nbytes, " bytes");
    return DataPtr(p, [](void* q) { std::free(q); });
  }
};

// Unset slots mean "host memory" for external device types (they are registered at runtime,
// after this table is built); CUDA and Meta are explicitly without an allocator.
std::array<std::atomic<Allocator*>, kMaxDeviceTypes>& table() {
  static std::array<std::atomic<Allocator*>, kMaxDeviceTypes> t{};
  return t;
}

}  // namespace

Allocator* cpu_allocator() {
  static HostAllocator* host = new HostAllocator();  // leaked: outlives static tensors
  return host;
}

Allocator* allocator_for(DeviceType type) {
  Allocator* a = table()[static_cast<int>(type)].load();
  if (a != nullptr) return a;
  if (type == DeviceType::CUDA || type == DeviceType::Meta) return nullptr;
  return cpu_allocator();
}

Allocator* set_allocator(DeviceType type, Allocator* allocator) {
  int i = static_cast<int>(type);
  OP_CHECK(i >= 0 && i < kMaxDeviceTypes, "invalid device type id ", i);
  OP_CHECK(type != DeviceType::Meta, "meta tensors have no data and take no allocator");
  return table()[i].exchange(allocator);
}

}  // namespace op
