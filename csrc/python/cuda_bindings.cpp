// opdispatch._C's CUDA functions, wrapped by opdispatch.cuda: whether this build has CUDA
// kernels and a device to run them (_cuda_is_built / _cuda_is_available / _cuda_device_count),
// the caching allocator's figures and cache, device synchronization and streams. A stream
// crosses into Python as an int, its handle (0: the default stream). A build without CUDA
// answers False / False / 0 and zero memory, and raises opdispatch.Error for the rest
// (csrc/SConscript defines OP_WITH_CUDA for the extension of a CUDA build; no CUDA headers here).
#include <cstdint>

#include "core/error.h"
#include "python/bindings.h"

#ifdef OP_WITH_CUDA
#include "native/cuda/cuda_context.h"
#include "native/cuda/cuda_memory.h"
#include "native/cuda/cuda_stream.h"
#endif

namespace opy {

namespace {

#ifdef OP_WITH_CUDA

using op::cuda::StreamHandle;

uintptr_t stream_to_int(StreamHandle stream) { return reinterpret_cast<uintptr_t>(stream); }
StreamHandle stream_from_int(uintptr_t stream) { return reinterpret_cast<StreamHandle>(stream); }

py::dict cuda_memory_stats() {
  const op::CachingAllocatorStats s = op::cuda::memory_stats();
  py::dict d;
  d["allocated_bytes"] = s.allocated_bytes;
  d["reserved_bytes"] = s.reserved_bytes;
  d["peak_allocated_bytes"] = s.peak_allocated_bytes;
  d["device_allocs"] = s.device_allocs;
  d["device_frees"] = s.device_frees;
  d["segments"] = s.segments;
  return d;
}

void define_cuda(py::module_& m) {
  m.def("_cuda_is_built", [] { return true; });
  m.def("_cuda_is_available", [] { return op::cuda::is_available(); });
  m.def("_cuda_device_count", [] { return op::cuda::device_count(); });
  m.def("_cuda_memory_stats", &cuda_memory_stats);
  m.def("_cuda_reset_peak_memory_stats", [] { op::cuda::reset_peak_memory_stats(); });
  m.def("_cuda_empty_cache", [] { op::cuda::empty_cache(); });
  m.def("_cuda_synchronize", [] {
    py::gil_scoped_release unlocked;  // other Python threads run while the device drains
    op::cuda::synchronize_device();
  });
  // Streams need a device, as torch's do; the current stream is per thread.
  m.def("_cuda_current_stream", [] {
    op::cuda::require_device();
    return stream_to_int(op::cuda::current_stream());
  });
  m.def("_cuda_set_current_stream", [](uintptr_t stream) {
    op::cuda::require_device();
    return stream_to_int(op::cuda::set_current_stream(stream_from_int(stream)));
  });
  m.def("_cuda_create_stream", [] { return stream_to_int(op::cuda::create_stream()); });
  m.def("_cuda_destroy_stream", [](uintptr_t stream) {
    // The allocator keys its pools by handle: a later stream given the same handle must not
    // reuse blocks that work queued here still touches.
    py::gil_scoped_release unlocked;
    op::cuda::synchronize_stream(stream_from_int(stream));
    op::cuda::destroy_stream(stream_from_int(stream));
  });
  m.def("_cuda_stream_synchronize", [](uintptr_t stream) {
    py::gil_scoped_release unlocked;
    op::cuda::synchronize_stream(stream_from_int(stream));
  });
  m.def("_cuda_stream_query", [](uintptr_t stream) { return op::cuda::stream_query(stream_from_int(stream)); });
}

#else

[[noreturn]] void cuda_not_built() {
  op::fail("CUDA: this opdispatch was built without CUDA (scons --cuda=on builds the CUDA kernels with nvcc)");
}

void define_cuda(py::module_& m) {
  m.def("_cuda_is_built", [] { return false; });
  m.def("_cuda_is_available", [] { return false; });
  m.def("_cuda_device_count", [] { return 0; });
  m.def("_cuda_memory_stats", [] {
    py::dict d;
    for (const char* key : {"allocated_bytes", "reserved_bytes", "peak_allocated_bytes", "device_allocs",
                            "device_frees", "segments"})
      d[key] = 0;
    return d;
  });
  m.def("_cuda_reset_peak_memory_stats", [] {});
  m.def("_cuda_empty_cache", [] {});
  m.def("_cuda_synchronize", [] { cuda_not_built(); });
  m.def("_cuda_current_stream", []() -> uintptr_t { cuda_not_built(); });
  m.def("_cuda_set_current_stream", [](uintptr_t) -> uintptr_t { cuda_not_built(); });
  m.def("_cuda_create_stream", []() -> uintptr_t { cuda_not_built(); });
  m.def("_cuda_destroy_stream", [](uintptr_t) { cuda_not_built(); });
  m.def("_cuda_stream_synchronize", [](uintptr_t) { cuda_not_built(); });
  m.def("_cuda_stream_query", [](uintptr_t) -> bool { cuda_not_built(); });
}

#endif

}  // namespace

void init_cuda(py::module_& m) { define_cuda(m); }

}  // namespace opy
