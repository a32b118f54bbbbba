#include "core/type_promotion.h"

#include <optional>

namespace op {

namespace {

std::optional<ScalarType> promote(std::optional<ScalarType> a, ScalarType b) {
  return a ? promote_types(*a, b) : b;
}

// Combines a higher-priority tier with a lower one: the lower tier only counts when it is
// of a higher category, and then at its own width (bool tensor + 2 -> int64).
std::optional<ScalarType> combine(std::optional<ScalarType> higher, std::optional<ScalarType> lower) {
  if (!higher) return lower;
  if (!lower || category(*lower) <= category(*higher)) return higher;
  return promote_types(*higher, *lower);
}

}  // namespace

ScalarType result_type(ArrayRef<TensorBase> tensors, ArrayRef<Scalar> scalars) {
  std::optional<ScalarType> dimmed, zero_dim, numbers;
  for (const TensorBase& t : tensors) {
    if (!t.defined()) continue;
    if (t.dim() > 0)
      dimmed = promote(dimmed, t.dtype());
    else
      zero_dim = promote(zero_dim, t.dtype());
  }
  // Python numbers: int -> int64, float -> float32 (the default float type), bool -> bool.
  for (const Scalar& s : scalars) numbers = promote(numbers, default_type_for(category(s.type())));
  std::optional<ScalarType> result = combine(dimmed, combine(zero_dim, numbers));
  OP_CHECK(result.has_value(), "result_type needs at least one tensor or scalar");
  return *result;
}

}  // namespace op
