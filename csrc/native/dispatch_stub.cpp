// The weak null loop pointer of every (stub, device) (native/dispatch_stub.h): a device's loop
// file defines the pointer strongly and replaces it; a device without loops in this build (CUDA
// when built without it) keeps the null, and its stub raises saying so.
#define OP_STUB_NULL_LOOPS
#include "native/stubs.h"
