// clone: a new tensor with self's values, laid out in the requested memory format (by default
// self's own channels-last layout, otherwise contiguous), on self's device.
#include "ops/clone_native.h"
#include "ops/copy.h"
#include "ops/empty_like.h"

namespace op {

Tensor native::clone(const Tensor& self, std::optional<MemoryFormat> memory_format) {
  Tensor result = op::empty_like(self, std::nullopt, std::nullopt, std::nullopt, std::nullopt, memory_format);
  result.copy_(self);
  return result;
}

}  // namespace op
