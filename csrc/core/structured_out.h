// What generated structured-kernel wrappers do with the outputs meta() announces: the
// functional wrapper allocates them (create_out), the in-place wrapper checks `self` against
// them (check_inplace), the out= wrapper resizes the user's tensor (resize_out). Wrappers
// generated from a sibling kernel (autogen out= and functional variants) use copy_to_out, copy_to_self
// and clone_for_functional.
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

// out= from a functional kernel's result: resizes out to result's sizes (dtype and device must
// match), copies the values and returns out.
TensorBase& copy_to_out(TensorBase& out, const TensorBase& result);

// In-place from a functional kernel's result (external backends that list only the functional
// variant): checked as check_inplace does, then the values are copied into self.
TensorBase& copy_to_self(TensorBase& self, const TensorBase& result);

// A contiguous copy of self, for a functional variant built from an in-place kernel.
TensorBase clone_for_functional(const TensorBase& self);

}  // namespace op::impl
