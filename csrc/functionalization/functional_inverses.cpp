// Inverses of the view operators for functionalization: given a view's base and a new value of
// the view, the new value of the base. The generated Functionalize kernels
// (ops/<view>_Functionalize.cpp) declare the one they call and store it in the view step. Every
// call goes through the dispatcher below the Functionalize key and is recorded in the trace.
#include <vector>

#include "core/error.h"
#include "functionalization/functionalization.h"
#include "ops/as_strided_scatter_ops.h"
#include "ops/clone_ops.h"
#include "ops/permute_copy_ops.h"
#include "ops/select_scatter_ops.h"
#include "ops/slice_scatter_ops.h"
#include "ops/t_copy_ops.h"
#include "ops/transpose_copy_ops.h"
#include "ops/view_copy_ops.h"

namespace op::functionalization::inverse {

namespace {

// Views that only regroup the elements in order (view, squeeze, unsqueeze): the new value,
// contiguous, viewed with the base's sizes.
TensorBase regroup(const TensorBase& base, const TensorBase& mutated_view) {
  TensorBase value = mutated_view;
  if (!value.is_contiguous()) value = call<ops::clone>(value, MemoryFormat::Contiguous);
  return call<ops::view_copy>(value, base.sizes());
}

}  // namespace

TensorBase view(const TensorBase& base, const TensorBase& mutated_view, IntArrayRef /*size*/) {
  return regroup(base, mutated_view);
}

TensorBase squeeze(const TensorBase& base, const TensorBase& mutated_view) { return regroup(base, mutated_view); }

TensorBase squeeze_dim(const TensorBase& base, const TensorBase& mutated_view, int64_t /*dim*/) {
  return regroup(base, mutated_view);
}

TensorBase squeeze_dims(const TensorBase& base, const TensorBase& mutated_view, IntArrayRef /*dim*/) {
  return regroup(base, mutated_view);
}

TensorBase unsqueeze(const TensorBase& base, const TensorBase& mutated_view, int64_t /*dim*/) {
  return regroup(base, mutated_view);
}

TensorBase transpose_int(const TensorBase& /*base*/, const TensorBase& mutated_view, int64_t dim0, int64_t dim1) {
  return call<ops::transpose_copy_int>(mutated_view, dim0, dim1);
}

TensorBase t(const TensorBase& /*base*/, const TensorBase& mutated_view) { return call<ops::t_copy>(mutated_view); }

TensorBase permute(const TensorBase& /*base*/, const TensorBase& mutated_view, IntArrayRef dims) {
  const int64_t n = static_cast<int64_t>(dims.size());
  std::vector<int64_t> inverse(dims.size());
  for (int64_t i = 0; i < n; ++i) inverse[static_cast<size_t>(dims[i] < 0 ? dims[i] + n : dims[i])] = i;
  return call<ops::permute_copy>(mutated_view, inverse);
}

TensorBase expand(const TensorBase& /*base*/, const TensorBase& /*mutated_view*/, IntArrayRef /*size*/, bool /*implicit*/) {
  fail("expand: cannot write through an expanded view under functionalization (several of its elements are one "
       "element of the base); write to a clone of the view instead");
}

TensorBase select_int(const TensorBase& base, const TensorBase& mutated_view, int64_t dim, int64_t index) {
  return call<ops::select_scatter>(base, mutated_view, dim, index);
}

TensorBase slice_Tensor(const TensorBase& base, const TensorBase& mutated_view, int64_t dim,
                        std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  return call<ops::slice_scatter>(base, mutated_view, dim, start, end, step);
}

TensorBase as_strided(const TensorBase& base, const TensorBase& mutated_view, IntArrayRef size, IntArrayRef stride,
                      std::optional<int64_t> storage_offset) {
  return call<ops::as_strided_scatter>(base, mutated_view, size, stride, storage_offset);
}

}  // namespace op::functionalization::inverse
