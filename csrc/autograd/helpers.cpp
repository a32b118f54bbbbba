#include "autograd/helpers.h"

#include <vector>

#include "core/error.h"
#include "ops/reshape.h"
#include "ops/sum.h"

namespace op::autograd {

bool is_expandable_to(IntArrayRef shape, IntArrayRef desired) {
  if (shape.size() > desired.size()) return false;
  size_t offset = desired.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] != desired[offset + i] && shape[i] != 1) return false;
  return true;
}

TensorBase sum_to(const TensorBase& t, IntArrayRef shape) {
  IntArrayRef sizes = t.sizes();
  if (sizes == shape) return t;
  OP_CHECK(is_expandable_to(shape, sizes), "sum_to: size ", str_list(shape), " is not expandable to size ",
           str_list(sizes));
  size_t leading = sizes.size() - shape.size();
  std::vector<int64_t> dims;
  for (size_t d = 0; d < leading; ++d) dims.push_back(static_cast<int64_t>(d));
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] == 1 && sizes[leading + i] != 1) dims.push_back(static_cast<int64_t>(leading + i));
  TensorBase reduced = dims.empty() ? t : op::sum(t, std::optional<IntArrayRef>(dims), /*keepdim=*/true);
  return leading > 0 ? op::reshape(reduced, shape) : reduced;
}

}  // namespace op::autograd
