// What generated structured-kernel wrappers do with the outputs meta() announces: the
// functional wrapper allocates them (create_out), the in-place wrapper checks `self` against
// them (check_inplace), the out= wrapper resizes the user's tensor (resize_out). Wrappers
// generated from a sibling kernel (autogen out= and functional variants) call operators, so their
// helpers sit a layer up, in native/sibling_variants.h.
#pragma once

#include "core/array_ref.h"
#include "core/tensor.h"
#include "core/tensor_options.h"

namespace op::impl {

// A new tensor; empty strides mean contiguous. Meta options give a meta tensor (no data).
TensorBase create_out(IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options);

// An in-place result must have self's shape, a dtype that casts into self's without leaving
// its category (float into int is an error), and self's device.
void check_inplace(const TensorBase& self, IntArrayRef sizes, const TensorOptions& options);

// out must have the options' dtype and device. When its sizes differ it is resized in place
// (every handle to it sees the change); empty strides mean contiguous.
void resize_out(const TensorBase& out, IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options);

}  // namespace op::impl
