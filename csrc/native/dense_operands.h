// Operands for stubs that want plain row-major memory (the log_softmax and loss loops): inputs
// made contiguous (and converted) by the device's copy loop, and an output that is computed
// into a contiguous buffer when the tensor to fill is strided or shares memory with an input.
// Works on every device with a copy loop; never called for meta tensors (impl() is not run).
#pragma once

#include <initializer_list>

#include "core/scalar_type.h"
#include "core/tensor.h"
#include "core/tensor_options.h"
#include "native/stubs.h"

namespace op::native {

// t with `dtype`, contiguous: t itself when it already is, otherwise a copy.
inline TensorBase dense(const TensorBase& t, ScalarType dtype) {
  if (t.dtype() == dtype && t.is_contiguous()) return t;
  TensorBase copy = TensorBase::empty(t.sizes(), TensorOptions(dtype).with_device(t.device()));
  copy_stub(t.device().type(), copy, t);
  return copy;
}

inline TensorBase dense(const TensorBase& t) { return dense(t, t.dtype()); }

// Calls compute(dst) with dst contiguous, shaped and typed like out and apart from every
// input, and leaves the values in out: dst is out itself when it can be.
template <class Compute>
void compute_into(const TensorBase& out, std::initializer_list<TensorBase> inputs, Compute&& compute) {
  bool direct = out.is_contiguous();
  for (const TensorBase& input : inputs) direct = direct && !(input.defined() && input.is_alias_of(out));
  if (direct) {
    compute(out);
    return;
  }
  const TensorBase buffer = TensorBase::empty(out.sizes(), TensorOptions(out.dtype()).with_device(out.device()));
  compute(buffer);
  copy_stub(out.device().type(), out, buffer);
}

}  // namespace op::native
