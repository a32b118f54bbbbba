// opdispatch_test_ops: C++ kernels for the tests and benchmarks, in an extension of their own
// (build/tests/python, never in opdispatch._C nor installed), registered on request:
// register_test_ops(ns) defines ns::add_one_element(Tensor a, Tensor b) -> Tensor with a real CPU
// kernel, and register_type_echoes(ns) one echo operator per C++ parameter type of the dispatcher
// convention; each returns the opdispatch._C._Library that owns the registrations (a type of
// opdispatch._C, which this module imports first: pybind11 shares it between the two modules).
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "autograd/guards.h"
#include "autograd/node.h"
#include "autograd/views.h"
#include "core/dimname.h"
#include "core/error.h"
#include "core/host_ops.h"
#include "core/qscheme.h"
#include "core/stream.h"
#include "core/tensor.h"
#include "dispatch/boxing.h"
#include "dispatch/dispatcher.h"
#include "dispatch/registration.h"
#include "python/bindings.h"

namespace opy {

namespace {

// Elementwise a + b for equal sizes, in the promoted dtype.
op::TensorBase add_one_element(const op::TensorBase& a, const op::TensorBase& b) {
  OP_CHECK(a.sizes() == b.sizes(), "add_one_element: sizes ", op::str_list(a.sizes()), " and ", op::str_list(b.sizes()),
           " differ");
  const op::ScalarType type = op::promote_types(a.dtype(), b.dtype());
  op::TensorBase out = op::TensorBase::empty(a.sizes(), op::TensorOptions(type).with_device(a.device()));
  const op::TensorBase x = op::host::contiguous(op::host::to(a, type)), y = op::host::contiguous(op::host::to(b, type));
  const int64_t n = out.numel();
  OP_DISPATCH_ALL_TYPES(type, "add_one_element", {
    const scalar_t* p = x.data_ptr<scalar_t>();
    const scalar_t* q = y.data_ptr<scalar_t>();
    scalar_t* r = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < n; ++i) r[i] = static_cast<scalar_t>(p[i] + q[i]);
  });
  return out;
}

// What an echo kernel returns for a parameter of type T: lists as owned vectors, strings as
// std::string, the rest as it is.
template <class T>
struct Owned {
  using type = T;
  static T get(const T& v) { return v; }
};
template <class T>
struct Owned<op::ArrayRef<T>> {
  using type = std::vector<T>;
  static type get(op::ArrayRef<T> v) { return v.vec(); }
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

// ns::echo_<name>(Tensor t, <type> x) -> (<type> value, str seen): a typed kernel taking x as P
// returns it and the repr of what it saw (IValue::repr). The tensor selects the CPU kernel.
template <class P>
void def_echo(op::Library& lib, const std::string& name, const std::string& type) {
  using O = Owned<std::decay_t<P>>;
  lib.def("echo_" + name + "(Tensor t, " + type + " x) -> (" + type + " value, str seen)");
  lib.impl("echo_" + name, op::DispatchKey::CPU, op::KernelFunction::from_unboxed([](const op::TensorBase&, P x) {
    return std::make_tuple(O::get(x), op::boxing::box(x).repr());
  }), "echo (C++)");
}

// Every C++ parameter type opgen's dispatcher convention writes (opgen/api/types.py), named
// after its schema type (Tensor(a!) is the echo_tensor_ in-place operator).
void def_echoes(op::Library& lib) {
  using namespace op;
  def_echo<const TensorBase&>(lib, "Tensor", "Tensor");
  def_echo<const std::optional<TensorBase>&>(lib, "Tensor_optional", "Tensor?");
  def_echo<ArrayRef<TensorBase>>(lib, "Tensor_list", "Tensor[]");
  def_echo<ArrayRef<std::optional<TensorBase>>>(lib, "Tensor_optional_list", "Tensor?[]");
  def_echo<int64_t>(lib, "int", "int");
  def_echo<int64_t>(lib, "SymInt", "SymInt");
  def_echo<std::optional<int64_t>>(lib, "int_optional", "int?");
  def_echo<IntArrayRef>(lib, "int_list", "int[]");
  def_echo<IntArrayRef>(lib, "SymInt_list", "SymInt[2]");
  def_echo<std::optional<IntArrayRef>>(lib, "int_list_optional", "int[]?");
  def_echo<double>(lib, "float", "float");
  def_echo<std::optional<double>>(lib, "float_optional", "float?");
  def_echo<ArrayRef<double>>(lib, "float_list", "float[]");
  def_echo<std::optional<ArrayRef<double>>>(lib, "float_list_optional", "float[]?");
  def_echo<bool>(lib, "bool", "bool");
  def_echo<std::optional<bool>>(lib, "bool_optional", "bool?");
  def_echo<const std::vector<bool>&>(lib, "bool_list", "bool[3]");
  def_echo<std::string_view>(lib, "str", "str");
  def_echo<std::optional<std::string_view>>(lib, "str_optional", "str?");
  def_echo<const Scalar&>(lib, "Scalar", "Scalar");
  def_echo<const std::optional<Scalar>&>(lib, "Scalar_optional", "Scalar?");
  def_echo<ArrayRef<Scalar>>(lib, "Scalar_list", "Scalar[]");
  def_echo<ScalarType>(lib, "ScalarType", "ScalarType");
  def_echo<std::optional<ScalarType>>(lib, "ScalarType_optional", "ScalarType?");
  def_echo<Layout>(lib, "Layout", "Layout");
  def_echo<std::optional<Layout>>(lib, "Layout_optional", "Layout?");
  def_echo<MemoryFormat>(lib, "MemoryFormat", "MemoryFormat");
  def_echo<std::optional<MemoryFormat>>(lib, "MemoryFormat_optional", "MemoryFormat?");
  def_echo<QScheme>(lib, "QScheme", "QScheme");
  def_echo<Device>(lib, "Device", "Device");
  def_echo<std::optional<Device>>(lib, "Device_optional", "Device?");
  def_echo<int8_t>(lib, "DeviceIndex", "DeviceIndex");
  def_echo<const std::optional<Generator>&>(lib, "Generator_optional", "Generator?");
  def_echo<const Storage&>(lib, "Storage", "Storage");
  def_echo<Stream>(lib, "Stream", "Stream");
  def_echo<Dimname>(lib, "Dimname", "Dimname");
  def_echo<ArrayRef<Dimname>>(lib, "Dimname_list", "Dimname[]");
  lib.def("echo_tensor_(Tensor(a!) self) -> Tensor(a!)");
  lib.impl("echo_tensor_", DispatchKey::CPU, KernelFunction::from_unboxed([](TensorBase& self) -> TensorBase& {
    return self;
  }), "echo (C++)");
}

// ns::unbind(Tensor(a -> *) self) -> Tensor(a)[] (dim 0), with the kernels the generated ones
// would be for a function returning several views (yaml/native_functions.yaml has none): CPU
// selects the rows, ADInplaceOrView records each as a MultiOutputNode view, Autograd gives them
// one UnbindBackward0 node.
struct UnbindBackward : op::autograd::Node {
  UnbindBackward(op::autograd::edge_list edges, std::vector<int64_t> sizes)
      : Node(std::move(edges)), sizes(std::move(sizes)) {}
  op::autograd::variable_list apply(op::autograd::variable_list&& grads) override {
    op::TensorBase result = op::TensorBase::zeros(sizes, op::TensorOptions(grads_dtype(grads)));
    for (size_t i = 0; i < grads.size(); ++i)
      if (grads[i].defined()) op::host::copy_(op::host::select(result, 0, static_cast<int64_t>(i)), grads[i]);
    return {result};
  }
  static op::ScalarType grads_dtype(const op::autograd::variable_list& grads) {
    for (const op::TensorBase& g : grads)
      if (g.defined()) return g.dtype();
    return op::ScalarType::Float32;
  }
  std::string name() const override { return "UnbindBackward0"; }
  std::vector<int64_t> sizes;
};

void def_unbind(op::Library& lib, const std::string& ns) {
  using namespace op;
  using List = std::vector<TensorBase>;
  lib.def("unbind(Tensor(a -> *) self) -> Tensor(a)[]");
  const std::string name = ns + "::unbind";
  auto call = [name](const TensorBase& self) {
    return Dispatcher::singleton().find_op_or_throw(name).typed<List(const TensorBase&)>().call(self);
  };
  lib.impl("unbind", DispatchKey::CPU, KernelFunction::from_unboxed([](const TensorBase& self) {
    List rows;
    for (int64_t i = 0; i < self.sizes()[0]; ++i) rows.push_back(host::select(self, 0, i));
    return rows;
  }), "unbind (C++)");
  lib.impl("unbind", DispatchKey::ADInplaceOrView, KernelFunction::from_unboxed([call](const TensorBase& self) {
    List rows;
    {
      autograd::BelowADInplaceOrView below;
      rows = call(self);
    }
    for (TensorBase& row : rows) row = autograd::as_view(self, row, autograd::CreationMeta::MultiOutputNode);
    return rows;
  }), "unbind view (C++)");
  lib.impl("unbind", DispatchKey::Autograd, KernelFunction::from_unboxed([call](const TensorBase& self) {
    std::shared_ptr<UnbindBackward> grad_fn;
    if (autograd::compute_requires_grad(self))
      grad_fn = std::make_shared<UnbindBackward>(autograd::collect_next_edges(self), self.sizes().vec());
    List rows;
    {
      autograd::BelowAutograd below;
      rows = call(self);
    }
    for (const TensorBase& row : rows) autograd::set_history(row, grad_fn);
    return rows;
  }), "unbind autograd (C++)");
}

}  // namespace

}  // namespace opy

PYBIND11_MODULE(opdispatch_test_ops, m) {
  using namespace opy;
  py::module_::import("opdispatch._C");  // op::Library's Python type, and op::Error's
  m.def("register_test_ops", [](const std::string& ns) {
    auto lib = std::make_unique<op::Library>(op::Library::FRAGMENT, ns);
    lib->def("add_one_element(Tensor a, Tensor b) -> Tensor");
    lib->impl("add_one_element", op::DispatchKey::CPU, op::KernelFunction::make<&add_one_element>(),
              "add_one_element (C++)");
    return lib;
  }, py::arg("ns") = "test", "Registers the C++ test operators; keep the returned library to keep them.");
  m.def("register_unbind", [](const std::string& ns) {
    auto lib = std::make_unique<op::Library>(op::Library::FRAGMENT, ns);
    def_unbind(*lib, ns);
    return lib;
  }, py::arg("ns"), "Registers ns::unbind(Tensor(a -> *) self) -> Tensor(a)[] with CPU, ADInplaceOrView and Autograd "
                    "kernels like generated ones; keep the returned library to keep it.");
  m.def("register_type_echoes", [](const std::string& ns) {
    auto lib = std::make_unique<op::Library>(op::Library::FRAGMENT, ns);
    def_echoes(*lib);
    return lib;
  }, py::arg("ns"), "Registers ns::echo_<type>(Tensor t, <type> x) -> (<type> value, str seen) for every C++ "
                    "parameter type; keep the returned library to keep them.");
}
