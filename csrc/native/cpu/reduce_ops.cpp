// sum over dimensions: structured reduction (meta + CPU impl).
#include <type_traits>
#include <vector>

#include "core/error.h"
#include "core/host_ops.h"
#include "core/scalar_type.h"
#include "core/strided_loop.h"
#include "ops/sum_native.h"

namespace op {

namespace {

// Which of self's dimensions are summed: the listed ones, or all of them when the list is
// absent or empty. A 0-d tensor accepts dim 0 / -1.
std::vector<bool> reduced_dims(const Tensor& self, std::optional<IntArrayRef> dim, const char* what) {
  const int64_t n = self.dim();
  std::vector<bool> reduced(static_cast<size_t>(n), !dim || dim->empty());
  if (!dim) return reduced;
  const int64_t range = n == 0 ? 1 : n;
  std::vector<bool> seen(static_cast<size_t>(range), false);
  for (int64_t d : *dim) {
    OP_CHECK(d >= -range && d < range, what, ": dimension ", d, " out of range for a ", n, "-d tensor");
    const int64_t w = d < 0 ? d + range : d;
    OP_CHECK(!seen[w], what, ": dimension ", w, " appears more than once in ", str_list(*dim));
    seen[w] = true;
    if (n > 0) reduced[w] = true;
  }
  return reduced;
}

}  // namespace

void meta::structured_sum_dim_IntList::meta(const Tensor& self, std::optional<IntArrayRef> dim, bool keepdim,
                                            std::optional<ScalarType> dtype) {
  OP_CHECK(self.defined(), "sum: self is undefined");
  const std::vector<bool> reduced = reduced_dims(self, dim, "sum");
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (!reduced[d])
      shape.push_back(self.size(d));
    else if (keepdim)
      shape.push_back(1);
  }
  // Like torch.sum: an explicit dtype wins, then an out= tensor's dtype; integers and bools
  // sum to int64 so they do not overflow their own type.
  const Tensor& out = maybe_get_output();
  const ScalarType result = dtype                 ? *dtype
                            : out.defined()       ? out.dtype()
                            : is_integral(self.dtype(), true) ? ScalarType::Int64
                                                              : self.dtype();
  set_output_contiguous(0, shape, TensorOptions(result).with_device(self.device()));
}

void native::structured_sum_out::impl(const Tensor& self, std::optional<IntArrayRef> dim, bool keepdim,
                                      std::optional<ScalarType> dtype, const Tensor& out) {
  self.check_host_data("sum");
  out.check_host_data("sum");
  const std::vector<bool> reduced = reduced_dims(self, dim, "sum");
  // Elements convert to the result dtype first, then add up in a wide accumulator; every
  // input element lands in the accumulator slot of its kept coordinates (stride 0 along the
  // summed dimensions). All of self is read before out is written, so they may overlap.
  const Tensor input = host::to(self, out.dtype());
  std::vector<int64_t> kept_sizes(reduced.size());
  for (size_t d = 0; d < reduced.size(); ++d) kept_sizes[d] = reduced[d] ? 1 : self.sizes()[d];
  std::vector<int64_t> slot_strides = contiguous_strides(kept_sizes);
  for (size_t d = 0; d < reduced.size(); ++d)
    if (reduced[d]) slot_strides[d] = 0;
  OP_DISPATCH_ALL_TYPES(out.dtype(), "sum", {
    using acc_t = std::conditional_t<std::is_floating_point_v<scalar_t>, double, int64_t>;
    std::vector<acc_t> acc(static_cast<size_t>(numel_of(kept_sizes)), acc_t(0));
    const scalar_t* in = static_cast<const scalar_t*>(input.storage().data());
    for_each_offsets<2>(input.sizes(), {input.strides(), IntArrayRef(slot_strides)},
                        {input.storage_offset(), int64_t{0}},
                        [&](const std::array<int64_t, 2>& o) { acc[o[1]] += static_cast<acc_t>(in[o[0]]); });
    scalar_t* dst = static_cast<scalar_t*>(out.storage().data());
    size_t i = 0;  // out's elements in row-major order are the accumulator slots in order
    for_each_offset(out.sizes(), out.strides(), out.storage_offset(),
                    [&](int64_t offset) { dst[offset] = static_cast<scalar_t>(acc[i++]); });
  });
}

}  // namespace op
