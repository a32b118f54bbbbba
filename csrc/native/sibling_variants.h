// Wrappers generated from a sibling kernel (autogen out= and functional variants, and an
// external backend's out= and in-place variants of a functional kernel): the sibling's result
// copied into out or self, or self cloned for a functional variant built from an in-place kernel.
// They call copy_ and clone through the dispatcher, so they work on every device; that is why
// they sit above the generated operator handles, not in core/structured_out.h.
#pragma once

#include "core/tensor.h"

namespace op::impl {

// out= from a functional kernel's result: resizes out to result's sizes (dtype and device must
// match), copies the values and returns out.
TensorBase& copy_to_out(TensorBase& out, const TensorBase& result);
// The same for an out= tensor passed as `const TensorBase&` (out= variants of PyTorch's
// inplace_view operators, resize.out): the handle is const, the tensor it names is written.
const TensorBase& copy_to_out(const TensorBase& out, const TensorBase& result);

// In-place from a functional kernel's result (external backends that list only the functional
// variant): checked as check_inplace does, then the values are copied into self.
TensorBase& copy_to_self(TensorBase& self, const TensorBase& result);

// A contiguous copy of self, for a functional variant built from an in-place kernel.
TensorBase clone_for_functional(const TensorBase& self);

}  // namespace op::impl
