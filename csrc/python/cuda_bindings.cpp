// opdispatch._C._cuda_is_built() / _cuda_is_available() / _cuda_device_count(): whether this
// build has CUDA kernels and whether a device can run them. A build without CUDA answers
// False / False / 0 (csrc/SConscript defines OP_WITH_CUDA for the extension of a CUDA build).
#include "python/bindings.h"

#ifdef OP_WITH_CUDA
#include "native/cuda/cuda_context.h"
#endif

namespace opy {

void init_cuda(py::module_& m) {
#ifdef OP_WITH_CUDA
  m.def("_cuda_is_built", [] { return true; });
  m.def("_cuda_is_available", [] { return op::cuda::is_available(); });
  m.def("_cuda_device_count", [] { return op::cuda::device_count(); });
#else
  m.def("_cuda_is_built", [] { return false; });
  m.def("_cuda_is_available", [] { return false; });
  m.def("_cuda_device_count", [] { return 0; });
#endif
}

}  // namespace opy
