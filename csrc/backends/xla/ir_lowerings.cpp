// What the XLA backend writes for its full_codegen operators (yaml/xla_native_functions.yaml),
// as backends/XLA/XLAIrFunctions.h declares it: each IR node's lowering, run on cpu views of
// its operands (the in-tree CPU operators do the work), and the shape function of each operator
// that is neither structured nor a view_copy (relu); the others' shapes come from meta tensors.
#include "backends/XLA/XLAIrFunctions.h"
#include "ops/abs.h"
#include "ops/clamp.h"
#include "ops/relu.h"
#include "ops/sigmoid.h"

namespace op::xla {

// ----- lowerings -----

std::vector<TensorBase> lower_abs(const TensorBase& self) { return {op::abs(self)}; }

std::vector<TensorBase> lower_sigmoid(const TensorBase& self) { return {op::sigmoid(self)}; }

std::vector<TensorBase> lower_relu(const TensorBase& self) { return {op::relu(self)}; }

// min and max arrive as the values of their constant operands, not as node attributes.
std::vector<TensorBase> lower_clamp(const TensorBase& self, const std::optional<Scalar>& min,
                                    const std::optional<Scalar>& max) {
  return {op::clamp(self, min, max)};
}

// ----- shape functions -----

std::vector<lazy::Shape> compute_shape_relu(const TensorBase& self) { return {lazy::Shape{self.dtype(), self.sizes().vec()}}; }

}  // namespace op::xla
