// The base of structured kernels' meta classes. A structured operator is written once as
// meta() (check inputs, announce each output's sizes and options) and impl() (compute); the
// generated functional, in-place and out= wrappers derive from it and decide what "setting an
// output" means: allocate it, check `self` against it, or resize the user's out= tensor.
#pragma once

#include <cstdint>

#include "core/array_ref.h"
#include "core/tensor.h"
#include "core/tensor_options.h"

namespace op::impl {

struct MetaBase {
  virtual ~MetaBase() = default;
  // Called by meta() once per output. Empty strides mean contiguous.
  virtual void set_output_raw_strided(int64_t output_idx, IntArrayRef sizes, IntArrayRef strides,
                                      TensorOptions options) = 0;
  // The output tensor: undefined before set_output for functional calls; `self` for in-place
  // calls and the user's tensor for out= calls, even before set_output.
  virtual const TensorBase& maybe_get_output(int64_t output_idx) = 0;
  const TensorBase& maybe_get_output() { return maybe_get_output(0); }

  void set_output_contiguous(int64_t output_idx, IntArrayRef sizes, TensorOptions options) {
    set_output_raw_strided(output_idx, sizes, {}, options);
  }
};

}  // namespace op::impl
