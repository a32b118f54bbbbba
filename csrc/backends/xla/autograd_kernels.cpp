// The AutogradXLA kernels. This backend records no graph: the kernel counts the call and runs
// the operator below autograd, where matmul's CompositeImplicitAutograd decomposition calls
// mm, bmm, ... at the XLA key (mm has no XLA kernel, so it falls back to the CPU).
// Per-group declaration headers, not the umbrella: a backend-yaml edit recompiles only what it touches.
#include "backends/XLA/ops/matmul_native.h"
#include "backends/xla/metrics.h"
#include "dispatch/local_dispatch_key_set.h"
#include "ops/matmul.h"

namespace op::xla {

TensorBase XLANativeFunctions::matmul(const TensorBase& self, const TensorBase& other) {
  record_call(CallKind::Autograd, "aten::matmul");
  ExcludeKeyGuard below_autograd(DispatchKey::AutogradXLA);
  return op::matmul(self, other);
}

}  // namespace op::xla
