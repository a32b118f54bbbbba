// opdispatch._C.Generator and the default generators: seedable random state for the random
// operators (rand, randn, uniform_, normal_), passed to their `Generator? generator`
// arguments. A Generator object is a handle: copies (and the object default_generator()
// returns) share one state, as torch.Generator objects do.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <random>
#include <string>

#include "core/device.h"
#include "core/generator.h"
#include "python/bindings.h"

namespace opy {

namespace {

// A Python int in [-2**63, 2**64) as a 64-bit seed; negative seeds wrap like torch's do.
uint64_t seed_from_python(py::handle value) {
  PyObject* o = value.ptr();
  if (!PyLong_Check(o) || PyBool_Check(o))
    throw py::type_error("manual_seed: the seed must be an int, not " +
                         py::str(py::type::handle_of(value).attr("__name__")).cast<std::string>());
  int overflow = 0;
  const long long signed_seed = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow == 0) return static_cast<uint64_t>(signed_seed);
  if (overflow > 0) {
    const unsigned long long seed = PyLong_AsUnsignedLongLong(o);
    if (!PyErr_Occurred()) return seed;
    PyErr_Clear();
  }
  throw py::value_error("manual_seed: the seed must be in [-2**63, 2**64), got " + py::str(value).cast<std::string>());
}

// A seed from the operating system's entropy, for Generator.seed().
uint64_t fresh_seed() {
  std::random_device entropy;
  return (static_cast<uint64_t>(entropy()) << 32) ^ entropy();
}

std::string repr(const op::Generator& g) {
  return "opdispatch.Generator(device='" + g.device().str() + "', initial_seed=" + std::to_string(g.seed()) + ")";
}

}  // namespace

void init_generator(py::module_& m) {
  py::class_<op::Generator>(m, "Generator",
                            "Seedable random state: pass it as generator= to rand, randn, uniform_ or normal_.")
      .def(py::init([](const std::string& device) { return op::Generator(op::Device(device)); }),
           py::arg("device") = "cpu")
      .def("manual_seed", [](py::object self, py::handle seed) {
        self.cast<op::Generator&>().manual_seed(seed_from_python(seed));
        return self;
      }, py::arg("seed"), "Restarts the stream from `seed`; returns the generator.")
      .def("seed", [](op::Generator& g) {
        const uint64_t seed = fresh_seed();
        g.manual_seed(seed);
        return seed;
      }, "Seeds from the operating system's entropy and returns the seed.")
      .def("initial_seed", &op::Generator::seed, "The seed the current stream started from.")
      .def_property_readonly("device", [](const op::Generator& g) { return g.device().str(); })
      .def("__eq__", [](const op::Generator& a, py::handle b) {
        return py::isinstance<op::Generator>(b) && a == b.cast<const op::Generator&>();
      })
      .def("__repr__", &repr);

  m.def("default_generator", [](const std::string& device) {
    return op::default_generator(op::Device(device).type());
  }, py::arg("device") = "cpu", "The generator random operators use on `device` when none is passed (shared).");
  m.def("manual_seed", [](py::handle seed) {
    const uint64_t s = seed_from_python(seed);
    op::default_generator(op::DeviceType::CUDA).manual_seed(s);
    return op::default_generator(op::DeviceType::CPU).manual_seed(s);
  }, py::arg("seed"), "Seeds the default CPU and CUDA generators; returns the CPU one.");
  m.def("initial_seed", [] { return op::default_generator(op::DeviceType::CPU).seed(); },
        "The seed of the default CPU generator.");
}

}  // namespace opy
