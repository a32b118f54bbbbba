// A stand-in for a backend's IR runtime, for a backend built from its yaml alone with every
// kernel stubbed (`scons --backend-yaml=FILE --missing-kernels=stub`): pytorch/xla's yaml
// builds, links and loads without pytorch/xla's C++. The generated header
// backends/<key>/ir.h of such a build brings these helpers into the backend's namespace, where
// its generated full_codegen kernels call them. The kernels then run as far as a stand-in can:
// operands become IR values over the arguments as they are, the node is made, and lowering it
// calls the backend's lowering, a stub that raises op::Error naming itself (a shape function,
// when the operator needs one, is a stub too, and raises first).
#pragma once

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "backends/support/lazy_ir.h"
#include "core/error.h"
#include "core/tensor.h"

namespace op::lazy::standin {

// An operand's data: the argument itself, as the kernel got it.
class Data final : public Node {
 public:
  static constexpr const char* kOp = "standin::data";
  static constexpr OpKind kOpKind{"standin", "data"};
  explicit Data(TensorBase data)
      : Node(kOp, kOpKind, {}, {Shape{data.dtype(), data.sizes().vec()}}, hash_of(kOp)), data_(std::move(data)) {}
  std::vector<TensorBase> lower(const std::vector<TensorBase>& /*data*/) const override { return {data_}; }

 private:
  TensorBase data_;
};

// A Scalar or SymInt operand: its value as a 0-d cpu tensor of its own dtype.
class Constant final : public Node {
 public:
  static constexpr const char* kOp = "standin::constant";
  explicit Constant(const Scalar& value)
      : Node(kOp, kConstantKind, {}, {Shape{value.type(), {}}}, hash_of(kOp, value)), value_(value) {}
  std::vector<TensorBase> lower(const std::vector<TensorBase>& /*data*/) const override {
    return {TensorBase::scalar_tensor(value_)};
  }

 private:
  Scalar value_;
};

// The device of the first tensor operand (a stand-in checks nothing about devices).
inline Device common_device(ArrayRef<TensorBase> tensors) {
  for (const TensorBase& t : tensors) {
    if (t.defined()) return t.device();
  }
  return Device(DeviceType::CPU);
}
inline Device default_device() { return Device(DeviceType::CPU); }

inline Value ir_value(const TensorBase& t) {
  OP_CHECK(t.defined(), "an undefined tensor cannot be an IR operand");
  return Value{std::make_shared<Data>(t), 0};
}
inline std::optional<Value> ir_value(const std::optional<TensorBase>& t) {
  if (!t || !t->defined()) return std::nullopt;
  return ir_value(*t);
}
inline std::vector<Value> ir_value(ArrayRef<TensorBase> ts) {
  std::vector<Value> out;
  for (const TensorBase& t : ts) out.push_back(ir_value(t));
  return out;
}

inline Value scalar_operand(const Scalar& value) { return Value{std::make_shared<Constant>(value), 0}; }
inline std::optional<Value> scalar_operand(const std::optional<Scalar>& value) {
  if (!value) return std::nullopt;
  return scalar_operand(*value);
}
inline Value symint_operand(int64_t value) { return scalar_operand(Scalar(value)); }
inline std::optional<Value> symint_operand(std::optional<int64_t> value) {
  if (!value) return std::nullopt;
  return symint_operand(*value);
}

template <class NodeT, class... Args>
std::shared_ptr<NodeT> reuse_or_make(Args&&... args) {
  return std::make_shared<NodeT>(detail::owned(std::forward<Args>(args))...);
}

// Lowers the node at once (its operands are data and constants: one level deep); the lowering
// is the backend's, which a stubbed build has not written, so this raises its stub's error.
inline TensorBase make_tensor(Value value, Device /*device*/) {
  std::vector<TensorBase> data;
  for (const Value& operand : value.node->operands()) data.push_back(operand.node->lower({}).at(operand.index));
  return value.node->lower(data).at(value.index);
}

}  // namespace op::lazy::standin
