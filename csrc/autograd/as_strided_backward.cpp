// opgen: backward only (opgen/selection/sources.py: an inference-only selection keeps no operator it calls)
// as_strided's gradient (helpers.h): the view's gradient is scattered into a flat buffer that
// stands for the storage, then read back with the input's geometry. Only operators: the scatter
// is as_strided_scatter of (what the buffer holds there + grad), which is exact where the view
// does not overlap itself; an overlapping view is first reduced over its stride-0 dims and then,
// where it still may overlap, cut along one dim into views that are scattered one after another.
#include <algorithm>
#include <vector>

#include "autograd/helpers.h"
#include "core/error.h"
#include "core/strided_loop.h"
#include "ops/add.h"
#include "ops/as_strided.h"
#include "ops/as_strided_scatter.h"
#include "ops/clamp.h"
#include "ops/div.h"
#include "ops/ones.h"
#include "ops/reshape.h"
#include "ops/select.h"
#include "ops/sum.h"
#include "ops/zeros.h"

namespace op::autograd::helpers {

namespace {

// The last storage element a non-empty geometry addresses.
int64_t last_offset(IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  for (size_t d = 0; d < sizes.size(); ++d) offset += (sizes[d] - 1) * strides[d];
  return offset;
}

void check_geometry(const char* what, IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  OP_CHECK(sizes.size() == strides.size(), "as_strided_backward: the ", what, " has ", sizes.size(), " sizes but ",
           strides.size(), " strides");
  OP_CHECK(offset >= 0, "as_strided_backward: the ", what, " has a negative storage offset ", offset);
  for (size_t d = 0; d < sizes.size(); ++d)
    OP_CHECK(sizes[d] >= 0 && strides[d] >= 0, "as_strided_backward: the ", what, " has size ", str_list(sizes),
             " and stride ", str_list(strides), " (negative sizes and strides are not supported)");
}

// Dims of size > 1 ordered by stride, ascending. Returns the length of the shortest prefix of
// them that may overlap (each stride must pass the last element the smaller dims reach; the
// test is PyTorch's and may see overlap in some interleaved layouts that have none, which only
// costs a slower scatter); 0 when the geometry cannot overlap.
size_t overlapping_prefix(IntArrayRef sizes, IntArrayRef strides, std::vector<size_t>& order) {
  order.clear();
  for (size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] > 1) order.push_back(d);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return strides[a] < strides[b]; });
  int64_t reach = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    if (strides[order[i]] <= reach) return i + 1;
    reach += strides[order[i]] * (sizes[order[i]] - 1);
  }
  return 0;
}

// `storage` (1-d, contiguous, offset 0) plus src added at the positions (sizes, strides, offset)
// address, summed where several positions coincide.
TensorBase scatter_add(TensorBase storage, TensorBase src, std::vector<int64_t> sizes, std::vector<int64_t> strides,
                       int64_t offset) {
  // A stride-0 dim puts all its elements on the same positions: sum them first.
  std::vector<int64_t> broadcast;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] > 1 && strides[d] == 0) broadcast.push_back(static_cast<int64_t>(d));
  if (!broadcast.empty()) src = op::sum(src, std::optional<IntArrayRef>(broadcast), /*keepdim=*/true);
  // Size-1 (and summed) dims address nothing new: drop them.
  std::vector<int64_t> kept_sizes, kept_strides;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1 || strides[d] == 0) continue;
    kept_sizes.push_back(sizes[d]);
    kept_strides.push_back(strides[d]);
  }
  if (kept_sizes.size() != sizes.size()) src = op::reshape(src, kept_sizes);

  std::vector<size_t> order;
  const size_t prefix = overlapping_prefix(kept_sizes, kept_strides, order);
  if (prefix == 0) {
    TensorBase region = op::as_strided(storage, kept_sizes, kept_strides, offset);
    return op::as_strided_scatter(storage, op::add(region, src), kept_sizes, kept_strides, offset);
  }
  // Cut along the smallest of the dims that may overlap and scatter the pieces in turn.
  const size_t cut = *std::min_element(order.begin(), order.begin() + prefix,
                                       [&](size_t a, size_t b) { return kept_sizes[a] < kept_sizes[b]; });
  std::vector<int64_t> rest_sizes, rest_strides;
  for (size_t d = 0; d < kept_sizes.size(); ++d) {
    if (d == cut) continue;
    rest_sizes.push_back(kept_sizes[d]);
    rest_strides.push_back(kept_strides[d]);
  }
  for (int64_t k = 0; k < kept_sizes[cut]; ++k)
    storage = scatter_add(storage, op::select(src, static_cast<int64_t>(cut), k), rest_sizes, rest_strides,
                          offset + k * kept_strides[cut]);
  return storage;
}

}  // namespace

TensorBase as_strided_backward(const TensorBase& grad, const TensorGeometry& input, IntArrayRef size,
                               IntArrayRef stride, std::optional<int64_t> storage_offset) {
  const int64_t view_offset = storage_offset.value_or(input.storage_offset);
  check_geometry("input", input.sizes, input.strides, input.storage_offset);
  check_geometry("view", size, stride, view_offset);
  OP_CHECK(grad.sizes() == size, "as_strided_backward: grad has shape ", str_list(grad.sizes()),
           " but the view's size is ", str_list(size));
  if (input.numel() == 0) return op::zeros(input.sizes, grad.dtype(), std::nullopt, grad.device());

  // The buffer spans the storage elements the input and the view address, from `base` on.
  int64_t base = input.storage_offset;
  int64_t end = last_offset(input.sizes, input.strides, input.storage_offset) + 1;
  const bool view_empty = numel_of(size) == 0;
  if (!view_empty) {
    base = std::min(base, view_offset);
    end = std::max(end, last_offset(size, stride, view_offset) + 1);
  }
  const std::vector<int64_t> extent{end - base};
  TensorBase storage = op::zeros(extent, grad.dtype(), std::nullopt, grad.device());
  if (!view_empty) storage = scatter_add(storage, grad, size.vec(), stride.vec(), view_offset - base);

  std::vector<size_t> order;
  if (overlapping_prefix(input.sizes, input.strides, order) != 0) {
    // Input elements that share a storage element share its gradient equally (PyTorch's rule).
    TensorBase count = scatter_add(op::zeros(extent, grad.dtype(), std::nullopt, grad.device()),
                                   op::ones(input.sizes, grad.dtype(), std::nullopt, grad.device()), input.sizes,
                                   input.strides, input.storage_offset - base);
    storage = op::div(storage, op::clamp(count, Scalar(1), std::nullopt));
  }
  return op::as_strided(storage, input.sizes, input.strides, input.storage_offset - base);
}

}  // namespace op::autograd::helpers
