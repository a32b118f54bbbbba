#include "python/ivalue_conversion.h"

#include <optional>
#include <utility>
#include <vector>

#include "core/dimname.h"
#include "core/error.h"
#include "core/storage.h"
#include "core/stream.h"
#include "python/tensor_object.h"

namespace opy {

namespace {

using op::BaseTy;
using op::IValue;
using op::Type;

bool is_int_like(BaseTy t) {  // boxed as int (QScheme, Layout and MemoryFormat by their value)
  return t == BaseTy::Int || t == BaseTy::SymInt || t == BaseTy::DeviceIndex || t == BaseTy::Layout ||
         t == BaseTy::MemoryFormat || t == BaseTy::QScheme;
}

// A str that names a dimension (an identifier or "*"); false for other values, with `error`
// set when it is a str that is no name.
bool as_dimname(py::handle obj, std::optional<op::Dimname>& out, std::string& error) {
  if (!PyUnicode_Check(obj.ptr())) return false;
  try {
    out.emplace(obj.cast<std::string>());
  } catch (const op::Error& e) {
    error = e.what();
    return false;
  }
  return true;
}

// Python ints (and objects with __index__, e.g. numpy integers), never bools or floats.
bool as_int64(PyObject* o, int64_t& out) {
  if (PyBool_Check(o) || PyFloat_Check(o)) return false;
  py::object index;
  if (!PyLong_Check(o)) {
    if (!PyIndex_Check(o)) return false;
    index = py::reinterpret_steal<py::object>(PyNumber_Index(o));
    if (!index) {
      PyErr_Clear();
      return false;
    }
    o = index.ptr();
  }
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow != 0 || (v == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    return false;
  }
  out = static_cast<int64_t>(v);
  return true;
}

bool as_double(PyObject* o, double& out) {
  if (PyFloat_Check(o)) {
    out = PyFloat_AS_DOUBLE(o);
    return true;
  }
  int64_t i = 0;
  if (!as_int64(o, i)) return false;
  out = static_cast<double>(i);
  return true;
}

// numpy scalars (np.float32(2), np.bool_(True)) are numbers too; np.float64 and the integer
// types already pass as float / through __index__. Only consulted after Python's own types,
// and only when numpy has been imported, so plain calls never pay for it.
bool numpy_scalar(py::handle obj, IValue& out) {
  PyObject* numpy = PyImport_GetModule(py::str("numpy").ptr());
  if (numpy == nullptr) {
    PyErr_Clear();
    return false;
  }
  py::object module = py::reinterpret_steal<py::object>(numpy);
  if (!py::isinstance(obj, module.attr("generic"))) return false;
  const std::string kind = py::str(obj.attr("dtype").attr("kind"));
  if (kind == "b") out = IValue(op::Scalar(obj.cast<bool>()));
  else if (kind == "i" || kind == "u") out = IValue(op::Scalar(obj.attr("item")().cast<int64_t>()));
  else if (kind == "f") out = IValue(op::Scalar(obj.cast<double>()));
  else return false;
  return true;
}

bool convert_base(py::handle obj, BaseTy base, IValue& out, std::string& detail) {
  PyObject* o = obj.ptr();
  if (is_int_like(base)) {
    int64_t v = 0;
    if (!as_int64(o, v)) {
      if (PyLong_Check(o) && !PyBool_Check(o)) detail = " (out of range for a 64-bit integer)";
      return false;
    }
    out = IValue(v);
    return true;
  }
  switch (base) {
    case BaseTy::Tensor: {
      const op::TensorBase* t = as_tensor(obj);
      if (t == nullptr) return false;
      out = IValue(*t);
      return true;
    }
    case BaseTy::Float: {
      double v = 0;
      if (!as_double(o, v)) return false;
      out = IValue(v);
      return true;
    }
    case BaseTy::Bool:
    case BaseTy::SymBool:
      if (!PyBool_Check(o)) return false;
      out = IValue(o == Py_True);
      return true;
    case BaseTy::Str: {
      if (!PyUnicode_Check(o)) return false;
      Py_ssize_t size = 0;
      const char* data = PyUnicode_AsUTF8AndSize(o, &size);
      if (data == nullptr) {
        PyErr_Clear();
        detail = " (not valid UTF-8)";
        return false;
      }
      out = IValue(std::string(data, static_cast<size_t>(size)));
      return true;
    }
    case BaseTy::Scalar: {
      if (PyBool_Check(o)) {
        out = IValue(op::Scalar(o == Py_True));
        return true;
      }
      int64_t i = 0;
      if (as_int64(o, i)) {
        out = IValue(op::Scalar(i));
        return true;
      }
      if (PyFloat_Check(o)) {
        out = IValue(op::Scalar(PyFloat_AS_DOUBLE(o)));
        return true;
      }
      return numpy_scalar(obj, out);
    }
    case BaseTy::ScalarType:
      if (!py::isinstance<DType>(obj)) {
        detail = dtype_mismatch_detail(obj);
        return false;
      }
      out = IValue(obj.cast<const DType&>().type);
      return true;
    case BaseTy::Generator:  // opdispatch._C.Generator (generator_bindings.cpp)
      if (!py::isinstance<op::Generator>(obj)) return false;
      out = IValue(obj.cast<op::Generator>());
      return true;
    case BaseTy::Storage:  // opdispatch.Storage (runtime_type_bindings.cpp)
      if (!py::isinstance<op::Storage>(obj)) return false;
      out = IValue(obj.cast<op::Storage>());
      return true;
    case BaseTy::Stream:  // opdispatch.Stream
      if (!py::isinstance<op::Stream>(obj)) return false;
      out = IValue(obj.cast<op::Stream>());
      return true;
    case BaseTy::Dimname: {
      std::optional<op::Dimname> name;
      std::string error;
      if (!as_dimname(obj, name, error)) {
        if (!error.empty()) detail = " (" + error + ")";
        return false;
      }
      out = IValue(*name);
      return true;
    }
    case BaseTy::Device:
      if (!PyUnicode_Check(o)) return false;
      try {
        out = IValue(op::Device(obj.cast<std::string>()));
      } catch (const op::Error& e) {
        detail = std::string(" (") + e.what() + ")";
        return false;
      }
      return true;
    default:
      detail = std::string(" (values of type ") + op::to_string(base) + " cannot be passed from Python)";
      return false;
  }
}

// The element kind of a list type, as the boxed representation sees it.
enum class ListKind { Tensor, OptionalTensor, Int, Float, Bool, Scalar, Dimname, Unsupported };

ListKind list_kind(const Type& elem) {
  if (elem.is_optional() && elem.elem().is_base() && elem.elem().base_ty() == BaseTy::Tensor)
    return ListKind::OptionalTensor;
  if (!elem.is_base()) return ListKind::Unsupported;
  BaseTy b = elem.base_ty();
  if (b == BaseTy::Tensor) return ListKind::Tensor;
  if (b == BaseTy::Int || b == BaseTy::SymInt || b == BaseTy::DeviceIndex) return ListKind::Int;
  if (b == BaseTy::Float) return ListKind::Float;
  if (b == BaseTy::Bool || b == BaseTy::SymBool) return ListKind::Bool;
  if (b == BaseTy::Scalar) return ListKind::Scalar;
  if (b == BaseTy::Dimname) return ListKind::Dimname;
  return ListKind::Unsupported;
}

// One element of a Tensor list: false when the item is not a Tensor.
bool tensor_item(py::handle h, op::TensorBase& t) {
  const op::TensorBase* p = as_tensor(h);
  if (p) t = *p;
  return p != nullptr;
}

template <class T, class F>
bool convert_items(PyObject* seq, Py_ssize_t n, std::vector<T>& items, F&& each, Py_ssize_t& bad) {
  items.reserve(static_cast<size_t>(n));
  PyObject** data = PySequence_Fast_ITEMS(seq);
  for (Py_ssize_t i = 0; i < n; ++i) {
    T value{};
    if (!each(py::handle(data[i]), value)) {
      bad = i;
      return false;
    }
    items.push_back(std::move(value));
  }
  return true;
}

bool convert_list(py::handle obj, const Type& type, IValue& out, std::string& detail) {
  const ListKind kind = list_kind(type.elem());
  const std::optional<int64_t> size = type.list_size();
  PyObject* o = obj.ptr();
  int64_t single = 0;
  if (kind == ListKind::Int && size && as_int64(o, single)) {  // int[2] stride=1 -> [1, 1]
    out = IValue(std::vector<int64_t>(static_cast<size_t>(*size), single));
    return true;
  }
  if (!PyList_Check(o) && !PyTuple_Check(o)) return false;
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  Py_ssize_t bad = -1;
  bool ok = false;
  std::string ignored;
  switch (kind) {
    case ListKind::Tensor: {
      std::vector<op::TensorBase> v;
      ok = convert_items(o, n, v, tensor_item, bad);
      if (ok) out = IValue(std::move(v));
      break;
    }
    case ListKind::OptionalTensor: {
      std::vector<std::optional<op::TensorBase>> v;
      ok = convert_items(o, n, v, [](py::handle h, std::optional<op::TensorBase>& t) {
        if (h.is_none()) return true;
        op::TensorBase value;
        if (!tensor_item(h, value)) return false;
        t = std::move(value);
        return true;
      }, bad);
      if (ok) out = IValue(std::move(v));
      break;
    }
    case ListKind::Int: {
      std::vector<int64_t> v;
      ok = convert_items(o, n, v, [](py::handle h, int64_t& i) { return as_int64(h.ptr(), i); }, bad);
      if (ok) out = IValue(std::move(v));
      break;
    }
    case ListKind::Float: {
      std::vector<double> v;
      ok = convert_items(o, n, v, [](py::handle h, double& d) { return as_double(h.ptr(), d); }, bad);
      if (ok) out = IValue(std::move(v));
      break;
    }
    case ListKind::Bool: {
      std::vector<bool> v;
      v.reserve(static_cast<size_t>(n));
      PyObject** data = PySequence_Fast_ITEMS(o);
      ok = true;
      for (Py_ssize_t i = 0; i < n && ok; ++i) {
        ok = PyBool_Check(data[i]);
        if (ok) v.push_back(data[i] == Py_True);
        else bad = i;
      }
      if (ok) out = IValue(std::move(v));
      break;
    }
    case ListKind::Scalar: {  // numbers, each a Scalar of its kind
      std::vector<op::Scalar> v;
      ok = convert_items(o, n, v, [](py::handle h, op::Scalar& scalar) {
        IValue item;
        std::string ignored_detail;
        if (!convert_base(h, BaseTy::Scalar, item, ignored_detail)) return false;
        scalar = item.to_scalar();
        return true;
      }, bad);
      if (ok) out = IValue(std::move(v));
      break;
    }
    case ListKind::Dimname: {
      std::vector<op::Dimname> v;
      v.reserve(static_cast<size_t>(n));
      PyObject** data = PySequence_Fast_ITEMS(o);
      ok = true;
      for (Py_ssize_t i = 0; i < n && ok; ++i) {
        std::optional<op::Dimname> name;
        std::string error;
        ok = as_dimname(py::handle(data[i]), name, error);
        if (ok) {
          v.push_back(*name);
        } else if (!error.empty()) {
          detail = " (element " + std::to_string(i) + ": " + error + ")";
          return false;
        } else {
          bad = i;
        }
      }
      if (ok) out = IValue(std::move(v));
      break;
    }
    case ListKind::Unsupported:
      detail = " (lists of " + type.elem().str() + " cannot be passed from Python)";
      return false;
  }
  if (!ok && bad >= 0)
    detail = " (element " + std::to_string(bad) + " is " +
             python_type_name(py::handle(PySequence_Fast_ITEMS(o)[bad])) + ")";
  return ok;
}

}  // namespace

std::string python_type_name(py::handle obj) {
  return py::str(py::type::handle_of(obj).attr("__name__")).cast<std::string>();
}

bool to_ivalue(py::handle obj, const Type& type, IValue& out, std::string& why) {
  std::string detail;
  bool ok;
  if (type.is_optional()) {
    if (obj.is_none()) {
      out = IValue();
      return true;
    }
    ok = type.elem().is_list() ? convert_list(obj, type.elem(), out, detail)
                               : type.elem().is_base() && convert_base(obj, type.elem().base_ty(), out, detail);
  } else if (type.is_list()) {
    ok = convert_list(obj, type, out, detail);
  } else {
    ok = convert_base(obj, type.base_ty(), out, detail);
  }
  if (!ok) why = type.str() + ", not " + python_type_name(obj) + detail;
  return ok;
}

namespace {

template <class T, class F>
py::list list_of(const std::vector<T>& items, F&& each) {
  py::list out(items.size());
  for (size_t i = 0; i < items.size(); ++i) out[i] = each(items[i]);
  return out;
}

py::object tensor_or_none(const op::TensorBase& t) { return wrap_tensor(t); }

}  // namespace

py::object scalar_object(const op::Scalar& s) {
  if (s.is_bool()) return py::bool_(s.to<bool>());
  if (s.is_integral()) return py::int_(s.to<int64_t>());
  return py::float_(s.to<double>());
}

py::object to_python(const IValue& v, const Type* type) {
  using Tag = IValue::Tag;
  switch (v.tag()) {
    case Tag::None: return py::none();
    case Tag::Tensor: return tensor_or_none(v.to_tensor());
    case Tag::TensorList: return list_of(v.to_tensor_list(), tensor_or_none);
    case Tag::OptionalTensorList:
      return list_of(v.to_optional_tensor_list(),
                     [](const std::optional<op::TensorBase>& t) { return t ? tensor_or_none(*t) : py::none(); });
    case Tag::Int:
      if (type && type->innermost() == BaseTy::Float && !type->is_list()) return py::float_(v.to_double());
      return py::int_(v.to_int());
    case Tag::Double: return py::float_(v.to_double());
    case Tag::Bool: return py::bool_(v.to_bool());
    case Tag::String: return py::str(v.to_str());
    case Tag::Scalar: return scalar_object(v.to_scalar());
    case Tag::IntList: return list_of(v.to_int_list(), [](int64_t i) { return py::int_(i); });
    case Tag::DoubleList: return list_of(v.to_double_list(), [](double d) { return py::float_(d); });
    case Tag::BoolList: return list_of(v.to_bool_list(), [](bool b) { return py::bool_(b); });
    case Tag::ScalarType: return dtype_object(v.to_scalar_type());
    case Tag::Device: return py::str(v.to_device().str());
    case Tag::Generator: return py::cast(v.to_generator());
    case Tag::ScalarList: return list_of(v.to_scalar_list(), scalar_object);
    case Tag::Storage: return py::cast(v.to_storage());
    case Tag::Stream: return py::cast(v.to_stream());
    case Tag::Dimname: return py::str(v.to_dimname().str());
    case Tag::DimnameList: return list_of(v.to_dimname_list(), [](const op::Dimname& d) { return py::str(d.str()); });
  }
  return py::none();
}

}  // namespace opy
