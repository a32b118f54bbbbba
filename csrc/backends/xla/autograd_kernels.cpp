// The AutogradXLA kernels. This backend has no backward formulas of its own: the kernel counts
// the call and runs matmul's CompositeImplicitAutograd decomposition itself, still above
// autograd, so the mm, bmm, reshape, ... it calls pass their own Autograd kernels (recording
// their nodes when an input requires grad) and then reach the XLA key (mm has no XLA kernel, so
// it falls back to the CPU). Redispatching below AutogradXLA instead would record no graph: a
// loss computed through matmul would have no gradient for matmul's inputs.
// Per-group declaration headers, not the umbrella: a backend-yaml edit recompiles only what it touches.
#include "backends/XLA/ops/matmul_native.h"
#include "backends/xla/metrics.h"
#include "ops/matmul_native.h"

namespace op::xla {

TensorBase XLANativeFunctions::matmul(const TensorBase& self, const TensorBase& other) {
  record_call(CallKind::Autograd, "aten::matmul");
  return op::native::matmul(self, other);  // the composite, called directly: no redispatch to this kernel
}

}  // namespace op::xla
