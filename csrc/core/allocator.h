// Memory for tensor storage, one allocator per device type. CPU and external devices default
// to host memory (external backends here are emulated on the host); Meta tensors never
// allocate; CUDA has no allocator unless a CUDA build (or a test) installs one.
#pragma once

#include <cstddef>
#include <cstring>
#include <functional>
#include <memory>

#include "core/device.h"

namespace op {

using DataPtr = std::unique_ptr<void, std::function<void(void*)>>;

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual DataPtr allocate(size_t nbytes) = 0;
  // Copies between two blocks of this allocator's memory (storage resizing keeps old bytes);
  // device allocators override it with their own copy.
  virtual void copy_data(void* dst, const void* src, size_t nbytes) const { std::memcpy(dst, src, nbytes); }
};

// 64-byte aligned host memory.
Allocator* cpu_allocator();

// The allocator for a device type, or nullptr (Meta, or CUDA without a CUDA build).
Allocator* allocator_for(DeviceType type);
// Replaces the allocator of a device type and returns the previous one.
Allocator* set_allocator(DeviceType type, Allocator* allocator);

}  // namespace op
