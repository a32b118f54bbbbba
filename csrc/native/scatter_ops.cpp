// select_scatter, slice_scatter, as_strided_scatter: a contiguous copy of self with src written
// where the view would be. The view of the copy is taken by the view kernels (which check the
// arguments) and src is copied in through the dispatcher, so one kernel serves every device.
// lift and lift_fresh: below functionalization, a copy and self.
#include "core/error.h"
#include "ops/as_strided_native.h"
#include "ops/as_strided_scatter_native.h"
#include "ops/clone.h"
#include "ops/copy_ops.h"
#include "ops/lift_fresh_native.h"
#include "ops/lift_native.h"
#include "ops/select_native.h"
#include "ops/select_scatter_native.h"
#include "ops/slice_native.h"
#include "ops/slice_scatter_native.h"

namespace op {

namespace {

// Copies src into `slot`, a view of the output; src must have the view's shape.
void write_view(const char* name, TensorBase slot, const TensorBase& src) {
  OP_CHECK(slot.sizes() == src.sizes(), name, ": expected src of shape ", str_list(slot.sizes()), " (the view's), got ",
           str_list(src.sizes()));
  ops::copy_::call(slot, src, false);
}

}  // namespace

TensorBase native::select_scatter(const TensorBase& self, const TensorBase& src, int64_t dim, int64_t index) {
  TensorBase out = op::clone(self, MemoryFormat::Contiguous);
  write_view("select_scatter", native::select(out, dim, index), src);
  return out;
}

TensorBase native::slice_scatter(const TensorBase& self, const TensorBase& src, int64_t dim,
                                 std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  TensorBase out = op::clone(self, MemoryFormat::Contiguous);
  write_view("slice_scatter", native::slice(out, dim, start, end, step), src);
  return out;
}

TensorBase native::as_strided_scatter(const TensorBase& self, const TensorBase& src, IntArrayRef size,
                                      IntArrayRef stride, std::optional<int64_t> storage_offset) {
  TensorBase out = op::clone(self, MemoryFormat::Contiguous);
  write_view("as_strided_scatter", native::as_strided(out, size, stride, storage_offset), src);
  return out;
}

TensorBase native::lift(const TensorBase& self) { return op::clone(self, std::nullopt); }

TensorBase native::lift_fresh(const TensorBase& self) { return self; }

}  // namespace op
