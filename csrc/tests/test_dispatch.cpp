// Dispatch semantics: which kernel runs for which key set.
#include <string>
#include <vector>

#include "core/host_ops.h"
#include "dispatch/backend_select.h"
#include "dispatch/dispatcher.h"
#include "tests/harness.h"

using namespace op;

namespace {

// Each kernel tags its result with a marker so a test can see which one ran.
TensorBase marked(double marker) { return TensorBase::full({1}, marker, ScalarType::Float64); }
double marker_of(const TensorBase& t) { return op::host::item<double>(t); }

TensorBase k_cpu(const TensorBase&) { return marked(1); }
TensorBase k_xla(const TensorBase&) { return marked(2); }
TensorBase k_meta(const TensorBase&) { return marked(3); }
TensorBase k_implicit(const TensorBase&) { return marked(10); }
TensorBase k_explicit(const TensorBase&) { return marked(20); }

// An autograd kernel: does its work, then continues below its own key.
TensorBase k_autograd(DispatchKeySet ks, const TensorBase& x) {
  static auto self = Dispatcher::singleton().find_op_or_throw("dtest::unary").typed<TensorBase(const TensorBase&)>();
  TensorBase below = self.redispatch(ks.without_highest(), x);
  return marked(100 + marker_of(below));
}

TensorBase cpu_tensor() { return TensorBase::zeros({1}); }
TensorBase xla_tensor() { return TensorBase::zeros({1}, Device(register_device_type("xla", DispatchKey::XLA))); }
TensorBase meta_tensor() { return TensorBase::empty({1}, DeviceType::Meta); }

struct Unary {
  Dispatcher& d;
  TypedOperatorHandle<TensorBase(const TensorBase&)> op;
  double run(const TensorBase& x) const { return marker_of(op.call(x)); }
};

}  // namespace

TEST(direct_kernel_beats_alias) {
  Dispatcher d;
  auto def = d.def("t::f(Tensor x) -> Tensor");
  auto cpu = d.impl("t::f", DispatchKey::CPU, KernelFunction::make<&k_cpu>(), "cpu");
  auto ci = d.impl("t::f", DispatchKey::CompositeImplicitAutograd, KernelFunction::make<&k_implicit>(), "implicit");
  auto op = d.find_op_or_throw("t::f").typed<TensorBase(const TensorBase&)>();
  CHECK_EQ(marker_of(op.call(cpu_tensor())), 1.0);
  CHECK_EQ(marker_of(op.call(xla_tensor())), 10.0);  // the composite serves XLA and AutogradXLA
  CHECK_EQ(d.dump_table("t::f"), (std::vector<std::pair<std::string, std::string>>{
                                      {"AutogradCUDA", "implicit"},
                                      {"AutogradLazy", "implicit"},
                                      {"AutogradPrivateUse1", "implicit"},
                                      {"AutogradXLA", "implicit"},
                                      {"CPU", "cpu"},
                                      {"CUDA", "implicit"},
                                      {"Lazy", "implicit"},
                                      {"Meta", "implicit"},
                                      {"PrivateUse1", "implicit"},
                                      {"XLA", "implicit"},
                                  }));
  // AutogradCPU is absent: the composite would shadow the CPU kernel there, so it passes through.
}

TEST(composite_explicit_serves_backends_only) {
  Dispatcher d;
  auto def = d.def("t::f(Tensor x) -> Tensor");
  auto ce = d.impl("t::f", DispatchKey::CompositeExplicitAutograd, KernelFunction::make<&k_explicit>(), "explicit");
  auto op = d.find_op_or_throw("t::f").typed<TensorBase(const TensorBase&)>();
  CHECK_EQ(marker_of(op.call(cpu_tensor())), 20.0);
  CHECK_EQ(marker_of(op.call(meta_tensor())), 20.0);
  for (const auto& [key, label] : d.dump_table("t::f")) CHECK(is_backend_key(parse_dispatch_key(key)));
  CHECK_EQ(d.dump_table("t::f").size(), size_t{6});
}

TEST(composite_non_functional_serves_backends_that_do_not_functionalize) {
  Dispatcher d;
  auto def = d.def("t::f(Tensor x) -> Tensor");
  auto nf = d.impl("t::f", DispatchKey::CompositeExplicitAutogradNonFunctional, KernelFunction::make<&k_cpu>(),
                   "non_functional");
  auto op = d.find_op_or_throw("t::f").typed<TensorBase(const TensorBase&)>();
  CHECK_EQ(marker_of(op.call(cpu_tensor())), 1.0);
  CHECK_EQ(marker_of(op.call(meta_tensor())), 1.0);
  CHECK_THROWS(op.call(xla_tensor()), "XLA");  // XLA and Lazy run under functionalization: no kernel there
  CHECK_EQ(d.dump_table("t::f"), (std::vector<std::pair<std::string, std::string>>{
                                      {"CPU", "non_functional"},
                                      {"CUDA", "non_functional"},
                                      {"Meta", "non_functional"},
                                      {"PrivateUse1", "non_functional"},
                                  }));
  CHECK(d.dump("t::f").find("CPU: non_functional [CompositeExplicitAutogradNonFunctional]") != std::string::npos);
  {
    // Beside CompositeExplicitAutograd, each serves its own backends; a direct kernel beats both;
    // and the implicit composite steps back from every autograd key.
    auto ce = d.impl("t::f", DispatchKey::CompositeExplicitAutograd, KernelFunction::make<&k_explicit>(), "explicit");
    auto meta = d.impl("t::f", DispatchKey::Meta, KernelFunction::make<&k_meta>(), "meta");
    auto ci = d.impl("t::f", DispatchKey::CompositeImplicitAutograd, KernelFunction::make<&k_implicit>(), "implicit");
    CHECK_EQ(marker_of(op.call(xla_tensor())), 20.0);
    CHECK_EQ(marker_of(op.call(meta_tensor())), 3.0);
    CHECK_EQ(d.dump_table("t::f"), (std::vector<std::pair<std::string, std::string>>{
                                        {"CPU", "non_functional"},
                                        {"CUDA", "non_functional"},
                                        {"Lazy", "explicit"},
                                        {"Meta", "meta"},
                                        {"PrivateUse1", "non_functional"},
                                        {"XLA", "explicit"},
                                    }));
    d.check_invariants("t::f");
  }
  CHECK_EQ(parse_dispatch_key("CompositeExplicitAutogradNonFunctional"), DispatchKey::CompositeExplicitAutogradNonFunctional);
  CHECK(is_alias_key(DispatchKey::CompositeExplicitAutogradNonFunctional));
}

TEST(composite_implicit_fills_autograd_only_without_backend_kernels) {
  Dispatcher d;
  auto def = d.def("t::f(Tensor x) -> Tensor");
  auto ci = d.impl("t::f", DispatchKey::CompositeImplicitAutograd, KernelFunction::make<&k_implicit>(), "implicit");
  auto table = d.dump_table("t::f");
  CHECK_EQ(table.size(), size_t{12});  // 6 backends + Functionalize + 5 autograd keys
  {
    auto ce = d.impl("t::f", DispatchKey::CompositeExplicitAutograd, KernelFunction::make<&k_explicit>(), "explicit");
    // The explicit composite takes the backends, and the implicit one steps back from autograd.
    for (const auto& [key, label] : d.dump_table("t::f")) CHECK_EQ(label, "explicit");
  }
  CHECK_EQ(d.dump_table("t::f"), table);
}

TEST(autograd_alias_serves_autograd_keys_and_redispatches) {
  Dispatcher& d = Dispatcher::singleton();
  auto def = d.def("dtest::unary(Tensor x) -> Tensor");
  auto cpu = d.impl("dtest::unary", DispatchKey::CPU, KernelFunction::make<&k_cpu>(), "cpu");
  auto xla = d.impl("dtest::unary", DispatchKey::XLA, KernelFunction::make<&k_xla>(), "xla");
  auto ag = d.impl("dtest::unary", DispatchKey::Autograd, KernelFunction::make<&k_autograd>(), "autograd");
  auto op = d.find_op_or_throw("dtest::unary").typed<TensorBase(const TensorBase&)>();
  CHECK_EQ(marker_of(op.call(cpu_tensor())), 101.0);
  CHECK_EQ(marker_of(op.call(xla_tensor())), 102.0);
  CHECK_THROWS(op.call(meta_tensor()), "with dispatch key Meta");  // Meta has no autograd key and no kernel
  // Redispatch from outside: start below AutogradCPU.
  DispatchKeySet ks = compute_dispatch_key_set(cpu_tensor().key_set());
  CHECK_EQ(marker_of(op.redispatch(ks.below(DispatchKey::AutogradCPU), cpu_tensor())), 1.0);
  {
    ExcludeKeyGuard no_autograd(runtime_keys_of(DispatchKey::Autograd));
    CHECK_EQ(marker_of(op.call(cpu_tensor())), 1.0);
    {
      ExcludeKeyGuard again(DispatchKey::AutogradCPU);  // nested, overlapping: restores only its own
    }
    CHECK_EQ(marker_of(op.call(cpu_tensor())), 1.0);
  }
  CHECK_EQ(marker_of(op.call(cpu_tensor())), 101.0);  // the guard restored the exclude set
  CHECK(tls_local_dispatch_key_set.excluded.empty());
}

TEST(include_guard_adds_keys) {
  Dispatcher d;
  auto def = d.def("t::f(Tensor x) -> Tensor");
  auto cpu = d.impl("t::f", DispatchKey::CPU, KernelFunction::make<&k_cpu>(), "cpu");
  auto xla = d.impl("t::f", DispatchKey::XLA, KernelFunction::make<&k_xla>(), "xla");
  auto op = d.find_op_or_throw("t::f").typed<TensorBase(const TensorBase&)>();
  {
    IncludeKeyGuard use_xla(DispatchKey::XLA);
    CHECK_EQ(marker_of(op.call(cpu_tensor())), 2.0);
    {
      IncludeKeyGuard again(DispatchKey::XLA);
    }
    CHECK(tls_local_dispatch_key_set.included.has(DispatchKey::XLA));
    ExcludeKeyGuard but_not(DispatchKey::XLA);  // exclude wins over include
    CHECK_EQ(marker_of(op.call(cpu_tensor())), 1.0);
  }
  CHECK(tls_local_dispatch_key_set.included.empty());
}

TEST(highest_key_of_all_tensor_arguments_wins) {
  Dispatcher d;
  auto def = d.def("t::g(Tensor a, Tensor? b, Tensor[] c) -> Tensor");
  auto cpu = d.impl("t::g", DispatchKey::CPU,
                    KernelFunction::from_unboxed([](const TensorBase&, const std::optional<TensorBase>&, ArrayRef<TensorBase>) { return marked(1); }), "cpu");
  auto meta = d.impl("t::g", DispatchKey::Meta,
                     KernelFunction::from_unboxed([](const TensorBase&, const std::optional<TensorBase>&, ArrayRef<TensorBase>) { return marked(3); }), "meta");
  auto op = d.find_op_or_throw("t::g").typed<TensorBase(const TensorBase&, const std::optional<TensorBase>&, ArrayRef<TensorBase>)>();
  TensorBase c = cpu_tensor(), m = meta_tensor();
  CHECK_EQ(marker_of(op.call(c, std::nullopt, {})), 1.0);
  CHECK_EQ(marker_of(op.call(c, m, {})), 3.0);
  CHECK_EQ(marker_of(op.call(c, std::nullopt, {c, m})), 3.0);
  Stack stack{c, IValue(), std::vector<TensorBase>{m}};
  d.find_op_or_throw("t::g").call_boxed(stack);
  CHECK_EQ(marker_of(stack[0].to_tensor()), 3.0);
}

TEST(fallthrough_skips_to_next_key) {
  Dispatcher d;
  auto def = d.def("t::f(Tensor x) -> Tensor");
  auto cpu = d.impl("t::f", DispatchKey::CPU, KernelFunction::make<&k_cpu>(), "cpu");
  auto ag = d.impl("t::f", DispatchKey::Autograd, KernelFunction::from_unboxed([](const TensorBase&) { return marked(7); }), "ag");
  auto op = d.find_op_or_throw("t::f").typed<TensorBase(const TensorBase&)>();
  CHECK_EQ(marker_of(op.call(cpu_tensor())), 7.0);
  {
    auto ft = d.impl("t::f", DispatchKey::AutogradCPU, KernelFunction::fallthrough());
    CHECK_EQ(marker_of(op.call(cpu_tensor())), 1.0);  // per-operator fallthrough beats the alias
    bool found = false;
    for (const auto& [key, label] : d.dump_table("t::f"))
      if (key == "AutogradCPU") found = label == "fallthrough";
    CHECK(found);
  }
  {
    // A key-wide fallthrough only covers operators with no kernel of their own there.
    auto fb = d.fallback(DispatchKey::AutogradCPU, KernelFunction::fallthrough());
    CHECK_EQ(marker_of(op.call(cpu_tensor())), 7.0);
  }
  auto fb = d.fallback(DispatchKey::XLA, KernelFunction::fallthrough(), "xla-passes");
  // Falling through XLA leaves nothing below: a clear error, not a crash.
  CHECK_THROWS(d.find_op_or_throw("t::f").typed<TensorBase(const TensorBase&)>().redispatch(DispatchKeySet(DispatchKey::XLA), xla_tensor()),
               "no dispatch key selects a kernel");
}

TEST(backend_fallback_runs_any_operator_boxed) {
  Dispatcher d;
  auto def1 = d.def("t::f(Tensor x) -> Tensor");
  auto def2 = d.def("t::h(Tensor x, Scalar s, int[] dims) -> (Tensor, Tensor)");
  auto cpu1 = d.impl("t::f", DispatchKey::CPU, KernelFunction::make<&k_cpu>(), "cpu");
  auto cpu2 = d.impl("t::h", DispatchKey::CPU,
                     KernelFunction::from_unboxed([](const TensorBase& x, const Scalar& s, IntArrayRef dims) {
                       return std::make_tuple(marked(s.to<double>()), marked(static_cast<double>(dims.size())));
                     }), "cpu");
  // An XLA fallback that moves XLA arguments to CPU and runs the CPU kernel, counting calls.
  int calls = 0;
  auto fb = d.fallback(DispatchKey::XLA, KernelFunction::from_boxed([&calls](const OperatorHandle& op, DispatchKeySet, Stack* stack) {
    ++calls;
    for (IValue& v : *stack)
      if (v.is_tensor()) v = op::host::to(v.to_tensor(), Device(DeviceType::CPU));
    op.redispatch_boxed(DispatchKeySet(DispatchKey::CPU), *stack);
  }), "xla->cpu");
  auto f = d.find_op_or_throw("t::f").typed<TensorBase(const TensorBase&)>();
  auto h = d.find_op_or_throw("t::h").typed<std::tuple<TensorBase, TensorBase>(const TensorBase&, const Scalar&, IntArrayRef)>();
  CHECK_EQ(marker_of(f.call(xla_tensor())), 1.0);
  auto [a, b] = h.call(xla_tensor(), 4, {1, 2, 3});
  CHECK_EQ(marker_of(a), 4.0);
  CHECK_EQ(marker_of(b), 3.0);
  CHECK_EQ(calls, 2);
  // A direct kernel beats the fallback.
  auto xla = d.impl("t::f", DispatchKey::XLA, KernelFunction::make<&k_xla>(), "xla");
  CHECK_EQ(marker_of(f.call(xla_tensor())), 2.0);
  CHECK_EQ(calls, 2);
  CHECK_THROWS(d.fallback(DispatchKey::Meta, KernelFunction::make<&k_cpu>()), "must be boxed");
  CHECK_THROWS(d.fallback(DispatchKey::Autograd, KernelFunction::fallthrough()), "runtime keys");
}

namespace {

// empty(int[] size, *, ScalarType? dtype=None, Device? device=None): a factory function.
using EmptySig = TensorBase(IntArrayRef, std::optional<ScalarType>, std::optional<Device>);

TensorBase empty_cpu(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> device) {
  return TensorBase::empty(size, TensorOptions(dtype.value_or(ScalarType::Float32)).with_device(device.value_or(Device())));
}

}  // namespace

TEST(backend_select_picks_the_backend_of_a_factory) {
  Dispatcher d;
  auto def = d.def("t::empty(int[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor");
  std::vector<std::string> ran;
  auto cpu = d.impl("t::empty", DispatchKey::CPU, KernelFunction::from_unboxed([&ran](IntArrayRef s, std::optional<ScalarType> t, std::optional<Device> dev) {
    ran.push_back("cpu");
    return empty_cpu(s, t, dev);
  }), "cpu");
  auto meta = d.impl("t::empty", DispatchKey::Meta, KernelFunction::from_unboxed([&ran](IntArrayRef s, std::optional<ScalarType> t, std::optional<Device> dev) {
    ran.push_back("meta");
    return empty_cpu(s, t, dev);
  }), "meta");
  auto op = d.find_op_or_throw("t::empty").typed<EmptySig>();
  // Without a BackendSelect kernel nothing picks a backend: no tensor arguments.
  CHECK_THROWS(op.call({2}, std::nullopt, std::nullopt), "no dispatch key selects a kernel");
  auto bs = d.impl("t::empty", DispatchKey::BackendSelect,
                   KernelFunction::from_unboxed([&op](DispatchKeySet ks, IntArrayRef s, std::optional<ScalarType> t, std::optional<Device> dev) {
                     DispatchKey backend = backend_key_of(dev.value_or(Device()).type());
                     return op.redispatch(ks.without_highest().add(backend), s, t, dev);
                   }), "backend_select");
  TensorBase a = op.call({2, 3}, ScalarType::Int32, std::nullopt);
  TensorBase b = op.call({4}, std::nullopt, Device(DeviceType::Meta));
  CHECK_EQ(ran, (std::vector<std::string>{"cpu", "meta"}));
  CHECK(a.sizes() == IntArrayRef({2, 3}));
  CHECK_EQ(a.dtype(), ScalarType::Int32);
  CHECK(b.is_meta());
  // Boxed calls take the same route.
  Stack stack{std::vector<int64_t>{5}, IValue(), IValue(Device(DeviceType::Meta))};
  d.find_op_or_throw("t::empty").call_boxed(stack);
  CHECK(stack[0].to_tensor().is_meta());
  CHECK_EQ(ran.back(), "meta");
}

TEST(backend_select_key_set_joins_the_device_and_tensor_arguments) {
  using impl::backend_key_set;
  using impl::key_set_of;
  const DispatchKeySet cpu(DispatchKey::CPU), xla(DispatchKey::XLA), meta(DispatchKey::Meta);
  CHECK_EQ(backend_key_set(std::nullopt), cpu);  // no device: cpu
  CHECK_EQ(backend_key_set(Device(DeviceType::Meta)), meta);
  // _to_copy(xla_tensor): cpu (the default device) and xla; the highest, xla, runs.
  DispatchKeySet to_copy = backend_key_set(std::nullopt, key_set_of(xla_tensor()));
  CHECK_EQ(to_copy, cpu | xla);
  CHECK_EQ(to_copy.highest(), DispatchKey::XLA);
  // Only keys below BackendSelect: a tensor's autograd keys never reach the backend choice.
  CHECK(!backend_key_set(Device(DeviceType::CPU), key_set_of(cpu_tensor())).has(DispatchKey::AutogradCPU));
  // Optional and list arguments: absent tensors add nothing.
  CHECK_EQ(key_set_of(std::optional<TensorBase>()), DispatchKeySet());
  std::vector<TensorBase> list{cpu_tensor(), meta_tensor()};
  CHECK_EQ(backend_key_set(std::nullopt, key_set_of(ArrayRef<TensorBase>(list))).highest(), DispatchKey::Meta);
  std::vector<std::optional<TensorBase>> optionals{std::nullopt, xla_tensor()};
  CHECK_EQ(key_set_of(ArrayRef<std::optional<TensorBase>>(optionals)).highest(), DispatchKey::AutogradXLA);
  {
    ExcludeKeyGuard no_xla(DispatchKey::XLA);  // thread-local excludes still apply
    CHECK_EQ(backend_key_set(std::nullopt, key_set_of(xla_tensor())), cpu);
  }
}

TEST(missing_kernel_error_names_operator_key_and_available_keys) {
  Dispatcher d;
  auto def = d.def("t::f(Tensor x) -> Tensor");
  auto xla = d.impl("t::f", DispatchKey::XLA, KernelFunction::make<&k_xla>(), "xla");
  auto meta = d.impl("t::f", DispatchKey::Meta, KernelFunction::make<&k_meta>(), "meta");
  auto op = d.find_op_or_throw("t::f").typed<TensorBase(const TensorBase&)>();
  CHECK_THROWS(op.call(cpu_tensor()), "could not run t::f with dispatch key CPU");
  CHECK_THROWS(op.call(cpu_tensor()), "t::f has kernels for: Meta, XLA");
  CHECK_THROWS(op.call(cpu_tensor()), "Key set of the call: {AutogradCPU, ADInplaceOrView, BackendSelect, CPU}");
  Stack stack{cpu_tensor()};
  CHECK_THROWS(d.find_op_or_throw("t::f").call_boxed(stack), "with dispatch key CPU");
  Dispatcher empty;
  auto def2 = empty.def("t::g(Tensor x) -> Tensor");
  CHECK_THROWS(empty.find_op_or_throw("t::g").typed<TensorBase(const TensorBase&)>().call(cpu_tensor()), "t::g has no kernels registered");
  CHECK_THROWS(empty.find_op_or_throw("t::nope"), "unknown operator t::nope");
}

int64_t k_sum_implicit(int64_t a, int64_t b) { return a + b; }
int64_t k_sum_explicit(int64_t a, int64_t b) { return 1000 + a + b; }

TEST(a_call_without_a_dispatch_key_runs_the_composite_kernel) {
  // No tensor and no options: the call's key set is empty, its key Undefined (promote_types, can_cast).
  Dispatcher d;
  auto def = d.def("t::sum2(int a, int b) -> int");
  auto op = d.find_op_or_throw("t::sum2").typed<int64_t(int64_t, int64_t)>();
  CHECK_THROWS(op.call(2, 3), "no dispatch key selects a kernel");
  {
    auto implicit = d.impl("t::sum2", DispatchKey::CompositeImplicitAutograd, KernelFunction::make<&k_sum_implicit>(), "implicit");
    CHECK_EQ(op.call(2, 3), 5);
    Stack stack{int64_t{2}, int64_t{3}};
    d.find_op_or_throw("t::sum2").call_boxed(stack);
    CHECK_EQ(stack.at(0).to_int(), 5);
    // An explicit composite is preferred, as at the backend keys.
    auto explicit_ = d.impl("t::sum2", DispatchKey::CompositeExplicitAutograd, KernelFunction::make<&k_sum_explicit>(), "explicit");
    CHECK_EQ(op.call(2, 3), 1005);
    d.check_invariants("t::sum2");
  }
  // Both released: nothing runs again.
  CHECK_THROWS(op.call(2, 3), "no dispatch key selects a kernel");
  d.check_invariants("t::sum2");
}
