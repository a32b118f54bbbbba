// Whether this process can use a CUDA device. Safe to call on machines without a GPU or a
// driver: the answer is then 0 devices and a reason, never a crash. No CUDA headers here, so
// the Python bindings can ask without compiling against CUDA.
#pragma once

#include <string>

namespace op::cuda {

int device_count();   // 0 without a usable device (or driver)
bool is_available();  // device_count() > 0
// Why no device is usable, e.g. "cudaGetDeviceCount: CUDA driver version is insufficient ...";
// empty when one is.
std::string unavailable_reason();
// Throws op::Error "CUDA: no CUDA device is available (cudaGetDeviceCount: ...)" without one.
void require_device();
// Streaming multiprocessors of the current device (asked once): the CUDA loops size their grids
// from it. Requires a device.
int multiprocessor_count();

}  // namespace op::cuda
