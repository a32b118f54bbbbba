// The XLA backend's pointwise and reduction kernels (its full_codegen operators are IR nodes:
// ir_lowerings.cpp). Each views its xla operands as cpu
// tensors over the same bytes, runs the in-tree CPU operator (which does the shape, dtype and
// broadcasting work) and returns the cpu result as an xla tensor, without copying. The
// generated out= and in-place wrappers call these functional kernels.
// Per-group declaration headers, not the umbrella: a backend-yaml edit recompiles only what it touches.
#include "backends/XLA/ops/add_native.h"
#include "backends/XLA/ops/div_native.h"
#include "backends/XLA/ops/exp_native.h"
#include "backends/XLA/ops/log_native.h"
#include "backends/XLA/ops/maximum_native.h"
#include "backends/XLA/ops/minimum_native.h"
#include "backends/XLA/ops/mul_native.h"
#include "backends/XLA/ops/neg_native.h"
#include "backends/XLA/ops/sqrt_native.h"
#include "backends/XLA/ops/sub_native.h"
#include "backends/XLA/ops/sum_native.h"
#include "backends/XLA/ops/tanh_native.h"
#include "backends/xla/host_alias.h"
#include "backends/xla/metrics.h"
#include "ops/add.h"
#include "ops/div.h"
#include "ops/exp.h"
#include "ops/log.h"
#include "ops/maximum.h"
#include "ops/minimum.h"
#include "ops/mul.h"
#include "ops/neg.h"
#include "ops/sqrt.h"
#include "ops/sub.h"
#include "ops/sum.h"
#include "ops/tanh.h"

namespace op::xla {

namespace {

// `qualified` names the operator in the metrics ("aten::neg"), `op_name` in errors ("neg").
template <class CpuOp>
TensorBase run_unary(const char* qualified, const char* op_name, const TensorBase& self, CpuOp cpu_op) {
  record_call(CallKind::Kernel, qualified);
  const Device device = common_device(op_name, {{"self", self}});
  return xla_view(cpu_op(cpu_view(self)), device);
}

template <class CpuOp>
TensorBase run_binary(const char* qualified, const char* op_name, const TensorBase& self, const TensorBase& other, CpuOp cpu_op) {
  record_call(CallKind::Kernel, qualified);
  const Device device = common_device(op_name, {{"self", self}, {"other", other}});
  auto [a, b] = cpu_views(self, other);
  return xla_view(cpu_op(a, b), device);
}

}  // namespace

// ----- pointwise binary -----

TensorBase XLANativeFunctions::add(const TensorBase& self, const TensorBase& other, const Scalar& alpha) {
  return run_binary("aten::add.Tensor", "add", self, other,
                    [&](const TensorBase& a, const TensorBase& b) { return op::add(a, b, alpha); });
}

TensorBase XLANativeFunctions::sub(const TensorBase& self, const TensorBase& other, const Scalar& alpha) {
  return run_binary("aten::sub.Tensor", "sub", self, other,
                    [&](const TensorBase& a, const TensorBase& b) { return op::sub(a, b, alpha); });
}

TensorBase XLANativeFunctions::mul(const TensorBase& self, const TensorBase& other) {
  return run_binary("aten::mul.Tensor", "mul", self, other,
                    [](const TensorBase& a, const TensorBase& b) { return op::mul(a, b); });
}

TensorBase XLANativeFunctions::div(const TensorBase& self, const TensorBase& other) {
  return run_binary("aten::div.Tensor", "div", self, other,
                    [](const TensorBase& a, const TensorBase& b) { return op::div(a, b); });
}

TensorBase XLANativeFunctions::maximum(const TensorBase& self, const TensorBase& other) {
  return run_binary("aten::maximum", "maximum", self, other,
                    [](const TensorBase& a, const TensorBase& b) { return op::maximum(a, b); });
}

TensorBase XLANativeFunctions::minimum(const TensorBase& self, const TensorBase& other) {
  return run_binary("aten::minimum", "minimum", self, other,
                    [](const TensorBase& a, const TensorBase& b) { return op::minimum(a, b); });
}

// ----- pointwise unary -----

TensorBase XLANativeFunctions::neg(const TensorBase& self) {
  return run_unary("aten::neg", "neg", self, [](const TensorBase& x) { return op::neg(x); });
}

TensorBase XLANativeFunctions::exp(const TensorBase& self) {
  return run_unary("aten::exp", "exp", self, [](const TensorBase& x) { return op::exp(x); });
}

TensorBase XLANativeFunctions::log(const TensorBase& self) {
  return run_unary("aten::log", "log", self, [](const TensorBase& x) { return op::log(x); });
}

TensorBase XLANativeFunctions::sqrt(const TensorBase& self) {
  return run_unary("aten::sqrt", "sqrt", self, [](const TensorBase& x) { return op::sqrt(x); });
}

TensorBase XLANativeFunctions::tanh(const TensorBase& self) {
  return run_unary("aten::tanh", "tanh", self, [](const TensorBase& x) { return op::tanh(x); });
}

// ----- reductions -----

TensorBase XLANativeFunctions::sum(const TensorBase& self, std::optional<ScalarType> dtype) {
  return run_unary("aten::sum", "sum", self, [&](const TensorBase& x) { return op::sum(x, dtype); });
}

TensorBase XLANativeFunctions::sum(const TensorBase& self, std::optional<IntArrayRef> dim, bool keepdim,
                               std::optional<ScalarType> dtype) {
  return run_unary("aten::sum.dim_IntList", "sum", self,
                   [&](const TensorBase& x) { return op::sum(x, dim, keepdim, dtype); });
}

}  // namespace op::xla
