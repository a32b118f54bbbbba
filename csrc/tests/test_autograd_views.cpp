// Views and in-place operations under autograd, and the ADInplaceOrView dispatch key: operators
// of a test namespace get hand-written kernels at Autograd and ADInplaceOrView that do what the
// generated ones (ops/<g>_Autograd.cpp, ops/<g>_ADInplaceOrView.cpp) will do with the runtime
// API (guards.h, views.h, autograd_meta.h, generated_support.h): CopySlices, the lazily remade
// AsStridedBackward0 of a modified view, PyTorch's in-place checks, the guards and
// compute_requires_grad / collect_next_edges over optional and list arguments.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "autograd/autograd_meta.h"
#include "autograd/backward.h"
#include "autograd/generated_support.h"
#include "autograd/grad_mode.h"
#include "autograd/guards.h"
#include "autograd/node.h"
#include "autograd/views.h"
#include "dispatch/dispatcher.h"
#include "dispatch/local_dispatch_key_set.h"
#include "dispatch/registration.h"
#include "harness.h"
#include "ops/clone.h"
#include "ops/mul.h"
#include "ops/mul_ops.h"
#include "ops/select.h"
#include "ops/select_scatter.h"
#include "ops/sum.h"
#include "ops/zeros.h"

using namespace op;
using namespace op::autograd;

namespace {

// ----- backward nodes, as the generated ones will be -----

struct CloneBackward : Node {
  using Node::Node;
  variable_list apply(variable_list&& grads) override { return {grads[0]}; }
  std::string name() const override { return "CloneBackward0"; }
};

struct SelectBackward : Node {
  SelectBackward(edge_list edges, std::vector<int64_t> sizes, int64_t index)
      : Node(std::move(edges)), sizes(std::move(sizes)), index(index) {}
  variable_list apply(variable_list&& grads) override {
    if (!grads[0].defined()) return {TensorBase()};
    return {op::select_scatter(op::zeros(sizes, grads[0].dtype()), grads[0], 0, index)};
  }
  std::string name() const override { return "SelectBackward0"; }
  std::vector<int64_t> sizes;
  int64_t index;
};

struct ScaleBackward : Node {
  ScaleBackward(edge_list edges, double c) : Node(std::move(edges)), c(c) {}
  variable_list apply(variable_list&& grads) override { return {op::mul(grads[0], c)}; }
  std::string name() const override { return "MulBackward1"; }
  double c;
};

struct SumBackward : Node {
  SumBackward(edge_list edges, std::vector<int64_t> sizes) : Node(std::move(edges)), sizes(std::move(sizes)) {}
  variable_list apply(variable_list&& grads) override { return {op::mul(TensorBase::full(sizes, 1.0f), grads[0])}; }
  std::string name() const override { return "SumBackward0"; }
  std::vector<int64_t> sizes;
};

// ----- kernels of the test operators -----

const TypedOperatorHandle<TensorBase(const TensorBase&)>& clone_op() {
  static auto h = Dispatcher::singleton().find_op_or_throw("viewtest::my_clone").typed<TensorBase(const TensorBase&)>();
  return h;
}
const TypedOperatorHandle<TensorBase(const TensorBase&, int64_t)>& select_op() {
  static auto h =
      Dispatcher::singleton().find_op_or_throw("viewtest::my_select").typed<TensorBase(const TensorBase&, int64_t)>();
  return h;
}
const TypedOperatorHandle<TensorBase&(TensorBase&, double)>& scale_op() {
  static auto h = Dispatcher::singleton().find_op_or_throw("viewtest::scale_").typed<TensorBase&(TensorBase&, double)>();
  return h;
}
const TypedOperatorHandle<TensorBase(const TensorBase&)>& sum_op() {
  static auto h = Dispatcher::singleton().find_op_or_throw("viewtest::my_sum").typed<TensorBase(const TensorBase&)>();
  return h;
}

int ad_inplace_or_view_calls = 0;

TensorBase clone_cpu(const TensorBase& self) { return op::clone(self); }
TensorBase select_cpu(const TensorBase& self, int64_t index) { return op::select(self, 0, index); }
TensorBase& scale_cpu(TensorBase& self, double c) { return ops::mul__Scalar::call(self, c); }
TensorBase sum_cpu(const TensorBase& self) { return op::sum(self); }

// ADInplaceOrView: a view operator records its output as a view of its input; an in-place one
// bumps the version counter.
TensorBase select_ad_inplace_or_view(DispatchKeySet ks, const TensorBase& self, int64_t index) {
  ++ad_inplace_or_view_calls;
  TensorBase tmp;
  {
    BelowADInplaceOrView guard;
    tmp = select_op().redispatch(ks.without_highest(), self, index);
  }
  return as_view(self, tmp);
}
TensorBase& scale_ad_inplace_or_view(DispatchKeySet ks, TensorBase& self, double c) {
  ++ad_inplace_or_view_calls;
  {
    BelowADInplaceOrView guard;
    scale_op().redispatch(ks.without_highest(), self, c);
  }
  bump_version(self);
  return self;
}

// Autograd: record a node, redispatch below autograd, give the outputs their history.
TensorBase clone_autograd(DispatchKeySet ks, const TensorBase& self) {
  std::shared_ptr<CloneBackward> node;
  if (compute_requires_grad(self)) node = std::make_shared<CloneBackward>(collect_next_edges(self));
  TensorBase result;
  {
    BelowAutograd guard;
    result = clone_op().redispatch(ks.without_highest(), self);
  }
  set_history(result, node);
  return result;
}
TensorBase select_autograd(DispatchKeySet ks, const TensorBase& self, int64_t index) {
  std::shared_ptr<SelectBackward> node;
  if (compute_requires_grad(self))
    node = std::make_shared<SelectBackward>(collect_next_edges(self), self.sizes().vec(), index);
  TensorBase result;
  {
    BelowAutograd guard;
    result = select_op().redispatch(ks.without_highest(), self, index);
  }
  set_history(result, node);
  return result;
}
TensorBase& scale_autograd(DispatchKeySet ks, TensorBase& self, double c) {
  check_inplace(self);
  std::shared_ptr<ScaleBackward> node;
  if (compute_requires_grad(self)) node = std::make_shared<ScaleBackward>(collect_next_edges(self), c);
  {
    BelowAutograd guard;
    scale_op().redispatch(ks.without_highest(), self, c);
  }
  rebase_history(self, node);
  return self;
}
TensorBase sum_autograd(DispatchKeySet ks, const TensorBase& self) {
  std::shared_ptr<SumBackward> node;
  if (compute_requires_grad(self)) node = std::make_shared<SumBackward>(collect_next_edges(self), self.sizes().vec());
  TensorBase result;
  {
    BelowAutograd guard;
    result = sum_op().redispatch(ks.without_highest(), self);
  }
  set_history(result, node);
  return result;
}

TensorBase my_clone(const TensorBase& t) { return clone_op().call(t); }
TensorBase my_select(const TensorBase& t, int64_t i) { return select_op().call(t, i); }
TensorBase& scale_(TensorBase& t, double c) { return scale_op().call(t, c); }
TensorBase my_sum(const TensorBase& t) { return sum_op().call(t); }

TensorBase leaf(std::vector<float> values, std::vector<int64_t> sizes = {}) {
  TensorBase t = TensorBase::from_vector<float>(values, sizes);
  set_requires_grad(t, true);
  return t;
}

}  // namespace

// Registered as generated per-operator files do, at static initialisation.
OP_LIBRARY(viewtest, m) {
  m.def("my_clone(Tensor self) -> Tensor");
  m.def("my_select(Tensor(a) self, int index) -> Tensor(a)");
  m.def("scale_(Tensor(a!) self, float c) -> Tensor(a!)");
  m.def("my_sum(Tensor self) -> Tensor");
}
OP_LIBRARY_IMPL(viewtest, CPU, m) {
  m.impl("my_clone", KernelFunction::make<&clone_cpu>(), "clone cpu");
  m.impl("my_select", KernelFunction::make<&select_cpu>(), "select cpu");
  m.impl("scale_", KernelFunction::make<&scale_cpu>(), "scale_ cpu");
  m.impl("my_sum", KernelFunction::make<&sum_cpu>(), "sum cpu");
}
OP_LIBRARY_IMPL(viewtest, ADInplaceOrView, m) {
  m.impl("my_select", KernelFunction::make<&select_ad_inplace_or_view>(), "select view");
  m.impl("scale_", KernelFunction::make<&scale_ad_inplace_or_view>(), "scale_ inplace");
}
OP_LIBRARY_IMPL(viewtest, Autograd, m) {
  m.impl("my_clone", KernelFunction::make<&clone_autograd>(), "clone autograd");
  m.impl("my_select", KernelFunction::make<&select_autograd>(), "select autograd");
  m.impl("scale_", KernelFunction::make<&scale_autograd>(), "scale_ autograd");
  m.impl("my_sum", KernelFunction::make<&sum_autograd>(), "sum autograd");
}

// ----- the key -----

TEST(ad_inplace_or_view_key_names_and_rank) {
  CHECK_EQ(parse_dispatch_key("ADInplaceOrView"), DispatchKey::ADInplaceOrView);
  CHECK_EQ(std::string(to_string(DispatchKey::ADInplaceOrView)), "ADInplaceOrView");
  CHECK(is_runtime_key(DispatchKey::ADInplaceOrView) && !is_autograd_key(DispatchKey::ADInplaceOrView));
  CHECK(!is_backend_key(DispatchKey::ADInplaceOrView) && !is_alias_key(DispatchKey::ADInplaceOrView));
  CHECK(index_of(DispatchKey::Functionalize) < index_of(DispatchKey::ADInplaceOrView));
  CHECK(index_of(DispatchKey::ADInplaceOrView) < index_of(DispatchKey::AutogradCPU));
  // Not covered by the alias keys: only kernels registered at the key itself run there.
  for (DispatchKey alias : {DispatchKey::Autograd, DispatchKey::CompositeImplicitAutograd,
                            DispatchKey::CompositeExplicitAutograd, DispatchKey::CompositeExplicitAutogradNonFunctional})
    CHECK(!runtime_keys_of(alias).has(DispatchKey::ADInplaceOrView));
  CHECK(default_fallthrough_keys().has(DispatchKey::ADInplaceOrView));
}

TEST(ad_inplace_or_view_key_in_tensor_key_sets) {
  CHECK_EQ(TensorBase::zeros({1}).key_set().to_string(), "{AutogradCPU, ADInplaceOrView, CPU}");
  CHECK(key_set_of(DeviceType::CUDA).has(DispatchKey::ADInplaceOrView));
  CHECK(!TensorBase::empty({1}, DeviceType::Meta).key_set().has(DispatchKey::ADInplaceOrView));  // no autograd layer
}

TEST(ad_inplace_or_view_passes_through_by_default) {
  Dispatcher d;
  auto def = d.def("v::f(Tensor x) -> Tensor");
  std::vector<std::string> seen;
  auto cpu = d.impl("v::f", DispatchKey::CPU, KernelFunction::from_unboxed([&seen](DispatchKeySet ks, const TensorBase& x) {
                      seen.push_back(ks.to_string());
                      return x;
                    }), "cpu");
  auto op = d.find_op_or_throw("v::f").typed<TensorBase(const TensorBase&)>();
  TensorBase t = TensorBase::zeros({1});
  CHECK(op.call(t).is_alias_of(t));  // AutogradCPU and ADInplaceOrView pass through
  CHECK_EQ(seen.back(), "{CPU}");
  auto table = d.dump_table("v::f");
  for (const auto& [key, label] : table) CHECK(key != "ADInplaceOrView");
  // A kernel at the key runs, sees itself at the top and continues below.
  auto view = d.impl("v::f", DispatchKey::ADInplaceOrView,
                     KernelFunction::from_unboxed([&seen, &op](DispatchKeySet ks, const TensorBase& x) {
                       seen.push_back(ks.to_string());
                       return op.redispatch(ks.without_highest(), x);
                     }), "view");
  op.call(t);
  CHECK_EQ(seen[seen.size() - 2], "{ADInplaceOrView, BackendSelect, CPU}");
  CHECK_EQ(seen.back(), "{CPU}");
  CHECK(d.dump("v::f").find("ADInplaceOrView: view") != std::string::npos);
  {
    ExcludeKeyGuard below(DispatchKey::ADInplaceOrView);
    size_t before = seen.size();
    op.call(t);
    CHECK_EQ(seen.size(), before + 1);  // only the CPU kernel
  }
  // Registered through OP_LIBRARY_IMPL(viewtest, ADInplaceOrView, m) at static initialisation.
  CHECK(static_registration_errors().empty());
  auto rows = Dispatcher::singleton().dump_table("viewtest::my_select");
  bool found = false;
  for (const auto& [key, label] : rows) found = found || (key == "ADInplaceOrView" && label == "select view");
  CHECK(found);
}

// ----- guards -----

TEST(autograd_guards_exclude_what_they_should) {
  const DispatchKeySet autograd = DispatchKeySet(DispatchKey::AutogradCPU)
                                      .add(DispatchKey::AutogradCUDA)
                                      .add(DispatchKey::AutogradXLA)
                                      .add(DispatchKey::AutogradLazy)
                                      .add(DispatchKey::AutogradPrivateUse1);
  CHECK(tls_local_dispatch_key_set.excluded.empty());
  {
    BelowAutograd below;
    CHECK_EQ(tls_local_dispatch_key_set.excluded, autograd);
    {
      BelowADInplaceOrView further;
      CHECK_EQ(tls_local_dispatch_key_set.excluded, autograd.add(DispatchKey::ADInplaceOrView));
    }
    CHECK_EQ(tls_local_dispatch_key_set.excluded, autograd);
    // A call on a CPU tensor now starts at ADInplaceOrView.
    CHECK_EQ(compute_dispatch_key_set(TensorBase::zeros({1}).key_set()).highest(), DispatchKey::ADInplaceOrView);
  }
  CHECK(tls_local_dispatch_key_set.excluded.empty());
  {
    BelowADInplaceOrView below;
    CHECK_EQ(tls_local_dispatch_key_set.excluded, autograd.add(DispatchKey::ADInplaceOrView));
    CHECK_EQ(compute_dispatch_key_set(TensorBase::zeros({1}).key_set()).highest(), DispatchKey::BackendSelect);
  }
  CHECK(tls_local_dispatch_key_set.excluded.empty());
}

TEST(autograd_compute_requires_grad_over_tensor_like_arguments) {
  TensorBase plain = TensorBase::from_vector<float>({1});
  TensorBase x = leaf({1});
  std::optional<TensorBase> none, some_plain = plain, some_x = x;
  std::vector<TensorBase> list_plain{plain, TensorBase()}, list_x{plain, x};
  std::vector<std::optional<TensorBase>> opt_list{std::nullopt, x};
  CHECK(!compute_requires_grad(plain));
  CHECK(!compute_requires_grad(TensorBase()));
  CHECK(compute_requires_grad(x));
  CHECK(!compute_requires_grad(plain, none, some_plain));
  CHECK(compute_requires_grad(plain, none, some_x));
  CHECK(!compute_requires_grad(list_plain));
  CHECK(compute_requires_grad(list_x));
  CHECK(compute_requires_grad(plain, ArrayRef<TensorBase>(list_x)));
  CHECK(!compute_requires_grad(ArrayRef<TensorBase>(list_plain), none));
  CHECK(compute_requires_grad(ArrayRef<std::optional<TensorBase>>(opt_list)));
  {
    NoGradGuard no_grad;
    CHECK(!compute_requires_grad(x, list_x, some_x));
  }
}

TEST(autograd_collect_next_edges_flattens_in_order) {
  TensorBase a = leaf({1}), b = leaf({2}), plain = TensorBase::from_vector<float>({3});
  TensorBase c = my_clone(a);
  std::vector<TensorBase> list{b, TensorBase(), plain};
  edge_list edges = collect_next_edges(a, std::optional<TensorBase>(), list, c, std::optional<TensorBase>(b));
  CHECK_EQ(edges.size(), size_t{7});
  CHECK(edges[0] == gradient_edge(a) && edges[0].is_valid());
  CHECK(!edges[1].is_valid());
  CHECK(edges[2] == gradient_edge(b) && edges[2].is_valid());
  CHECK(!edges[3].is_valid() && !edges[4].is_valid());  // an undefined tensor, a tensor without grad
  CHECK(edges[5].function == grad_fn(c) && edges[5].function->name() == "CloneBackward0");
  CHECK(edges[6] == gradient_edge(b));
  std::vector<std::optional<TensorBase>> optionals{std::nullopt, a};
  edge_list from_optionals = collect_next_edges(ArrayRef<std::optional<TensorBase>>(optionals), ArrayRef<TensorBase>(list));
  CHECK_EQ(from_optionals.size(), size_t{5});
  CHECK(!from_optionals[0].is_valid() && from_optionals[1] == gradient_edge(a) && from_optionals[2] == gradient_edge(b));
  CHECK(collect_next_edges(list) == collect_next_edges(ArrayRef<TensorBase>(list)));  // node.h's and guards.h's agree
}

// ----- history of several outputs, unimplemented derivatives, out= -----

TEST(autograd_set_history_numbers_outputs_in_order) {
  TensorBase x = leaf({1, 2});
  struct TwoOutputs : Node {
    using Node::Node;
    variable_list apply(variable_list&& grads) override { return {grads[0]}; }
    std::string name() const override { return "TwoOutputsBackward0"; }
  };
  auto node = std::make_shared<TwoOutputs>(collect_next_edges(x));
  TensorBase first = TensorBase::from_vector<float>({1, 2}), second = TensorBase::from_vector<float>({3});
  set_history(first, node);
  set_history(TensorBase(), node);  // an undefined output keeps the numbers of those after it
  set_history(second, node);
  CHECK_EQ(node->num_inputs(), size_t{3});
  CHECK(grad_fn(first) == node && output_nr(first) == 0);
  CHECK(grad_fn(second) == node && output_nr(second) == 2);
  CHECK(node->input_metadata(2).sizes == std::vector<int64_t>{1});
  TensorBase untouched = TensorBase::from_vector<float>({1});
  set_history(untouched, std::shared_ptr<Node>());  // no node: nothing
  CHECK(is_leaf(untouched) && !requires_grad(untouched));
}

TEST(autograd_not_implemented_node_and_out_error) {
  TensorBase x = leaf({1, 2});
  auto node = std::make_shared<NotImplemented>("frobnicate", collect_next_edges(x));
  CHECK_EQ(node->name(), "NotImplemented");
  TensorBase y = TensorBase::from_vector<float>({0, 0});
  set_history(y, node);
  CHECK(requires_grad(y));
  CHECK_THROWS(backward({y}, {TensorBase::from_vector<float>({1, 1})}), "derivative for frobnicate is not implemented");
  CHECK_THROWS(throw_error_out_requires_grad("add"),
               "add(): functions with out=... arguments don't support automatic differentiation, but one of the "
               "arguments requires grad.");
}

// ----- views and in-place operations -----

TEST(autograd_views_share_the_version_counter_and_record_the_root_base) {
  TensorBase y = my_clone(leaf({1, 2, 3, 4, 5, 6}, {2, 3}));
  int calls = ad_inplace_or_view_calls;
  TensorBase v = my_select(y, 1);
  CHECK_EQ(ad_inplace_or_view_calls, calls + 1);  // the ADInplaceOrView kernel ran
  CHECK(is_view(v) && !is_view(y) && view_base(v).unsafe_impl() == y.unsafe_impl());
  CHECK(v.is_alias_of(y) && grad_fn(v)->name() == "SelectBackward0");
  TensorBase w = my_select(v, 2);  // a view of a view records the first base
  CHECK(is_view(w) && view_base(w).unsafe_impl() == y.unsafe_impl());
  uint32_t before = version(y);
  CHECK(version(v) == before && version(w) == before);
  bump_version(w);
  CHECK(version(y) == before + 1 && version(v) == before + 1);
  // A view returned as its base's own tensor is recorded on a shallow copy.
  TensorBase same = as_view(y, y);
  CHECK(same.unsafe_impl() != y.unsafe_impl() && same.is_alias_of(y) && is_view(same) && !is_view(y));
  CHECK(!as_view(y, TensorBase()).defined());
}

TEST(autograd_copy_slices_inplace_on_a_view) {
  // y = x.clone(); y[0] *= 3; y.sum().backward(): x.grad is 3 on row 0 and 1 elsewhere.
  TensorBase x = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  TensorBase y = my_clone(x);
  TensorBase row = my_select(y, 0);
  uint32_t before = version(y);
  scale_(row, 3);
  CHECK_EQ(version(y), before + 1);
  CHECK_EQ(y.to_vector<float>(), (std::vector<float>{3, 6, 9, 4, 5, 6}));
  CHECK_EQ(grad_fn(y)->name(), "CopySlices");
  auto* copy_slices = dynamic_cast<CopySlices*>(grad_fn(y).get());
  CHECK(copy_slices != nullptr && copy_slices->num_outputs() == 1);
  CHECK_EQ(copy_slices->next_edge(0).function->name(), "CloneBackward0");
  CHECK_EQ(copy_slices->fn()->name(), "MulBackward1");
  CHECK_EQ(grad_fn(row)->name(), "AsStridedBackward0");
  CHECK(grad_fn(row)->next_edge(0).function == grad_fn(y));
  CHECK(grad_fn(row) == grad_fn(row));  // remade once, not per call
  backward({my_sum(y)});
  CHECK_EQ(grad(x).to_vector<float>(), (std::vector<float>{3, 3, 3, 1, 1, 1}));
  // Through the modified view: row = 3 * x[0].
  set_grad(x, TensorBase());
  TensorBase y2 = my_clone(x);
  TensorBase row2 = my_select(y2, 0);
  scale_(row2, 3);
  backward({my_sum(row2)});
  CHECK_EQ(grad(x).to_vector<float>(), (std::vector<float>{3, 3, 3, 0, 0, 0}));
}

TEST(autograd_sibling_views_see_the_new_history) {
  TensorBase x = leaf({1, 2, 3, 4}, {2, 2});
  TensorBase y = my_clone(x);
  TensorBase first = my_select(y, 0), second = my_select(y, 1);
  CHECK_EQ(grad_fn(second)->name(), "SelectBackward0");
  scale_(first, 2);
  CHECK_EQ(grad_fn(second)->name(), "AsStridedBackward0");  // the version moved under it
  CHECK(grad_fn(second)->next_edge(0).function == grad_fn(y));
  scale_(second, 5);
  backward({my_sum(y)});
  CHECK_EQ(grad(x).to_vector<float>(), (std::vector<float>{2, 2, 5, 5}));
}

TEST(autograd_inplace_on_a_leaf_or_its_view_raises) {
  TensorBase x = leaf({1, 2, 3, 4}, {2, 2});
  TensorBase v = my_select(x, 0);
  CHECK_EQ(grad_fn(v)->name(), "SelectBackward0");
  CHECK_THROWS(scale_(v, 2), "a view of a leaf Variable that requires grad is being used in an in-place operation.");
  CHECK_THROWS(scale_(x, 2), "a leaf Variable that requires grad is being used in an in-place operation.");
  CHECK_EQ(x.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  {
    NoGradGuard no_grad;  // allowed without grad mode; the view's history is then remade
    scale_(v, 2);
  }
  CHECK_EQ(x.to_vector<float>(), (std::vector<float>{2, 4, 3, 4}));
  CHECK_EQ(grad_fn(v)->name(), "AsStridedBackward0");
  CHECK_EQ(grad_fn(v)->next_edge(0).function->name(), "torch::autograd::AccumulateGrad");
  // A leaf that does not require grad and its views can be changed in place.
  TensorBase plain = TensorBase::from_vector<float>({1, 2, 3, 4}, {2, 2});
  TensorBase pv = my_select(plain, 1);
  scale_(pv, 2);
  CHECK(grad_fn(pv) == nullptr && !requires_grad(plain) && !requires_grad(pv));
  CHECK_EQ(plain.to_vector<float>(), (std::vector<float>{1, 2, 6, 8}));
}

TEST(autograd_inplace_on_a_view_of_a_base_without_grad) {
  // b = [1, 2, 3] (no grad); b[0] *= w (w requires grad): b gets CopySlices, dsum(b)/dw = b_old[0].
  struct MulInplaceBackward : Node {
    MulInplaceBackward(edge_list edges, TensorBase self, TensorBase other)
        : Node(std::move(edges)), self_(std::move(self)), other_(std::move(other)) {}
    variable_list apply(variable_list&& grads) override {
      return {op::mul(grads[0], other_), op::mul(grads[0], self_)};
    }
    std::string name() const override { return "MulBackward0"; }
    TensorBase self_, other_;  // self as it was before the operation
  };
  TensorBase b = TensorBase::from_vector<float>({1, 2, 3});
  TensorBase w = TensorBase::scalar_tensor(5.0f);
  set_requires_grad(w, true);
  TensorBase v = my_select(b, 0);
  CHECK(grad_fn(v) == nullptr && !requires_grad(v));
  CHECK(compute_requires_grad(v, w));
  auto node = std::make_shared<MulInplaceBackward>(collect_next_edges(v, w), op::clone(v), detach(w));
  {
    BelowAutograd below;
    ops::mul__Tensor::call(v, w);
  }
  rebase_history(v, node);  // the version was not bumped: the view's history is remade anyway
  CHECK_EQ(b.to_vector<float>(), (std::vector<float>{5, 2, 3}));
  CHECK(requires_grad(b) && !is_leaf(b) && grad_fn(b)->name() == "CopySlices");
  CHECK_EQ(grad_fn(b)->num_outputs(), size_t{2});
  CHECK(!grad_fn(b)->next_edge(0).is_valid() && grad_fn(b)->next_edge(1) == gradient_edge(w));
  CHECK(requires_grad(v) && grad_fn(v)->name() == "AsStridedBackward0" && output_nr(v) == 0);
  backward({my_sum(b)});
  CHECK_EQ(grad(w).to_vector<float>(), (std::vector<float>{1}));
}

TEST(autograd_a_view_made_under_no_grad_cannot_change_in_place_with_grad_mode) {
  TensorBase y = my_clone(leaf({1, 2, 3, 4}, {2, 2}));
  TensorBase v;
  {
    NoGradGuard no_grad;
    v = my_select(y, 0);
    scale_(v, 2);  // the view and the in-place both under no_grad: allowed
  }
  // The view requires grad through its base (PyTorch's rule) but has no history of its own.
  CHECK(requires_grad(v) && get_autograd_meta(v)->grad_fn == nullptr);
  const std::string advice =
      " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving "
      "both the view and the inplace either both inside the no_grad block (if you don't want the inplace to be "
      "tracked) or both outside (if you want the inplace to be tracked).";
  CHECK_THROWS(scale_(v, 2), "A view was created in no_grad mode and is being modified inplace with grad mode "
                             "enabled." + advice);
  // Its base changed since (above): remaking its history raises too.
  CHECK_THROWS(grad_fn(v), "A view was created in no_grad mode and its base or another view of its base has been "
                           "modified inplace with grad mode enabled." + advice);
  // A view of it made with grad mode on keeps the restriction, naming its own node.
  TensorBase fresh = my_clone(leaf({1, 2, 3, 4}, {2, 2}));
  TensorBase w;
  {
    NoGradGuard no_grad;
    w = my_select(fresh, 1);
  }
  TensorBase ww = my_select(w, 0);
  CHECK_EQ(grad_fn(ww)->name(), "SelectBackward0");
  CHECK_THROWS(scale_(ww, 2), "Output 0 of SelectBackward0 is a view of a view which was created in no_grad mode and "
                              "is being modified inplace with grad mode enabled." + advice);
  CHECK_EQ(fresh.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
}

TEST(autograd_outputs_of_a_multi_output_view_function_cannot_change_in_place) {
  // y.unbind() as generated: one node for every output, each a MultiOutputNode view.
  struct UnbindBackward : Node {
    using Node::Node;
    variable_list apply(variable_list&&) override { return {TensorBase()}; }
    std::string name() const override { return "UnbindBackward0"; }
  };
  TensorBase y = my_clone(leaf({1, 2, 3, 4}, {2, 2}));
  auto node = std::make_shared<UnbindBackward>(collect_next_edges(y));
  std::vector<TensorBase> outputs;
  for (int64_t i = 0; i < 2; ++i) {
    TensorBase out;
    {
      BelowAutograd below;
      out = as_view(y, my_select(detach(y), i), CreationMeta::MultiOutputNode);
    }
    set_history(out, node);
    outputs.push_back(out);
  }
  const std::string advice =
      " This view is the output of a function that returns multiple views. Such functions do not allow the output "
      "views to be modified inplace. You should replace the inplace operation by an out-of-place one.";
  CHECK_THROWS(scale_(outputs[1], 2), "Output 1 of UnbindBackward0 is a view and is being modified inplace." + advice);
  // A view of an output inherits the restriction.
  TensorBase element = my_select(outputs[0], 1);
  CHECK_THROWS(scale_(element, 2), "Output 0 of SelectBackward0 is a view and is being modified inplace." + advice);
  CHECK_EQ(y.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  {
    NoGradGuard no_grad;
    scale_(outputs[0], 2);  // allowed without grad mode
  }
  // The base changed under the other outputs: their history cannot be remade.
  CHECK_THROWS(grad_fn(outputs[1]),
               "Output 1 of UnbindBackward0 is a view and its base or another view of its base has been modified "
               "inplace." + advice);
  // Without grad mode the outputs are plain NoGradMode views.
  {
    NoGradGuard no_grad;
    TensorBase out = as_view(y, my_select(detach(y), 0), CreationMeta::MultiOutputNode);
    CHECK(get_autograd_meta(out)->view->creation == CreationMeta::NoGradMode);
  }
}

TEST(autograd_rebase_history_on_a_plain_tensor) {
  TensorBase x = leaf({1, 2});
  TensorBase y = my_clone(x);
  scale_(y, 4);
  CHECK_EQ(grad_fn(y)->name(), "MulBackward1");
  CHECK_EQ(grad_fn(y)->num_inputs(), size_t{1});
  backward({my_sum(y)});
  CHECK_EQ(grad(x).to_vector<float>(), (std::vector<float>{4, 4}));
}

TEST(autograd_copy_slices_releases_its_node) {
  TensorBase x = leaf({1, 2, 3, 4}, {2, 2});
  TensorBase y = my_clone(x);
  TensorBase row = my_select(y, 1);
  scale_(row, 2);
  TensorBase s = my_sum(y);
  backward({s}, {}, /*retain_graph=*/true);
  backward({s});
  CHECK_EQ(grad(x).to_vector<float>(), (std::vector<float>{2, 2, 4, 4}));
  CHECK(dynamic_cast<CopySlices*>(grad_fn(y).get())->fn() == nullptr);
  CHECK_THROWS(backward({s}), "Trying to backward through the graph a second time");
}

TEST(autograd_as_strided_view_backward) {
  // A column of a 3x4 base (stride 4, offset 1): the gradient lands in that column.
  TensorBase base = TensorBase::zeros({3, 4});
  ViewGeometry input(base);
  ViewGeometry column;
  column.sizes = {3};
  column.strides = {4};
  column.storage_offset = 1;
  TensorBase g = as_strided_view_backward(TensorBase::from_vector<float>({1, 2, 3}), input, column);
  CHECK_EQ(g.sizes().vec(), (std::vector<int64_t>{3, 4}));
  CHECK_EQ(g.to_vector<float>(), (std::vector<float>{0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0}));
  // An input that starts later in its storage: offsets are relative to it.
  ViewGeometry shifted = input;
  shifted.storage_offset = 10;
  column.storage_offset = 12;
  CHECK_EQ(as_strided_view_backward(TensorBase::from_vector<float>({1, 2, 3}), shifted, column).to_vector<float>(),
           (std::vector<float>{0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0}));
  ViewGeometry expanded;
  expanded.sizes = {2, 3};
  expanded.strides = {0, 1};
  // An expanded view (stride 0) overlaps itself: the gradients of the elements sharing a memory
  // location add up (the first row of the base gets both rows' gradients).
  CHECK_EQ(as_strided_view_backward(TensorBase::from_vector<float>({1, 2, 3, 10, 20, 30}, {2, 3}), input,
                                    expanded)
               .to_vector<float>(),
           (std::vector<float>{11, 22, 33, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  // The node itself.
  AsStridedViewBackward node(input, column);
  CHECK_EQ(node.name(), "AsStridedBackward0");
}
