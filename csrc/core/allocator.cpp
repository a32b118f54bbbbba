#include "core/allocator.h"

#include <array>
#include <atomic>
#include <cstdlib>

#include <sys/mman.h>

#include "core/error.h"

namespace op {

namespace {

// Large blocks are 2 MiB aligned and marked for transparent huge pages: the first write to a
// large fresh output otherwise faults in one 4 KiB page at a time, which costs more than the
// arithmetic (docs/benchmarks.md, "Figures behind the code"). numpy does the same.
constexpr size_t kHugePage = size_t{2} << 20;

class HostAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    const size_t alignment = nbytes >= kHugePage ? kHugePage : 64;
    // Round up so aligned_alloc's size requirement holds; never allocate zero bytes.
    const size_t rounded = nbytes == 0 ? alignment : (nbytes + alignment - 1) / alignment * alignment;
    void* p = std::aligned_alloc(alignment, rounded);
    OP_CHECK(p != nullptr, "out of host memory allocating ", nbytes, " bytes");
#ifdef MADV_HUGEPAGE
    if (alignment == kHugePage) madvise(p, rounded, MADV_HUGEPAGE);  // a hint: failure is harmless
#endif
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
