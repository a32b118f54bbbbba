// Typed kernels called boxed, boxed kernels called typed, and the errors of both.
#include <string>
#include <tuple>
#include <vector>

#include "core/host_ops.h"
#include "dispatch/dispatcher.h"
#include "tests/harness.h"

using namespace op;

namespace {

TensorBase add_cpu(const TensorBase& a, const TensorBase& b, const Scalar& alpha) {
  TensorBase out = TensorBase::empty(a.sizes(), TensorOptions(a.dtype()));
  std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) out.set({static_cast<int64_t>(i)}, x[i] + alpha.to<double>() * y[i]);
  return out;
}

TensorBase& add_inplace_cpu(TensorBase& self, const TensorBase& other, const Scalar& alpha) {
  op::host::copy_(self, add_cpu(self, other, alpha));
  return self;
}

const char* kAdd = "b::add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor";
using AddSig = TensorBase(const TensorBase&, const TensorBase&, const Scalar&);

}  // namespace

TEST(typed_kernel_called_boxed) {
  Dispatcher d;
  auto def = d.def(kAdd);
  auto cpu = d.impl("b::add", DispatchKey::CPU, KernelFunction::make<&add_cpu>(), "add_cpu");
  OperatorHandle op = d.find_op_or_throw("b::add");
  Stack stack{TensorBase::from_vector<float>({1, 2}), TensorBase::from_vector<float>({10, 20}), 2};
  op.call_boxed(stack);
  CHECK_EQ(stack.size(), size_t{1});
  CHECK_EQ(stack[0].to_tensor().to_vector<double>(), (std::vector<double>{21, 42}));
}

TEST(boxed_call_argument_errors_are_clear) {
  Dispatcher d;
  auto def = d.def(kAdd);
  auto cpu = d.impl("b::add", DispatchKey::CPU, KernelFunction::make<&add_cpu>(), "add_cpu");
  OperatorHandle op = d.find_op_or_throw("b::add");
  TensorBase t = TensorBase::zeros({2});
  Stack too_few{t};
  CHECK_THROWS(op.call_boxed(too_few), "b::add takes 3 argument(s) (self, other, alpha) but 1 were given");
  Stack wrong{t, 3, 1};
  CHECK_THROWS(op.call_boxed(wrong), "b::add: argument 'other' (position 1) must be Tensor but got int (3)");
  Stack wrong_scalar{t, t, "x"};
  CHECK_THROWS(op.call_boxed(wrong_scalar), "argument 'alpha' (position 2) must be Scalar but got str ('x')");
  Stack ok{t, t, 1.5};
  op.call_boxed(ok);  // still usable after the errors
  CHECK_EQ(ok.size(), size_t{1});
}

TEST(boxed_kernel_called_typed) {
  Dispatcher d;
  auto def = d.def(kAdd);
  std::vector<std::string> seen;
  auto cpu = d.impl("b::add", DispatchKey::CPU, KernelFunction::from_boxed([&seen](const OperatorHandle& op, DispatchKeySet ks, Stack* stack) {
    seen.push_back(op.name() + " " + to_string(ks.highest()));
    TensorBase a = (*stack)[0].to_tensor(), b = (*stack)[1].to_tensor();
    Scalar alpha = (*stack)[2].to_scalar();
    stack->clear();
    stack->push_back(add_cpu(a, b, alpha));
  }), "boxed_add");
  auto op = d.find_op_or_throw("b::add").typed<AddSig>();
  TensorBase out = op.call(TensorBase::from_vector<double>({1}), TensorBase::from_vector<double>({2}), 3);
  CHECK_EQ(op::host::item<double>(out), 7.0);
  CHECK_EQ(seen, (std::vector<std::string>{"b::add CPU"}));
}

TEST(boxed_kernel_returning_wrong_things_is_an_error) {
  Dispatcher d;
  auto def = d.def(kAdd);
  auto cpu = d.impl("b::add", DispatchKey::CPU, KernelFunction::from_boxed([](const OperatorHandle&, DispatchKeySet, Stack* stack) {
    stack->clear();
    stack->push_back(42);
  }), "liar");
  TensorBase t = TensorBase::zeros({1});
  Stack stack{t, t, 1};
  CHECK_THROWS(d.find_op_or_throw("b::add").call_boxed(stack), "b::add: kernel 'liar' at CPU returned int (42) for result 0 of type Tensor");
  CHECK_THROWS(d.find_op_or_throw("b::add").typed<AddSig>().call(t, t, 1), "argument #0: expected Tensor but got int (42)");
  auto xla_gone = d.impl("b::add", DispatchKey::Meta, KernelFunction::from_boxed([](const OperatorHandle&, DispatchKeySet, Stack* stack) {
    stack->clear();
  }), "silent");
  TensorBase m = TensorBase::empty({1}, DeviceType::Meta);
  CHECK_THROWS(d.find_op_or_throw("b::add").typed<AddSig>().call(m, m, 1), "expected 1 value(s) on the stack but found 0");
}

TEST(inplace_and_out_results_alias_their_arguments_through_boxing) {
  Dispatcher d;
  auto def = d.def("b::add_(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)");
  auto def_out = d.def("b::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
  auto cpu = d.impl("b::add_", DispatchKey::CPU, KernelFunction::make<&add_inplace_cpu>(), "add_");
  // The out= variant only has a boxed kernel; a typed caller still gets a reference to `out`.
  auto out_k = d.impl("b::add.out", DispatchKey::CPU, KernelFunction::from_boxed([](const OperatorHandle&, DispatchKeySet, Stack* stack) {
    TensorBase out = (*stack)[3].to_tensor();
    op::host::copy_(out, add_cpu((*stack)[0].to_tensor(), (*stack)[1].to_tensor(), (*stack)[2].to_scalar()));
    stack->clear();
    stack->push_back(out);
  }), "add_out");
  auto inplace = d.find_op_or_throw("b::add_").typed<TensorBase&(TensorBase&, const TensorBase&, const Scalar&)>();
  auto out_op = d.find_op_or_throw("b::add.out").typed<TensorBase&(const TensorBase&, const TensorBase&, const Scalar&, TensorBase&)>();
  TensorBase a = TensorBase::from_vector<double>({1, 2});
  TensorBase& r = inplace.call(a, TensorBase::from_vector<double>({1, 1}), 1);
  CHECK(&r == &a);
  CHECK_EQ(a.to_vector<double>(), (std::vector<double>{2, 3}));
  TensorBase out = TensorBase::zeros({2}, ScalarType::Float64);
  TensorBase& r2 = out_op.call(a, a, 1, out);
  CHECK(&r2 == &out);
  CHECK_EQ(out.to_vector<double>(), (std::vector<double>{4, 6}));
  // And boxed: the result is the same tensor object as the argument.
  Stack stack{a, a, 1};
  d.find_op_or_throw("b::add_").call_boxed(stack);
  CHECK(stack[0].to_tensor().unsafe_impl() == a.unsafe_impl());
}

TEST(tuple_and_list_results_box_and_unbox) {
  Dispatcher d;
  auto def = d.def("b::split(Tensor self, int n) -> (Tensor[] parts, int count)");
  auto k = d.impl("b::split", DispatchKey::CompositeExplicitAutograd, KernelFunction::from_unboxed([](const TensorBase& self, int64_t n) {
    std::vector<TensorBase> parts;
    for (int64_t i = 0; i < n; ++i) parts.push_back(self);
    return std::make_tuple(parts, n);
  }), "split");
  auto op = d.find_op_or_throw("b::split").typed<std::tuple<std::vector<TensorBase>, int64_t>(const TensorBase&, int64_t)>();
  auto [parts, count] = op.call(TensorBase::zeros({1}), 3);
  CHECK_EQ(parts.size(), size_t{3});
  CHECK_EQ(count, 3);
  Stack stack{TensorBase::zeros({1}), 2};
  d.find_op_or_throw("b::split").call_boxed(stack);
  CHECK_EQ(stack.size(), size_t{2});
  CHECK_EQ(stack[0].to_tensor_list().size(), size_t{2});
  CHECK_EQ(stack[1].to_int(), 2);
}

TEST(every_argument_kind_round_trips_through_boxing) {
  Dispatcher d;
  auto def = d.def(
      "b::all(Tensor a, Tensor? b, Tensor[] c, Tensor?[] d, int e, float f, bool g, str h, Scalar i, int[] j, "
      "float[] k, bool[2] l, ScalarType m, Device n, Layout o, MemoryFormat? p, int? q, str? r) -> str");
  auto fn = [](const TensorBase& a, const std::optional<TensorBase>& b, ArrayRef<TensorBase> c, ArrayRef<std::optional<TensorBase>> d,
               int64_t e, double f, bool g, std::string_view h, const Scalar& i, IntArrayRef j, ArrayRef<double> k,
               const std::vector<bool>& l, ScalarType m, Device n, Layout o, std::optional<MemoryFormat> p,
               std::optional<int64_t> q, std::optional<std::string_view> r) {
    return str(a.numel(), b.has_value(), c.size(), d.size(), e, f, g, h, i.to_string(), j.size(), k.size(), l[1],
               to_string(m), n.str(), static_cast<int>(o), p.has_value(), q.value_or(-1), r.value_or("none"));
  };
  auto k = d.impl("b::all", DispatchKey::CPU, KernelFunction::from_unboxed(fn), "all");
  TensorBase t = TensorBase::zeros({3});
  Stack stack{t, IValue(), std::vector<TensorBase>{t, t}, std::vector<std::optional<TensorBase>>{t, std::nullopt},
              5, 2.5, true, "hi", Scalar(1.5), std::vector<int64_t>{1, 2}, std::vector<double>{0.5},
              std::vector<bool>{false, true}, ScalarType::Int32, Device(DeviceType::Meta), 0, IValue(), 7, IValue()};
  d.find_op_or_throw("b::all").call_boxed(stack);
  std::string expected = "3022" "52.51hi1.5211int32meta00" "7none";
  CHECK_EQ(stack[0].to_str(), expected);
  // The typed path boxes every kind when it meets a boxed kernel.
  Dispatcher d2;
  auto def2 = d2.def("b::all(Tensor a, Tensor? b, Tensor[] c, Tensor?[] d, int e, float f, bool g, str h, Scalar i, int[] j, "
      "float[] k, bool[2] l, ScalarType m, Device n, Layout o, MemoryFormat? p, int? q, str? r) -> str");
  auto boxed = d2.fallback(DispatchKey::CPU, KernelFunction::from_boxed([&d](const OperatorHandle&, DispatchKeySet, Stack* s) {
    d.find_op_or_throw("b::all").call_boxed(*s);  // run the typed kernel registered in d
  }), "relay");
  using AllSig = std::string(const TensorBase&, const std::optional<TensorBase>&, ArrayRef<TensorBase>, ArrayRef<std::optional<TensorBase>>,
                             int64_t, double, bool, std::string_view, const Scalar&, IntArrayRef, ArrayRef<double>,
                             const std::vector<bool>&, ScalarType, Device, Layout, std::optional<MemoryFormat>,
                             std::optional<int64_t>, std::optional<std::string_view>);
  std::string via_boxing = d2.find_op_or_throw("b::all").typed<AllSig>().call(
      t, std::nullopt, {t, t}, {t, std::nullopt}, 5, 2.5, true, "hi", 1.5, {1, 2}, {0.5}, {false, true},
      ScalarType::Int32, Device(DeviceType::Meta), Layout::Strided, std::nullopt, 7, std::nullopt);
  CHECK_EQ(via_boxing, expected);
}

TEST(typed_handles_check_signatures) {
  Dispatcher d;
  auto def = d.def(kAdd);
  auto cpu = d.impl("b::add", DispatchKey::CPU, KernelFunction::make<&add_cpu>(), "add_cpu");
  OperatorHandle op = d.find_op_or_throw("b::add");
  CHECK_THROWS(op.typed<TensorBase(const TensorBase&, const TensorBase&)>(), "takes (Tensor, Tensor) -> Tensor but the schema has (Tensor, Tensor, Scalar) -> Tensor");
  CHECK_THROWS(op.typed<TensorBase(const TensorBase&, const TensorBase&, int64_t)>(), "(Tensor, Tensor, int)");
  // Same kinds, different C++ types: refused at the call instead of calling through a wrong pointer type.
  auto by_value = op.typed<TensorBase(TensorBase, TensorBase, Scalar)>();
  TensorBase t = TensorBase::zeros({1});
  CHECK_THROWS(by_value.call(t, t, 1), "called with C++ signature op::TensorBase (op::TensorBase, op::TensorBase, op::Scalar)");
  CHECK_EQ(op.typed<AddSig>().call(t, t, 1).numel(), 1);
}

TEST(kernels_may_take_the_key_set_and_state) {
  Dispatcher d;
  auto def = d.def("b::probe(Tensor x) -> str");
  int calls = 0;
  auto k = d.impl("b::probe", DispatchKey::CompositeImplicitAutograd,
                  KernelFunction::from_unboxed([&calls](DispatchKeySet ks, const TensorBase&) {
                    ++calls;
                    return ks.to_string();
                  }), "probe");
  auto op = d.find_op_or_throw("b::probe").typed<std::string(const TensorBase&)>();
  // The kernel sees the key set at and below its own key: here it serves AutogradCPU.
  CHECK_EQ(op.call(TensorBase::zeros({1})), "{AutogradCPU, ADInplaceOrView, BackendSelect, CPU}");
  CHECK_EQ(op.call(TensorBase::empty({1}, DeviceType::Meta)), "{Meta}");
  CHECK_EQ(calls, 2);
}

namespace {

// What a kernel returns for a parameter of type P: lists as owned vectors, strings as
// std::string, the rest as it is.
template <class T>
struct Owned {
  using type = T;
  static T get(const T& v) { return v; }
};
template <class T>
struct Owned<ArrayRef<T>> {
  using type = std::vector<T>;
  static type get(ArrayRef<T> v) { return v.vec(); }
};
template <>
struct Owned<std::string_view> {
  using type = std::string;
  static type get(std::string_view v) { return std::string(v); }
};
template <class T>
struct Owned<std::optional<T>> {
  using type = std::optional<typename Owned<T>::type>;
  static type get(const std::optional<T>& v) { return v ? type(Owned<T>::get(*v)) : std::nullopt; }
};

// `b::echo(Tensor t, <type> x) -> <type>` with a typed kernel returning its argument, called
// both ways: boxed (the IValue is unboxed for the kernel and its result boxed back) and typed
// through a boxed relay (the C++ value is boxed, then unboxed for the kernel, and the result
// again). The tensor only selects the CPU kernel.
template <class P>
void check_echo(const std::string& type, const P& value, const IValue& boxed) {
  using O = Owned<std::decay_t<P>>;
  using R = typename O::type;
  const std::string schema = "b::echo(Tensor t, " + type + " x) -> " + type;
  Dispatcher d;
  auto def = d.def(schema);
  std::vector<IValue> seen;
  auto k = d.impl("b::echo", DispatchKey::CPU, KernelFunction::from_unboxed([&seen](const TensorBase&, P x) -> R {
    seen.push_back(boxing::box(x));
    return O::get(x);
  }), "echo");
  TensorBase t = TensorBase::zeros({1});
  Stack stack{t, boxed};
  d.find_op_or_throw("b::echo").call_boxed(stack);
  CHECK_EQ(stack.size(), size_t{1});
  CHECK_EQ(stack[0].repr(), boxed.repr());
  CHECK(stack[0] == boxed);
  Dispatcher relay;
  auto def2 = relay.def(schema);
  auto fallback = relay.fallback(DispatchKey::CPU, KernelFunction::from_boxed([&d](const OperatorHandle&, DispatchKeySet, Stack* s) {
    d.find_op_or_throw("b::echo").call_boxed(*s);
  }), "relay");
  R result = relay.find_op_or_throw("b::echo").typed<R(const TensorBase&, P)>().call(t, value);
  CHECK(boxing::box(result) == boxed);
  CHECK_EQ(seen.size(), size_t{2});
  for (const IValue& v : seen) CHECK(v == boxed);
}

}  // namespace

TEST(pytorchs_types_round_trip_through_boxing) {
  const std::vector<Scalar> scalars{Scalar(1), Scalar(-2.5), Scalar(true)};
  check_echo<ArrayRef<Scalar>>("Scalar[]", scalars, IValue(scalars));
  const std::vector<Dimname> names{Dimname("N"), Dimname::wildcard()};
  check_echo<Dimname>("Dimname", Dimname("C"), IValue(Dimname("C")));
  check_echo<ArrayRef<Dimname>>("Dimname[]", names, IValue(names));
  check_echo<std::optional<ArrayRef<Dimname>>>("Dimname[]?", std::nullopt, IValue());
  TensorBase t = TensorBase::zeros({3});
  check_echo<const Storage&>("Storage", t.storage(), IValue(t.storage()));
  check_echo<Stream>("Stream", Stream(Device(DeviceType::Meta), 2), IValue(Stream(Device(DeviceType::Meta), 2)));
  check_echo<QScheme>("QScheme", QScheme::PerChannelAffine, IValue(1));
  check_echo<int8_t>("DeviceIndex", int8_t{-1}, IValue(-1));
  check_echo<std::optional<ArrayRef<double>>>("float[]?", std::vector<double>{0.5, 2}, IValue(std::vector<double>{0.5, 2}));
  check_echo<std::optional<std::string_view>>("str?", std::string_view("x"), IValue("x"));
  Generator g;
  check_echo<const std::optional<Generator>&>("Generator?", g, IValue(g));
  check_echo<std::optional<Layout>>("Layout?", Layout::Strided, IValue(0));
  check_echo<std::optional<MemoryFormat>>("MemoryFormat?", MemoryFormat::ChannelsLast, IValue(2));
}

TEST(pytorchs_types_unbox_with_clear_errors) {
  Dispatcher d;
  auto def = d.def("b::f(Tensor t, DeviceIndex i, Scalar[] s) -> ()");
  auto k = d.impl("b::f", DispatchKey::CPU, KernelFunction::from_unboxed([](const TensorBase&, int8_t, ArrayRef<Scalar> s) {
    CHECK(s.vec() == (std::vector<Scalar>{Scalar(1), Scalar(2)}));
  }), "f");
  TensorBase t = TensorBase::zeros({1});
  Stack fine{t, 0, std::vector<int64_t>{1, 2}};  // an int list passes as Scalars
  d.find_op_or_throw("b::f").call_boxed(fine);
  Stack wide{t, 300, std::vector<int64_t>{1, 2}};
  CHECK_THROWS(d.find_op_or_throw("b::f").call_boxed(wide), "DeviceIndex (an int in [-128, 127])");
}

TEST(const_tensor_results_are_the_argument_the_boxed_kernel_returned) {
  // resize_ takes self as `const TensorBase&` (PyTorch's inplace_view operators), as does resize.out its out=.
  Dispatcher d;
  auto def = d.def("b::resize.out(Tensor self, int n, *, Tensor(a!) out) -> Tensor(a!)");
  auto k = d.impl("b::resize.out", DispatchKey::CPU, KernelFunction::from_boxed([](const OperatorHandle&, DispatchKeySet, Stack* s) {
    IValue out = (*s)[2];
    s->clear();
    s->push_back(out);
  }), "boxed resize.out");
  auto op = d.find_op_or_throw("b::resize.out").typed<const TensorBase&(const TensorBase&, int64_t, const TensorBase&)>();
  TensorBase self = TensorBase::zeros({1}), out = TensorBase::zeros({2});
  const TensorBase& r = op.call(self, 3, out);
  CHECK(&r == &out);
  const TensorBase& same = op.call(out, 3, out);  // several arguments are the result: the first
  CHECK(same.unsafe_impl() == out.unsafe_impl());
  Dispatcher bad;
  auto def_bad = bad.def("b::resize.out(Tensor self, int n, *, Tensor(a!) out) -> Tensor(a!)");
  auto k_bad = bad.impl("b::resize.out", DispatchKey::CPU, KernelFunction::from_boxed([](const OperatorHandle&, DispatchKeySet, Stack* s) {
    s->clear();
    s->push_back(TensorBase::zeros({1}));
  }), "boxed resize.out");
  CHECK_THROWS((bad.find_op_or_throw("b::resize.out").typed<const TensorBase&(const TensorBase&, int64_t, const TensorBase&)>().call(self, 3, out)),
               "one of the operator's Tensor arguments");
}
