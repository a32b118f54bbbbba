// The graph's inputs: data a lazy tensor already holds, or a 0-d cpu tensor (a wrapped number)
// used as an operand. Graphs hash them by sizes and dtype only, so a step over new data
// reuses the compiled plan.
#pragma once

#include <vector>

#include "backends/lazy/ir.h"

namespace op::lazy {

class DeviceData final : public Node {
 public:
  static constexpr const char* kOp = "lazy::device_data";
  static constexpr OpKind kOpKind{"lazy", "device_data"};
  explicit DeviceData(TensorBase data);
  std::vector<TensorBase> lower(const std::vector<TensorBase>& data) const override;
  const TensorBase& data() const { return data_; }

 private:
  TensorBase data_;
};

}  // namespace op::lazy
