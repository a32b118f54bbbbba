// Moving between the xla device and the CPU operators. xla memory is host memory, so a kernel
// can view its xla operands as cpu tensors over the same bytes, run the in-tree CPU operator
// and hand the cpu result back as an xla tensor, with no copies either way.
#pragma once

#include <initializer_list>
#include <utility>

#include "core/tensor.h"

namespace op::xla {

// A cpu tensor over t's bytes (same sizes, strides and offset); writes through it land in t.
// Tensors that are not on xla (0-d cpu scalars, undefined tensors) are returned as they are.
TensorBase cpu_view(const TensorBase& t);
// cpu views of two operands; when both are views of the same xla memory their cpu views share
// one storage too, so the CPU kernels see the overlap (copy_ reads it all before writing).
std::pair<TensorBase, TensorBase> cpu_views(const TensorBase& a, const TensorBase& b);

// An xla tensor on `device` over a cpu tensor's bytes. The storage wraps memory the cpu
// result owns, so it cannot grow: resizing it (out= of a larger shape) is an error.
TensorBase xla_view(const TensorBase& cpu, Device device);

// A kernel's tensor operand, named for error messages.
struct Operand {
  const char* name;
  const TensorBase& tensor;
};

// The xla device all operands are on; a 0-d cpu tensor (a wrapped number) may join them.
// Throws op::Error naming `op_name` and the operands that disagree.
Device common_device(const char* op_name, std::initializer_list<Operand> operands);

}  // namespace op::xla
