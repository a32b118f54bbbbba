// Registration: handles undo exactly their registration; conflicts throw and change nothing;
// libraries group registrations; static registration runs at load time.
#include <string>

#include "dispatch/registration.h"
#include "tests/harness.h"

using namespace op;

namespace {

TensorBase id(const TensorBase& x) { return x; }
TensorBase other_id(const TensorBase& x) { return x; }
int64_t wrong_sig(const TensorBase&, int64_t n) { return n; }

struct Snapshot {
  std::string dump;
  std::vector<std::pair<std::string, std::string>> table;
  bool operator==(const Snapshot& o) const { return dump == o.dump && table == o.table; }
};
Snapshot snap(const Dispatcher& d, const std::string& op) { return {d.dump(op), d.dump_table(op)}; }

}  // namespace

// Registered at static initialisation, as generated per-operator files do.
OP_LIBRARY(regtest, m) {
  m.def("static_op(Tensor x) -> Tensor");
  m.impl("static_op", DispatchKey::CPU, KernelFunction::make<&id>(), "static_cpu");
}
OP_LIBRARY_IMPL(regtest, Meta, m) { m.impl("static_op", KernelFunction::make<&id>(), "static_meta"); }

TEST(static_registration_happened) {
  CHECK(static_registration_errors().empty());
  auto op = Dispatcher::singleton().find_op_or_throw("regtest::static_op").typed<TensorBase(const TensorBase&)>();
  TensorBase t = TensorBase::zeros({1});
  CHECK(op.call(t).is_alias_of(t));
  auto table = Dispatcher::singleton().dump_table("regtest::static_op");
  // The singleton also has functionalization's fallback (functionalization/functionalization.cpp).
  CHECK_EQ(table, (std::vector<std::pair<std::string, std::string>>{
                      {"CPU", "static_cpu"}, {"Functionalize", "functionalize fallback"}, {"Meta", "static_meta"}}));
}

TEST(impl_before_def_and_handles_undo_exactly) {
  Dispatcher d;
  Snapshot empty = snap(d, "r::f");
  RegistrationHandle cpu = d.impl("r::f", DispatchKey::CPU, KernelFunction::make<&id>(), "cpu");
  CHECK(!d.find_op("r::f").has_value());  // no def yet: not callable
  CHECK_THROWS(d.find_op_or_throw("r::f"), "has kernels but no definition");
  RegistrationHandle def = d.def("r::f(Tensor x) -> Tensor");
  CHECK(d.find_op("r::f").has_value());
  Snapshot both = snap(d, "r::f");
  RegistrationHandle meta = d.impl("r::f", DispatchKey::Meta, KernelFunction::make<&id>(), "meta");
  meta.release();
  CHECK(snap(d, "r::f") == both);
  meta.release();  // twice: nothing
  CHECK(snap(d, "r::f") == both);
  def.release();
  cpu.release();
  CHECK(snap(d, "r::f") == empty);
  d.check_invariants("r::f");
}

TEST(conflicting_registrations_throw_and_change_nothing) {
  Dispatcher d;
  auto def = d.def("r::f(Tensor x) -> Tensor", "first def");
  auto cpu = d.impl("r::f", DispatchKey::CPU, KernelFunction::make<&id>(), "cpu");
  auto fb = d.fallback(DispatchKey::XLA, KernelFunction::fallthrough(), "xla-ft");
  Snapshot before = snap(d, "r::f");
  CHECK_THROWS(d.def("r::f(Tensor x, int n) -> Tensor", "second def"),
               "conflicting definitions of r::f: 'r::f(Tensor x, int n) -> Tensor' (second def) vs 'r::f(Tensor x) -> Tensor' (first def)");
  CHECK_THROWS(d.def("r::f(Tensor x) -> Tensor"), "already defined (by 'first def')");
  CHECK_THROWS(d.impl("r::f", DispatchKey::CPU, KernelFunction::make<&other_id>(), "cpu2"),
               "r::f already has a kernel for CPU ('cpu'); cannot register 'cpu2' there too");
  CHECK_THROWS(d.impl("r::f", DispatchKey::Meta, KernelFunction::make<&wrong_sig>(), "bad"),
               "kernel 'bad' for r::f at Meta does not match: the schema 'r::f(Tensor x) -> Tensor' takes (Tensor) -> Tensor");
  CHECK_THROWS(d.impl("r::f(Tensor y) -> Tensor", DispatchKey::Meta, KernelFunction::make<&id>(), "named"),
               "declares schema 'r::f(Tensor y) -> Tensor' but the operator is defined as 'r::f(Tensor x) -> Tensor'");
  CHECK_THROWS(d.fallback(DispatchKey::XLA, KernelFunction::fallthrough(), "again"), "a fallback for XLA is already registered ('xla-ft')");
  CHECK_THROWS(d.impl("r::f", DispatchKey::Undefined, KernelFunction::make<&id>()), "cannot register a kernel at dispatch key Undefined");
  CHECK_THROWS(d.impl("r::f", DispatchKey::CPU, KernelFunction()), "the kernel is empty");
  CHECK_THROWS(d.impl("f", DispatchKey::CPU, KernelFunction::make<&id>()), "needs a namespace");
  CHECK_THROWS(d.def("r::g(Tensor x -> Tensor"), "must look like");
  CHECK(snap(d, "r::f") == before);
  d.check_invariants("r::f");
  // Unwedged: registrations go through once what they conflicted with is gone.
  cpu.release();
  auto cpu2 = d.impl("r::f", DispatchKey::CPU, KernelFunction::make<&other_id>(), "cpu2");
  def.release();
  CHECK_THROWS(d.def("r::f(Tensor x, int n) -> Tensor"), "conflicts with kernel 'cpu2' at CPU");
  auto def2 = d.def("r::f(Tensor x) -> Tensor");
  TensorBase t = TensorBase::zeros({1});
  CHECK(d.find_op_or_throw("r::f").typed<TensorBase(const TensorBase&)>().call(t).is_alias_of(t));
  d.check_invariants("r::f");
}

TEST(conflicts_are_symmetric) {
  // A kernel whose signature does not fit the def is refused whichever comes second.
  {
    Dispatcher d;
    auto k = d.impl("r::f", DispatchKey::CPU, KernelFunction::make<&wrong_sig>(), "k");
    CHECK_THROWS(d.def("r::f(Tensor x) -> Tensor"), "conflicts with kernel 'k' at CPU");
    CHECK(!d.find_op("r::f").has_value());
  }
  {
    Dispatcher d;
    auto a = d.impl("r::f(Tensor x) -> Tensor", DispatchKey::CPU, KernelFunction::make<&id>(), "a");
    CHECK_THROWS(d.impl("r::f(Tensor y) -> Tensor", DispatchKey::Meta, KernelFunction::make<&id>(), "b"), "but kernel 'a' at CPU declares");
    CHECK_THROWS(d.def("r::f(Tensor y) -> Tensor"), "conflicts with the schema 'r::f(Tensor x) -> Tensor' given by kernel 'a' at CPU");
    auto def = d.def("r::f(Tensor x) -> Tensor");
    d.check_invariants("r::f");
  }
  {
    Dispatcher d;
    auto a = d.impl("r::f", DispatchKey::CPU, KernelFunction::make<&id>(), "a");
    CHECK_THROWS(d.impl("r::f", DispatchKey::Meta, KernelFunction::from_unboxed([](TensorBase x) { return x; }), "b"),
                 "all typed kernels of an operator share one signature");
  }
}

TEST(handles_outliving_their_dispatcher_are_harmless) {
  RegistrationHandle h;
  {
    Dispatcher d;
    h = d.def("r::f(Tensor x) -> Tensor");
  }
  h.release();
  CHECK(!h.active());
}

TEST(libraries_group_and_undo_registrations) {
  Dispatcher d;
  {
    Library lib(Library::DEF, "lib", std::nullopt, "", 0, &d);
    lib.def("f(Tensor x) -> Tensor").impl("f", DispatchKey::CPU, KernelFunction::make<&id>(), "f_cpu");
    lib.def("g(Tensor x) -> Tensor", KernelFunction::make<&id>(), "g_composite");
    CHECK_THROWS(Library(Library::DEF, "lib", std::nullopt, "", 0, &d), "namespace 'lib' is already defined by another DEF library");
    Library frag(Library::FRAGMENT, "lib", std::nullopt, "", 0, &d);
    frag.def("h(Tensor x) -> Tensor");
    CHECK_THROWS(frag.def("other::h(Tensor x) -> Tensor"), "outside the library's namespace 'lib'");
    Library impl(Library::IMPL, "lib", DispatchKey::Meta, "", 0, &d);
    impl.impl("f", KernelFunction::make<&id>(), "f_meta");
    CHECK_THROWS(impl.impl("f", DispatchKey::XLA, KernelFunction::make<&id>()), "this library registers at Meta, not XLA");
    CHECK_THROWS(impl.def("k(Tensor x) -> Tensor"), "an IMPL library cannot define operators");
    CHECK_EQ(d.op_names(), (std::vector<std::string>{"lib::f", "lib::g", "lib::h"}));
    CHECK_EQ(d.dump_table("lib::g").size(), size_t{12});
    CHECK_EQ(d.find_overloads("lib::f").size(), size_t{1});
    frag.close();
    CHECK_EQ(d.op_names(), (std::vector<std::string>{"lib::f", "lib::g"}));
    CHECK_EQ(impl.num_registrations(), size_t{1});
  }
  CHECK(d.op_names().empty());
  CHECK_EQ(d.dump_table("lib::f").size(), size_t{0});
  Library again(Library::DEF, "lib", std::nullopt, "", 0, &d);  // the namespace is free again
}

TEST(dump_is_readable_and_sorted) {
  Dispatcher d;
  auto def = d.def("r::f(Tensor x) -> Tensor", "defs.cpp:1");
  auto meta = d.impl("r::f", DispatchKey::Meta, KernelFunction::make<&id>(), "meta_k");
  auto ci = d.impl("r::f", DispatchKey::CompositeImplicitAutograd, KernelFunction::from_boxed([](const OperatorHandle&, DispatchKeySet, Stack*) {}), "ci");
  auto ft = d.impl("r::f", DispatchKey::AutogradXLA, KernelFunction::fallthrough());
  auto fb = d.fallback(DispatchKey::CUDA, KernelFunction::fallthrough(), "cuda_ft");
  std::string expected =
      "r::f\n"
      "schema: r::f(Tensor x) -> Tensor [defs.cpp:1]\n"
      "kernels:\n"
      "  AutogradXLA: fallthrough [fallthrough]\n"
      "  CompositeImplicitAutograd: ci [boxed]\n"
      "  Meta: meta_k [unboxed+boxed]\n"
      "fallbacks:\n"
      "  CUDA: cuda_ft [fallthrough]\n"
      "table:\n"
      "  AutogradCPU: ci [CompositeImplicitAutograd]\n"
      "  AutogradCUDA: ci [CompositeImplicitAutograd]\n"
      "  AutogradLazy: ci [CompositeImplicitAutograd]\n"
      "  AutogradPrivateUse1: ci [CompositeImplicitAutograd]\n"
      "  AutogradXLA: fallthrough [direct, fallthrough]\n"
      "  CPU: ci [CompositeImplicitAutograd]\n"
      "  CUDA: ci [CompositeImplicitAutograd]\n"
      "  Lazy: ci [CompositeImplicitAutograd]\n"
      "  Meta: meta_k [direct]\n"
      "  PrivateUse1: ci [CompositeImplicitAutograd]\n"
      "  XLA: ci [CompositeImplicitAutograd]\n";
  CHECK_EQ(d.dump("r::f"), expected);
  d.check_invariants("r::f");
  Dispatcher fresh;
  CHECK_EQ(fresh.dump("r::never"), "r::never\nschema: (none)\nkernels: (none)\nfallbacks: (none)\ntable: (empty)\n");
}
