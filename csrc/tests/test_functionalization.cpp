// The functionalization runtime from C++: a mutation through a view reaches the base and a
// sibling view (sync by generation), the layer below sees only functional operators (the
// trace), eager view metadata is kept, and misuse throws op::Error naming the operator.
#include <string>
#include <vector>

#include "core/host_ops.h"
#include "functionalization/functionalization.h"
#include "harness.h"
#include "ops/add_ops.h"
#include "ops/mul_ops.h"
#include "ops/select_ops.h"
#include "ops/transpose_ops.h"

using namespace op;
namespace fz = op::functionalization;

namespace {

TensorBase matrix() { return TensorBase::from_vector<float>({0, 1, 2, 3, 4, 5}, {2, 3}); }

}  // namespace

TEST(functional_views_share_mutations) {
  TensorBase plain = matrix();
  TensorBase base = fz::to_functional(plain);
  CHECK(base.is_functional() && base.key_set().has(DispatchKey::Functionalize));
  TensorBase row = ops::select_int::call(base, 0, 1);
  TensorBase column = ops::select_int::call(base, 1, 2);
  CHECK(row.is_functional() && row.is_alias_of(base));
  fz::start_trace();
  ops::add__Scalar::call(row, 10, 1);
  std::vector<std::string> calls = fz::stop_trace();
  CHECK_EQ(calls, (std::vector<std::string>{"aten::add.Scalar"}));
  CHECK_EQ(fz::from_functional(base).to_vector<float>(), (std::vector<float>{0, 1, 2, 13, 14, 15}));
  CHECK_EQ(fz::from_functional(column).to_vector<float>(), (std::vector<float>{2, 15}));
  CHECK_EQ(plain.to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));  // the wrapped tensor is untouched
}

TEST(functional_transpose_keeps_eager_strides) {
  TensorBase base = fz::to_functional(matrix());
  TensorBase t = ops::transpose_int::call(base, 0, 1);
  CHECK_EQ(t.sizes().vec(), (std::vector<int64_t>{3, 2}));
  CHECK_EQ(t.strides().vec(), (std::vector<int64_t>{1, 3}));  // the eager view's, not its contiguous value's
  CHECK(fz::from_functional(t).is_contiguous());
  ops::mul__Scalar::call(t, 2);
  CHECK_EQ(fz::from_functional(base).to_vector<float>(), (std::vector<float>{0, 2, 4, 6, 8, 10}));
}

TEST(functional_misuse_names_the_operator) {
  TensorBase functional = fz::to_functional(matrix());
  TensorBase plain = matrix();
  CHECK_THROWS(ops::add__Tensor::call(plain, functional, 1), "aten::add_.Tensor: cannot mutate a tensor that is not functional");
  TensorBase row = ops::select_int::call(functional, 0, 0);
  CHECK_THROWS(ops::add__Tensor::call(row, functional, 1), "aten::add_.Tensor: the result of shape [2, 3] does not match");
  fz::start_trace();
  CHECK_THROWS(fz::start_trace(), "a trace is already running");
  fz::stop_trace();
}
