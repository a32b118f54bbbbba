// The XLA backend's pointwise and reduction kernels. Each views its xla operands as cpu
// tensors over the same bytes, runs the in-tree CPU operator (which does the shape, dtype and
// broadcasting work) and returns the cpu result as an xla tensor, without copying. The
// generated out= and in-place wrappers call these functional kernels.
// Per-group declaration headers, not the umbrella: a backend-yaml edit recompiles only what it touches.
#include "backends/XLA/ops/abs_native.h"
#include "backends/XLA/ops/add_native.h"
#include "backends/XLA/ops/div_native.h"
#include "backends/XLA/ops/exp_native.h"
#include "backends/XLA/ops/log_native.h"
#include "backends/XLA/ops/maximum_native.h"
#include "backends/XLA/ops/minimum_native.h"
#include "backends/XLA/ops/mul_native.h"
#include "backends/XLA/ops/neg_native.h"
#include "backends/XLA/ops/sigmoid_native.h"
#include "backends/XLA/ops/sqrt_native.h"
#include "backends/XLA/ops/sub_native.h"
#include "backends/XLA/ops/sum_native.h"
#include "backends/XLA/ops/tanh_native.h"
#include "backends/xla/host_alias.h"
#include "backends/xla/metrics.h"
#include "ops/abs.h"
#include "ops/add.h"
#include "ops/div.h"
#include "ops/exp.h"
#include "ops/log.h"
#include "ops/maximum.h"
#include "ops/minimum.h"
#include "ops/mul.h"
#include "ops/neg.h"
#include "ops/sigmoid.h"
#include "ops/sqrt.h"
#include "ops/sub.h"
#include "ops/sum.h"
#include "ops/tanh.h"

namespace op::xla {

namespace {

// `qualified` names the operator in the metrics ("aten::neg"), `op_name` in errors ("neg").
template <class CpuOp>
Tensor run_unary(const char* qualified, const char* op_name, const Tensor& self, CpuOp cpu_op) {
  record_call(CallKind::Kernel, qualified);
  const Device device = common_device(op_name, {{"self", self}});
  return xla_view(cpu_op(cpu_view(self)), device);
}

template <class CpuOp>
Tensor run_binary(const char* qualified, const char* op_name, const Tensor& self, const Tensor& other, CpuOp cpu_op) {
  record_call(CallKind::Kernel, qualified);
  const Device device = common_device(op_name, {{"self", self}, {"other", other}});
  auto [a, b] = cpu_views(self, other);
  return xla_view(cpu_op(a, b), device);
}

}  // namespace

// ----- pointwise binary -----

Tensor XLANativeFunctions::add(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return run_binary("aten::add.Tensor", "add", self, other,
                    [&](const Tensor& a, const Tensor& b) { return op::add(a, b, alpha); });
}

Tensor XLANativeFunctions::sub(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return run_binary("aten::sub.Tensor", "sub", self, other,
                    [&](const Tensor& a, const Tensor& b) { return op::sub(a, b, alpha); });
}

Tensor XLANativeFunctions::mul(const Tensor& self, const Tensor& other) {
  return run_binary("aten::mul.Tensor", "mul", self, other,
                    [](const Tensor& a, const Tensor& b) { return op::mul(a, b); });
}

Tensor XLANativeFunctions::div(const Tensor& self, const Tensor& other) {
  return run_binary("aten::div.Tensor", "div", self, other,
                    [](const Tensor& a, const Tensor& b) { return op::div(a, b); });
}

Tensor XLANativeFunctions::maximum(const Tensor& self, const Tensor& other) {
  return run_binary("aten::maximum", "maximum", self, other,
                    [](const Tensor& a, const Tensor& b) { return op::maximum(a, b); });
}

Tensor XLANativeFunctions::minimum(const Tensor& self, const Tensor& other) {
  return run_binary("aten::minimum", "minimum", self, other,
                    [](const Tensor& a, const Tensor& b) { return op::minimum(a, b); });
}

// ----- pointwise unary -----

Tensor XLANativeFunctions::neg(const Tensor& self) {
  return run_unary("aten::neg", "neg", self, [](const Tensor& x) { return op::neg(x); });
}

Tensor XLANativeFunctions::abs(const Tensor& self) {
  return run_unary("aten::abs", "abs", self, [](const Tensor& x) { return op::abs(x); });
}

Tensor XLANativeFunctions::exp(const Tensor& self) {
  return run_unary("aten::exp", "exp", self, [](const Tensor& x) { return op::exp(x); });
}

Tensor XLANativeFunctions::log(const Tensor& self) {
  return run_unary("aten::log", "log", self, [](const Tensor& x) { return op::log(x); });
}

Tensor XLANativeFunctions::sqrt(const Tensor& self) {
  return run_unary("aten::sqrt", "sqrt", self, [](const Tensor& x) { return op::sqrt(x); });
}

Tensor XLANativeFunctions::tanh(const Tensor& self) {
  return run_unary("aten::tanh", "tanh", self, [](const Tensor& x) { return op::tanh(x); });
}

Tensor XLANativeFunctions::sigmoid(const Tensor& self) {
  return run_unary("aten::sigmoid", "sigmoid", self, [](const Tensor& x) { return op::sigmoid(x); });
}

// ----- reductions -----

Tensor XLANativeFunctions::sum(const Tensor& self, std::optional<ScalarType> dtype) {
  return run_unary("aten::sum", "sum", self, [&](const Tensor& x) { return op::sum(x, dtype); });
}

Tensor XLANativeFunctions::sum(const Tensor& self, std::optional<IntArrayRef> dim, bool keepdim,
                               std::optional<ScalarType> dtype) {
  return run_unary("aten::sum.dim_IntList", "sum", self,
                   [&](const Tensor& x) { return op::sum(x, dim, keepdim, dtype); });
}

}  // namespace op::xla
