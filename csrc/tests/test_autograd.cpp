// The autograd engine from C++ on hand-built nodes over real tensors (no generated Autograd
// kernels yet): accumulation into a leaf, broadcast reduction, execution order, retain_graph,
// saved-variable versions, a 100,000-node chain, grad mode and requires_grad's dtype check.
#include <pthread.h>

#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "autograd/accumulate_grad.h"
#include "autograd/autograd_meta.h"
#include "autograd/backward.h"
#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "autograd/helpers.h"
#include "autograd/node.h"
#include "autograd/saved_variable.h"
#include "core/host_ops.h"
#include "harness.h"
#include "ops/_to_copy.h"
#include "ops/add.h"
#include "ops/mul.h"

using namespace op;
using namespace op::autograd;

namespace {

std::vector<std::string>* trace = nullptr;  // node names in the order the engine ran them

// y = x * c: saves x (to check versions) although the gradient needs only c.
struct MulByConst : Node {
  MulByConst(const TensorBase& x, double c, std::string label = "MulByConstBackward0")
      : Node(collect_next_edges({x})), saved_x(x, /*is_output=*/false), c(c), label(std::move(label)) {}
  variable_list apply(variable_list&& grads) override {
    if (trace) trace->push_back(label);
    saved_x.unpack(name());
    return {grads[0].defined() ? op::mul(grads[0], c) : TensorBase()};
  }
  std::string name() const override { return label; }
  void release_variables() override { saved_x.reset(); }
  SavedVariable saved_x;
  double c;
  std::string label;
};

// z = a + b (broadcasting): both gradients are the incoming one; the engine reduces them.
struct AddNode : Node {
  AddNode(const TensorBase& a, const TensorBase& b) : Node(collect_next_edges({a, b})) {}
  variable_list apply(variable_list&& grads) override {
    if (trace) trace->push_back(name());
    return {grads[0], grads[0]};
  }
  std::string name() const override { return "AddBackward0"; }
};

// What a generated Autograd kernel will do: compute, then give the output its history.
TensorBase mul_by_const(const TensorBase& x, double c, const std::string& label = "MulByConstBackward0") {
  TensorBase y = op::mul(detach(x), c);
  if (GradMode::is_enabled() && requires_grad(x)) {
    auto node = std::make_shared<MulByConst>(x, c, label);
    set_history(y, node, node->add_input_metadata(y));
  }
  return y;
}

TensorBase add_recorded(const TensorBase& a, const TensorBase& b) {
  TensorBase z = op::add(detach(a), detach(b));
  if (GradMode::is_enabled() && (requires_grad(a) || requires_grad(b))) {
    auto node = std::make_shared<AddNode>(a, b);
    set_history(z, node, node->add_input_metadata(z));
  }
  return z;
}

TensorBase leaf(std::vector<float> values, std::vector<int64_t> sizes = {}) {
  TensorBase t = TensorBase::from_vector<float>(values, sizes);
  set_requires_grad(t, true);
  return t;
}

TensorBase sum_all(const TensorBase& t);  // a scalar root: sum as a hand-built node

struct SumNode : Node {
  explicit SumNode(const TensorBase& t) : Node(collect_next_edges({t})), sizes(t.sizes().vec()) {}
  variable_list apply(variable_list&& grads) override {
    if (trace) trace->push_back(name());
    return {op::mul(TensorBase::full(sizes, 1.0f), grads[0])};  // expand the scalar gradient
  }
  std::string name() const override { return "SumBackward0"; }
  std::vector<int64_t> sizes;
};

TensorBase sum_all(const TensorBase& t) {
  float total = 0;
  for (float v : detach(t).to_vector<float>()) total += v;
  TensorBase s = TensorBase::scalar_tensor(total);
  auto node = std::make_shared<SumNode>(t);
  set_history(s, node, node->add_input_metadata(s));
  return s;
}

// Runs `body` on a thread with a stack of `bytes` (a recursion 100,000 deep needs far more than
// 1 MiB but fits the main thread's usual 8 MiB), rethrowing what it threw.
void run_with_stack(size_t bytes, std::function<void()> body) {
  struct Job {
    std::function<void()> body;
    std::exception_ptr error;
  } job{std::move(body), nullptr};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, bytes);
  pthread_t thread;
  auto run = [](void* arg) -> void* {
    Job& j = *static_cast<Job*>(arg);
    try {
      j.body();
    } catch (...) {
      j.error = std::current_exception();
    }
    return nullptr;
  };
  int rc = pthread_create(&thread, &attr, run, &job);
  pthread_attr_destroy(&attr);
  CHECK(rc == 0);
  pthread_join(thread, nullptr);
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace

TEST(autograd_meta_is_absent_until_needed) {
  TensorBase t = TensorBase::from_vector<float>({1, 2});
  CHECK(t.unsafe_impl()->autograd_meta == nullptr);
  CHECK(!requires_grad(t) && is_leaf(t) && grad_fn(t) == nullptr && !grad(t).defined());
  set_requires_grad(t, false);
  CHECK(t.unsafe_impl()->autograd_meta == nullptr);
  set_requires_grad(t, true);
  CHECK(requires_grad(t) && is_leaf(t));
  TensorBase y = mul_by_const(t, 2);
  CHECK(requires_grad(y) && !is_leaf(y) && grad_fn(y)->name() == "MulByConstBackward0" && output_nr(y) == 0);
  CHECK_THROWS(set_requires_grad(y, false), "you can only change requires_grad flags of leaf variables");
  TensorBase d = detach(y);
  CHECK(!requires_grad(d) && is_leaf(d) && d.is_alias_of(y));
}

TEST(autograd_requires_grad_refuses_integer_and_bool) {
  TensorBase i = TensorBase::from_vector<int64_t>({1, 2});
  CHECK_THROWS(set_requires_grad(i, true), "only Tensors of floating point and complex dtype can require gradients");
  TensorBase b = TensorBase::full({2}, true, TensorOptions(ScalarType::Bool));
  CHECK_THROWS(set_requires_grad(b, true), "only Tensors of floating point and complex dtype can require gradients");
  CHECK(!requires_grad(i) && !requires_grad(b));
  set_requires_grad(TensorBase::from_vector<double>({1.0}), true);  // float64 is fine
}

TEST(autograd_leaf_used_twice_accumulates) {
  TensorBase x = leaf({1, 2, 3});
  TensorBase y = add_recorded(mul_by_const(x, 2), mul_by_const(x, 3));  // dy/dx = 5
  backward({y}, {TensorBase::from_vector<float>({1, 1, 1})});
  CHECK_EQ(grad(x).to_vector<float>(), (std::vector<float>{5, 5, 5}));
  TensorBase held = grad(x);
  backward({sum_all(mul_by_const(x, 4))});  // accumulates in place: a holder of .grad sees it
  CHECK_EQ(held.to_vector<float>(), (std::vector<float>{9, 9, 9}));
  CHECK(!requires_grad(grad(x)));
  set_grad(x, TensorBase());
  CHECK(!grad(x).defined());
}

TEST(autograd_grad_output_is_copied_not_stolen) {
  TensorBase x = leaf({1, 2});
  TensorBase g = TensorBase::from_vector<float>({1, 1});
  backward({mul_by_const(x, 1)}, {g}, /*retain_graph=*/false);
  backward({mul_by_const(x, 1)}, {g});
  CHECK_EQ(g.to_vector<float>(), (std::vector<float>{1, 1}));  // the caller's gradient untouched
  CHECK_EQ(grad(x).to_vector<float>(), (std::vector<float>{2, 2}));
}

TEST(autograd_sum_to_reduces_broadcast) {
  TensorBase g = TensorBase::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK_EQ(sum_to(g, std::vector<int64_t>{3}).to_vector<float>(), (std::vector<float>{5, 7, 9}));
  CHECK_EQ(sum_to(g, std::vector<int64_t>{3}).sizes().vec(), (std::vector<int64_t>{3}));
  CHECK_EQ(sum_to(g, std::vector<int64_t>{2, 1}).to_vector<float>(), (std::vector<float>{6, 15}));
  CHECK_EQ(sum_to(g, std::vector<int64_t>{2, 1}).sizes().vec(), (std::vector<int64_t>{2, 1}));
  CHECK_EQ(sum_to(g, std::vector<int64_t>{1, 1}).to_vector<float>(), (std::vector<float>{21}));
  TensorBase s = sum_to(g, std::vector<int64_t>{});
  CHECK(s.dim() == 0 && host::item<double>(s) == 21.0);
  CHECK(sum_to(g, std::vector<int64_t>{2, 3}).is_alias_of(g));
  CHECK_THROWS(sum_to(g, std::vector<int64_t>{2}), "not expandable");
  CHECK(is_expandable_to(std::vector<int64_t>{1, 3}, std::vector<int64_t>{4, 2, 3}));
  CHECK(!is_expandable_to(std::vector<int64_t>{2, 3}, std::vector<int64_t>{3}));
}

TEST(autograd_broadcast_gradient_reduced_to_leaf) {
  TensorBase a = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  TensorBase b = leaf({10, 20, 30}, {3});
  backward({sum_all(add_recorded(a, b))});  // b was broadcast over a's rows
  CHECK_EQ(grad(a).to_vector<float>(), (std::vector<float>{1, 1, 1, 1, 1, 1}));
  CHECK_EQ(grad(b).sizes().vec(), (std::vector<int64_t>{3}));
  CHECK_EQ(grad(b).to_vector<float>(), (std::vector<float>{2, 2, 2}));
}

TEST(autograd_engine_checks_gradients_against_input_metadata) {
  // A node returning a float64 gradient for a float32 leaf: converted on the way.
  struct ToDouble : Node {
    explicit ToDouble(const TensorBase& x) : Node(collect_next_edges({x})) {}
    variable_list apply(variable_list&& grads) override { return {op::_to_copy(grads[0], ScalarType::Float64)}; }
    std::string name() const override { return "ToDoubleBackward"; }
  };
  TensorBase x = leaf({1, 2});
  auto node = std::make_shared<ToDouble>(x);
  run_backward({Edge(node, 0)}, {TensorBase::from_vector<float>({1, 2})}, false);
  CHECK_EQ(grad(x).dtype(), ScalarType::Float32);
  CHECK_EQ(grad(x).to_vector<float>(), (std::vector<float>{1, 2}));
  // A gradient that does not broadcast to the input's shape.
  struct WrongShape : Node {
    explicit WrongShape(const TensorBase& x) : Node(collect_next_edges({x})) {}
    variable_list apply(variable_list&&) override { return {TensorBase::zeros({3})}; }
    std::string name() const override { return "WrongShapeBackward"; }
  };
  auto wrong = std::make_shared<WrongShape>(x);
  CHECK_THROWS(run_backward({Edge(wrong, 0)}, {TensorBase::from_vector<float>({1})}, false),
               "Function WrongShapeBackward returned an invalid gradient at index 0 - got [3] but expected shape "
               "compatible with [2]");
  // A gradient on another device is an error, unless it is 0-d (PyTorch moves those).
  struct OnMeta : Node {
    explicit OnMeta(const TensorBase& x) : Node(collect_next_edges({x})) {}
    variable_list apply(variable_list&&) override { return {TensorBase::empty({2}, DeviceType::Meta)}; }
    std::string name() const override { return "OnMetaBackward"; }
  };
  auto on_meta = std::make_shared<OnMeta>(x);
  CHECK_THROWS(run_backward({Edge(on_meta, 0)}, {TensorBase::from_vector<float>({1})}, false),
               "Function OnMetaBackward returned an invalid gradient at index 0 - expected device cpu but got meta");
}

TEST(autograd_engine_runs_in_reverse_topological_order) {
  std::vector<std::string> order;
  trace = &order;
  TensorBase x = leaf({1});
  TensorBase a = mul_by_const(x, 2, "A");
  TensorBase b = mul_by_const(a, 3, "B");
  TensorBase c = mul_by_const(a, 5, "C");  // a feeds b and c: A runs once, after both
  TensorBase d = add_recorded(b, c);
  backward({d});
  trace = nullptr;
  CHECK_EQ(order, (std::vector<std::string>{"AddBackward0", "C", "B", "A"}));  // later-made first
  CHECK_EQ(grad(x).to_vector<float>(), (std::vector<float>{16}));
}

TEST(autograd_retain_graph_and_second_backward) {
  TensorBase x = leaf({1, 2});
  TensorBase y = sum_all(mul_by_const(x, 3));
  backward({y}, {}, /*retain_graph=*/true);
  backward({y}, {}, /*retain_graph=*/false);
  CHECK_EQ(grad(x).to_vector<float>(), (std::vector<float>{6, 6}));
  CHECK_THROWS(backward({y}), "Trying to backward through the graph a second time");
  CHECK_THROWS(backward({y}), "Specify retain_graph=True");
}

TEST(autograd_saved_variable_modified_in_place) {
  TensorBase x = leaf({1, 2, 3, 4}, {2, 2});
  TensorBase h = mul_by_const(x, 2);
  TensorBase y = mul_by_const(h, 3, "MulBackward0");  // saves h
  TensorBase row = host::select(h, 0, 1);             // a view shares h's version counter
  CHECK_EQ(version(row), version(h));
  bump_version(row);                                  // what an in-place op on the view does
  CHECK_EQ(version(h), 1u);
  CHECK_THROWS(backward({sum_all(y)}),
               "one of the variables needed for gradient computation has been modified by an inplace operation: "
               "[float32 tensor [2, 2]], which is output 0 of MulByConstBackward0, is at version 1; expected "
               "version 0 instead.");
  SavedVariable plain(TensorBase::from_vector<float>({1}), false);
  CHECK_EQ(plain.unpack().to_vector<float>(), (std::vector<float>{1}));
  plain.reset();
  CHECK_THROWS(plain.unpack(), "Trying to backward through the graph a second time");
}

TEST(autograd_saved_output_holds_no_cycle) {
  std::weak_ptr<Node> watch;
  {
    TensorBase x = leaf({1, 2});
    TensorBase y = mul_by_const(x, 2);
    watch = grad_fn(y);
    // A node saving its own output keeps a history-less alias (else output -> node -> output).
    static_cast<MulByConst&>(*grad_fn(y)).saved_x = SavedVariable(y, /*is_output=*/true);
    CHECK(!requires_grad(static_cast<MulByConst&>(*grad_fn(y)).saved_x.unpack()));
  }
  CHECK(watch.expired());
}

TEST(autograd_long_chain_runs_and_frees) {
  const int n = 100000;
  std::weak_ptr<Node> first;
  run_with_stack(size_t{1} << 20, [&] {
    TensorBase x = leaf({1});
    TensorBase y = x;
    for (int i = 0; i < n; ++i) {
      y = mul_by_const(y, 1.0);
      if (i == 0) first = grad_fn(y);
    }
    backward({y});
    CHECK_EQ(grad(x).to_vector<float>(), (std::vector<float>{1}));
    // A retained graph of the same length is destroyed without recursion too.
    TensorBase z = x;
    for (int i = 0; i < n; ++i) z = mul_by_const(z, 1.0);
    backward({z}, {}, /*retain_graph=*/true);
    CHECK_EQ(grad(x).to_vector<float>(), (std::vector<float>{2}));
  });  // the graphs are destroyed on the small stack
  CHECK(first.expired());
}

TEST(autograd_grad_returns_without_accumulating) {
  TensorBase x = leaf({1, 2});
  TensorBase w = leaf({3, 4});
  TensorBase h = mul_by_const(x, 2);
  TensorBase y = sum_all(add_recorded(mul_by_const(h, 3), w));
  variable_list g = op::autograd::grad({y}, {h, x}, {}, /*retain_graph=*/true);
  CHECK_EQ(g[0].to_vector<float>(), (std::vector<float>{3, 3}));
  CHECK_EQ(g[1].to_vector<float>(), (std::vector<float>{6, 6}));
  CHECK(!grad(x).defined() && !grad(w).defined());
  TensorBase unused = leaf({0});
  CHECK_THROWS(op::autograd::grad({y}, {unused}, {}, true), "appears to not have been used in the graph");
  CHECK(!op::autograd::grad({y}, {unused}, {}, true, /*allow_unused=*/true)[0].defined());
  CHECK_THROWS(op::autograd::grad({y}, {TensorBase::from_vector<float>({1})}), "does not require grad");
}

TEST(autograd_backward_misuse_raises) {
  TensorBase x = leaf({1, 2});
  TensorBase y = mul_by_const(x, 2);
  CHECK_THROWS(backward({y}), "grad can be implicitly created only for scalar outputs");
  CHECK_THROWS(backward({y}, {TensorBase::from_vector<float>({1, 1, 1})}), "Mismatch in shape");
  CHECK_THROWS(backward({TensorBase::from_vector<float>({1})}),
               "element 0 of tensors does not require grad and does not have a grad_fn");
  CHECK_THROWS(run_backward({gradient_edge(y)}, {}, false), "1 roots but 0 gradients");
}

TEST(autograd_in_place_on_a_leaf_that_requires_grad_raises) {
  TensorBase x = leaf({1, 2});
  CHECK_THROWS(check_inplace(x), "a leaf Variable that requires grad is being used in an in-place operation.");
  check_inplace(mul_by_const(x, 2));                        // a non-leaf may change in place
  check_inplace(TensorBase::from_vector<float>({1}));       // so may a tensor without grad
  NoGradGuard no_grad;
  check_inplace(x);                                         // and a leaf under no_grad (an SGD step)
}

TEST(autograd_grad_mode_guards_nest) {
  CHECK(GradMode::is_enabled());
  {
    NoGradGuard no_grad;
    CHECK(!GradMode::is_enabled());
    TensorBase x = leaf({1});
    CHECK(!requires_grad(mul_by_const(x, 2)));  // made under no_grad: no history
    {
      EnableGradGuard enable;
      CHECK(GradMode::is_enabled());
      CHECK(requires_grad(mul_by_const(x, 2)));
      {
        NoGradGuard inner;
        CHECK(!GradMode::is_enabled());
      }
      CHECK(GradMode::is_enabled());
    }
    CHECK(!GradMode::is_enabled());
  }
  CHECK(GradMode::is_enabled());
}

TEST(autograd_sequence_numbers_increase) {
  TensorBase x = leaf({1});
  TensorBase a = mul_by_const(x, 1);
  TensorBase b = mul_by_const(a, 1);
  CHECK(grad_fn(b)->sequence_nr() > grad_fn(a)->sequence_nr());
  CHECK_EQ(grad_accumulator(x)->sequence_nr(), UINT64_MAX);
  CHECK(grad_accumulator(x) == grad_fn(a)->next_edge(0).function);  // one accumulator per leaf
  CHECK(grad_accumulator(a) == nullptr);
}
