// Strides of new tensors and which MemoryFormat a tensor's strides follow: checks and choices
// shared by the factories (empty_strided, empty_like) and the copies (contiguous, clone,
// _to_copy, to).
#pragma once

#include <optional>

#include "core/array_ref.h"
#include "core/layout.h"
#include "core/tensor.h"

namespace op::native {

// empty_strided's arguments: as many strides as sizes, none of either negative. `what` names
// the operator in the error.
void check_sizes_and_strides(IntArrayRef size, IntArrayRef stride, const char* what);

// What every backend's empty.memory_format / empty_strided does once it has checked the device:
// uninitialised memory from `where`'s allocator, float32 unless a dtype is given.
TensorBase allocate_empty(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<MemoryFormat> memory_format,
                      Device where);
TensorBase allocate_empty_strided(IntArrayRef size, IntArrayRef stride, std::optional<ScalarType> dtype, Device where);

// Whether t's strides are those `format` gives its sizes (size-1 dimensions match any
// stride). Preserve is satisfied by any tensor; a channels-last format by the right rank only.
bool is_contiguous_as(const TensorBase& t, MemoryFormat format);

// The concrete format for a result "like" t: an explicit contiguous or channels-last format
// as given; None or preserve_format keep t's channels-last layout when t has one and become
// contiguous otherwise.
MemoryFormat resolve_memory_format(const TensorBase& t, std::optional<MemoryFormat> format);

}  // namespace op::native
