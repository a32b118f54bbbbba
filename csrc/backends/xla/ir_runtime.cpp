// The XLA sample's IR runtime (ir.h): data and constant nodes, and eager lowering.
#include "backends/xla/ir.h"

#include "backends/xla/host_alias.h"
#include "backends/xla/metrics.h"
#include "backends/xla/xla_device.h"
#include "core/error.h"
#include "ops/full_ops.h"

namespace op::xla {

namespace {

// An operand's data: a cpu view of an xla tensor's bytes, or a 0-d cpu tensor.
class Data final : public lazy::Node {
 public:
  static constexpr const char* kOp = "xla::device_data";
  static constexpr lazy::OpKind kOpKind{"xla", "device_data"};
  explicit Data(TensorBase data)
      : Node(kOp, kOpKind, {}, {lazy::Shape{data.dtype(), data.sizes().vec()}}, lazy::hash_of(kOp)), data_(std::move(data)) {}
  std::vector<TensorBase> lower(const std::vector<TensorBase>& /*data*/) const override { return {data_}; }

 private:
  TensorBase data_;
};

// A Scalar or SymInt operand: its value as a 0-d cpu tensor of its own dtype.
class Constant final : public lazy::Node {
 public:
  static constexpr const char* kOp = "xla::constant";
  explicit Constant(const Scalar& value)
      : Node(kOp, lazy::kConstantKind, {}, {lazy::Shape{value.type(), {}}}, lazy::hash_of(kOp, value)), value_(value) {}
  std::vector<TensorBase> lower(const std::vector<TensorBase>& /*data*/) const override {
    return {ops::full::call(IntArrayRef(), value_, value_.type(), std::nullopt, Device(DeviceType::CPU), std::nullopt)};
  }

 private:
  Scalar value_;
};

// The node's values, its operands lowered first (a kernel's operands are data and constants,
// so this is one level deep).
std::vector<TensorBase> lower(const lazy::Node& node) {
  std::vector<TensorBase> data;
  for (const lazy::Value& operand : node.operands()) data.push_back(lower(*operand.node).at(operand.index));
  std::vector<TensorBase> results = node.lower(data);
  OP_CHECK(results.size() == node.shapes().size(), node.op(), " (xla lowering): ", results.size(), " results for ",
           node.shapes().size(), " outputs");
  for (size_t k = 0; k < results.size(); ++k) {
    const lazy::Shape& expected = node.shapes()[k];
    OP_CHECK(results[k].defined() && results[k].dtype() == expected.dtype && results[k].sizes() == IntArrayRef(expected.sizes),
             node.op(), " (xla lowering): output ", k, " is not ", lazy::to_string(expected), " as its shape function says");
  }
  return results;
}

}  // namespace

Device common_device(ArrayRef<TensorBase> tensors) {
  std::optional<Device> device;
  for (const TensorBase& t : tensors) {
    if (!t.defined() || (t.dim() == 0 && t.device().is_cpu())) continue;  // wrapped numbers join any device
    OP_CHECK(is_xla(t), "xla: an IR kernel got a tensor on ", t.device().str(), ", not on xla");
    if (!device) device = t.device();
    OP_CHECK(t.device() == *device, "xla: expected all tensors on the same device, but found tensors on ",
             device->str(), " and on ", t.device().str());
  }
  return device.value_or(default_device());
}

Device default_device() { return xla_device(); }

lazy::Value ir_value(const TensorBase& t) {
  OP_CHECK(t.defined(), "xla: an undefined tensor cannot be an IR operand");
  return lazy::Value{std::make_shared<Data>(cpu_view(t)), 0};
}

std::optional<lazy::Value> ir_value(const std::optional<TensorBase>& t) {
  if (!t || !t->defined()) return std::nullopt;
  return ir_value(*t);
}

std::vector<lazy::Value> ir_value(ArrayRef<TensorBase> ts) {
  std::vector<lazy::Value> out;
  for (const TensorBase& t : ts) out.push_back(ir_value(t));
  return out;
}

lazy::Value scalar_operand(const Scalar& value) { return lazy::Value{std::make_shared<Constant>(value), 0}; }

std::optional<lazy::Value> scalar_operand(const std::optional<Scalar>& value) {
  if (!value) return std::nullopt;
  return scalar_operand(*value);
}

lazy::Value symint_operand(int64_t value) { return scalar_operand(Scalar(value)); }

std::optional<lazy::Value> symint_operand(std::optional<int64_t> value) {
  if (!value) return std::nullopt;
  return symint_operand(*value);
}

TensorBase make_tensor(lazy::Value value, Device device) {
  record_call(CallKind::Kernel, value.node->op());
  return xla_view(lower(*value.node).at(value.index), device);
}

}  // namespace op::xla
