// C++ API as user code writes it: op::Tensor with operator methods (api/tensor.h), chained
// calls, defaults, in-place methods that return *this, and free functions whose TensorBase
// results become Tensors. The only test object that includes the method umbrella: it is
// built without OP_ASSERT_NO_TENSOR_METHODS and recompiles when any method operator changes.
#include <type_traits>
#include <vector>

#include "api/tensor.h"
#include "ops/full.h"
#include "tests/harness.h"

using op::Tensor;
using op::TensorBase;

static_assert(std::is_base_of_v<TensorBase, Tensor>, "op::Tensor is a TensorBase with methods");
static_assert(sizeof(Tensor) == sizeof(TensorBase), "op::Tensor adds methods, never state");

namespace {

Tensor filled(std::vector<int64_t> sizes, double value) { return op::full(sizes, value, op::ScalarType::Float32); }

}  // namespace

TEST(methods_chain_and_take_defaults) {
  Tensor a = filled({2, 3}, 2.0);
  Tensor b = filled({2, 3}, 3.0);
  CHECK_EQ(a.add(b).to_vector<float>(), std::vector<float>(6, 5.0f));             // alpha defaults to 1
  CHECK_EQ(a.add(b, 2).to_vector<float>(), std::vector<float>(6, 8.0f));          // explicit alpha
  CHECK_EQ(a.add(b).mul(b).neg().to_vector<float>(), std::vector<float>(6, -15.0f));  // chained
  CHECK_EQ(a.sum().to_vector<float>(), std::vector<float>{12.0f});
  CHECK_EQ(a.sum(std::vector<int64_t>{1}).to_vector<float>(), (std::vector<float>{6.0f, 6.0f}));
}

TEST(in_place_methods_return_the_tensor_itself) {
  Tensor a = filled({4}, 1.0);
  Tensor& same = a.add_(filled({4}, 2.0)).mul_(2);
  CHECK(&same == &a);
  CHECK_EQ(a.to_vector<float>(), std::vector<float>(4, 6.0f));
}

TEST(view_methods_alias_their_base) {
  Tensor a = filled({2, 3}, 0.0);
  Tensor v = a.view({3, 2}).t();
  CHECK(v.is_alias_of(a));
  CHECK_EQ(v.sizes().vec(), (std::vector<int64_t>{2, 3}));
  v.fill_(7);
  CHECK_EQ(a.to_vector<float>(), std::vector<float>(6, 7.0f));
}

TEST(tensor_base_results_and_arguments_mix_with_tensors) {
  TensorBase base = op::full({2}, 1.5, op::ScalarType::Float32);  // what kernels hold
  Tensor t = base;                                                // implicit: shares the TensorImpl
  CHECK(t.unsafe_impl() == base.unsafe_impl());
  CHECK_EQ(t.add(base).to_vector<float>(), (std::vector<float>{3.0f, 3.0f}));
}
