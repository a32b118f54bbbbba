// opdispatch.Tensor: attributes and numpy interop (from_numpy shares memory with the array,
// numpy() copies), plus host-side helpers the Python package builds on (_host_to, _host_full).
// The operator methods (x.add, x.to, x.clone, ...), the arithmetic dunders and printing are
// installed by the package (opdispatch/tensor.py, printing.py) from the operator table.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <array>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/host_ops.h"
#include "core/tensor.h"
#include "functionalization/functionalization.h"
#include "python/bindings.h"
#include "python/ivalue_conversion.h"
#include "python/tensor_object.h"

namespace opy {

void init_overload_sets(py::module_& m);  // overload_set.cpp: _C._OverloadSet, which the methods are made of

namespace {

using op::ScalarType;
using op::TensorBase;

constexpr std::array<ScalarType, op::kNumScalarTypes> kAllTypes = {
    ScalarType::Bool, ScalarType::Int32, ScalarType::Int64, ScalarType::Float32, ScalarType::Float64};

py::dtype numpy_dtype(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return py::dtype::of<bool>();
    case ScalarType::Int32: return py::dtype::of<int32_t>();
    case ScalarType::Int64: return py::dtype::of<int64_t>();
    case ScalarType::Float32: return py::dtype::of<float>();
    case ScalarType::Float64: return py::dtype::of<double>();
  }
  throw py::type_error("invalid dtype");
}

ScalarType scalar_type_of(const py::dtype& d) {
  for (ScalarType t : kAllTypes)
    if (d.equal(numpy_dtype(t))) return t;
  throw py::type_error("can't convert a numpy array of dtype " + py::str(d).cast<std::string>() +
                       "; supported dtypes: bool, int32, int64, float32, float64 (native byte order)");
}

// Drops the reference a storage holds on a numpy array, from whichever thread frees the
// storage last.
void release_array(PyObject* array) {
  if (!Py_IsInitialized()) return;  // interpreter gone: nothing to release into
  PyGILState_STATE state = PyGILState_Ensure();
  Py_DECREF(array);
  PyGILState_Release(state);
}

void check_numpy_readable(const TensorBase& t) {
  if (t.device().is_cpu()) return;
  if (t.is_meta())
    throw py::type_error("can't convert a meta tensor to numpy: meta tensors have shape and dtype but no data");
  throw py::type_error("can't convert a tensor on device '" + t.device().str() +
                       "' to numpy; copy it to the cpu first with .to('cpu')");
}

py::array to_numpy(const TensorBase& functional_or_plain) {
  // A functional tensor's values are its synced inner value's.
  const TensorBase t = op::functionalization::from_functional(functional_or_plain);
  check_numpy_readable(t);
  std::vector<py::ssize_t> shape(t.sizes().begin(), t.sizes().end());
  py::array out(numpy_dtype(t.dtype()), shape);
  if (t.numel() > 0) {
    TensorBase c = op::host::contiguous(t);
    std::memcpy(out.mutable_data(), c.data_ptr(), static_cast<size_t>(c.numel()) * c.itemsize());
  }
  return out;
}

// A new tensor holding a copy of the array's values.
TensorBase copy_from_numpy(const py::array& array, ScalarType dtype) {
  py::array c = py::module_::import("numpy").attr("asarray")(array, py::arg("order") = "C");
  std::vector<int64_t> sizes(c.shape(), c.shape() + c.ndim());
  TensorBase t = TensorBase::empty(sizes, dtype);
  if (t.numel() > 0) std::memcpy(t.data_ptr(), c.data(), static_cast<size_t>(t.numel()) * t.itemsize());
  return t;
}

// A tensor over the array's memory (the array stays alive while any view of it does).
// Read-only arrays are copied: kernels may write to their inputs.
TensorBase from_numpy(const py::array& array, bool copy) {
  const ScalarType dtype = scalar_type_of(array.dtype());
  if (copy || !array.writeable()) return copy_from_numpy(array, dtype);
  const int64_t itemsize = static_cast<int64_t>(op::element_size(dtype));
  const py::ssize_t nd = array.ndim();
  std::vector<int64_t> sizes(static_cast<size_t>(nd)), strides(static_cast<size_t>(nd));
  int64_t span = 1, expected = 1;
  for (py::ssize_t d = nd; d-- > 0;) {
    const int64_t size = array.shape(d), bytes = array.strides(d);
    sizes[d] = size;
    if (size <= 1) {
      strides[d] = expected;  // never used to address anything: pick the contiguous value
    } else if (bytes < 0 || bytes % itemsize != 0) {
      std::string all;
      for (py::ssize_t k = 0; k < nd; ++k) all += (k ? ", " : "") + std::to_string(array.strides(k));
      throw py::value_error("from_numpy: byte strides (" + all +
                            ") are not supported (negative, or not a multiple of the item size); pass a copy "
                            "(numpy.ascontiguousarray) or use opdispatch.tensor()");
    } else {
      strides[d] = bytes / itemsize;
    }
    span += (size - 1) * strides[d];
    expected *= size > 1 ? size : 1;
  }
  if (array.size() == 0) span = 0;
  void* data = const_cast<void*>(array.data());
  PyObject* keep = array.ptr();
  Py_INCREF(keep);
  op::Storage storage = op::Storage::from_external(data, static_cast<size_t>(span * itemsize), op::Device(),
                                                   [keep](void*) { release_array(keep); });
  return TensorBase::from_storage(std::move(storage), sizes, strides, 0, dtype);
}

std::vector<int64_t> sizes_from(py::handle size) {
  if (PyLong_Check(size.ptr()) && !PyBool_Check(size.ptr())) return {size.cast<int64_t>()};
  op::IValue value;
  std::string why;
  if (!to_ivalue(size, op::parse_type("int[]"), value, why)) throw py::type_error("size must be int[], not " + why.substr(why.find("not ") + 4));
  return value.to_int_list();
}

op::TensorOptions options_from(py::handle dtype, py::handle device) {
  op::TensorOptions options;
  if (!dtype.is_none()) {
    if (!py::isinstance<DType>(dtype))
      throw py::type_error("dtype must be an opdispatch dtype, not " + python_type_name(dtype) + dtype_mismatch_detail(dtype));
    options.dtype = dtype.cast<const DType&>().type;
  }
  if (!device.is_none()) {
    if (!py::isinstance<py::str>(device)) throw py::type_error("device must be a string such as 'cpu' or 'meta', not " + python_type_name(device));
    options.device = op::Device(device.cast<std::string>());
  }
  return options;
}

py::tuple int_tuple(op::IntArrayRef values) {
  py::tuple out(values.size());
  for (size_t i = 0; i < values.size(); ++i) out[i] = py::int_(values[i]);
  return out;
}

TensorBase host_to(const TensorBase& t, py::handle dtype, py::handle device) {
  op::TensorOptions options = options_from(dtype, device);
  TensorBase out = t;
  if (options.device) out = op::host::to(out, *options.device);
  if (options.dtype) out = op::host::to(out, *options.dtype);
  return out;
}

}  // namespace

void init_tensor(py::module_& m) {
  py::class_<TensorBase>(m, "Tensor", "A strided tensor (create one with opdispatch.tensor, from_numpy or a factory such as zeros).")
      .def_property_readonly("shape", [](const TensorBase& t) { return int_tuple(t.sizes()); })
      .def_property_readonly("strides", [](const TensorBase& t) { return int_tuple(t.strides()); },
                             "Strides in elements (numpy's are in bytes).")
      .def_property_readonly("storage_offset", &TensorBase::storage_offset)
      .def_property_readonly("dtype", [](const TensorBase& t) { return dtype_object(t.dtype()); })
      .def_property_readonly("device", [](const TensorBase& t) { return t.device().str(); })
      .def_property_readonly("ndim", &TensorBase::dim)
      .def("dim", &TensorBase::dim)
      .def("numel", &TensorBase::numel)
      .def("size", [](const TensorBase& t, py::object dim) -> py::object {
        if (dim.is_none()) return int_tuple(t.sizes());
        return py::int_(t.size(dim.cast<int64_t>()));
      }, py::arg("dim") = py::none())
      .def("is_contiguous", &TensorBase::is_contiguous)
      .def("is_alias_of", &TensorBase::is_alias_of, "Whether both tensors view the same storage.")
      .def("equal", [](const TensorBase& a, const TensorBase& b) {
        namespace fz = op::functionalization;
        return op::host::equal(fz::from_functional(a), fz::from_functional(b));
      }, "Same sizes and values.")
      .def("numpy", &to_numpy, "A numpy array holding a copy of the values (cpu tensors only).")
      .def("__array__", [](const TensorBase& t, py::object dtype, py::object) -> py::object {
        py::array a = to_numpy(t);
        return dtype.is_none() ? py::object(a) : a.attr("astype")(dtype);
      }, py::arg("dtype") = py::none(), py::arg("copy") = py::none())
      .def("tolist", [](const TensorBase& t) { return to_numpy(t).attr("tolist")(); })
      .def("item", [](const TensorBase& t) { return scalar_object(op::host::item(op::functionalization::from_functional(t))); })
      .def("__len__", [](const TensorBase& t) {
        if (t.dim() == 0) throw py::type_error("len() of a 0-d tensor");
        return t.size(0);
      });
  init_tensor_type();
  init_overload_sets(m);

  m.def("from_numpy", [](const py::array& a) { return from_numpy(a, false); }, py::arg("array"),
        "A tensor sharing the array's memory (read-only arrays are copied).");
  m.def("_from_numpy_copy", [](const py::array& a) { return from_numpy(a, true); }, py::arg("array"));
  m.def("_host_to", [](const TensorBase& t, py::object dtype, py::object device) { return host_to(t, dtype, device); },
        py::arg("tensor"), py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
        "A copy on another device and/or dtype by host copies, no operator (the tensor itself when nothing changes).");
  m.def("_host_full", [](py::object size, py::object value, py::object dtype, py::object device) {
    op::IValue v;
    std::string why;
    if (!to_ivalue(value, op::Type::base(op::BaseTy::Scalar), v, why)) throw py::type_error("fill value must be " + why);
    return TensorBase::full(sizes_from(size), v.to_scalar(), options_from(dtype, device));
  }, py::arg("size"), py::arg("fill_value"), py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
        "A filled tensor made on the host, no operator.");
}

}  // namespace opy
