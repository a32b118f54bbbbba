// clone: a new tensor with self's values, laid out in the requested memory format (by default
// self's own channels-last layout, otherwise contiguous), on self's device.
#include "ops/clone_native.h"
#include "ops/copy.h"
#include "ops/empty_like.h"

namespace op {

TensorBase native::clone(const TensorBase& self, std::optional<MemoryFormat> memory_format) {
  TensorBase result = op::empty_like(self, std::nullopt, std::nullopt, std::nullopt, std::nullopt, memory_format);
  ops::copy_::call(result, self, false);
  return result;
}

}  // namespace op
