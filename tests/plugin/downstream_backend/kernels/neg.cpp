// The backend's one kernel: neg, run on the CPU below the XLA key and scaled by 10 so a test
// can tell it ran. opgen derives neg_ and neg.out from it.
#include "backends/XLA/ops/neg_native.h"
#include "core/scalar.h"
#include "dispatch/local_dispatch_key_set.h"
#include "ops/mul.h"
#include "ops/neg.h"

namespace op::mybackend {

TensorBase XLANativeFunctions::neg(const TensorBase& self) {
  ExcludeKeyGuard below(DispatchKey::XLA);
  return op::mul(op::neg(self), Scalar(10.0));
}

}  // namespace op::mybackend
