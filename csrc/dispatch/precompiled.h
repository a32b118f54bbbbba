// The headers nearly every object of the library includes: the method-free tensor, the
// dispatcher, operator handles and registration, and structured kernels' output helpers. Only
// core/ and dispatch/ headers: the layers above (native/, functionalization/) are not every
// object's business (tests/test_include_layers.py).
// Without ccache the build precompiles this header once per set of flags and force-includes it
// (opgen/scons/toolset/precompiled_header.py), which saves parsing the standard library and
// runtime headers in every generated group and hand-written kernel. Nothing includes
// it by name: every source still includes what it uses.
// An include guard, not #pragma once: the header is also compiled as a main file (the .gch).
#ifndef OP_DISPATCH_PRECOMPILED_H
#define OP_DISPATCH_PRECOMPILED_H

#include "core/structured_out.h"
#include "core/tensor.h"
#include "dispatch/dispatcher.h"
#include "dispatch/operator_handle.h"
#include "dispatch/registration.h"

#endif  // OP_DISPATCH_PRECOMPILED_H
