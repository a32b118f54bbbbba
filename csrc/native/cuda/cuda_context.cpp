#include "native/cuda/cuda_context.h"

#include <cuda_runtime_api.h>

#include "core/error.h"

namespace op::cuda {

namespace {

struct Devices {
  int count = 0;
  std::string reason;  // set when count is 0
};

// Asked once: the device count does not change while the process runs.
const Devices& devices() {
  static const Devices answer = [] {
    Devices d;
    const cudaError_t status = cudaGetDeviceCount(&d.count);
    if (status != cudaSuccess) {
      cudaGetLastError();
      d.count = 0;
      d.reason = str("cudaGetDeviceCount: ", cudaGetErrorString(status));
    } else if (d.count == 0) {
      d.reason = "cudaGetDeviceCount: 0 devices";
    }
    return d;
  }();
  return answer;
}

}  // namespace

int device_count() { return devices().count; }

bool is_available() { return device_count() > 0; }

std::string unavailable_reason() { return devices().reason; }

void require_device() {
  OP_CHECK(is_available(), "CUDA: no CUDA device is available (", unavailable_reason(), ")");
}

int multiprocessor_count() {
  static const int count = [] {
    require_device();
    int device = 0, sms = 0;
    if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
      cudaGetLastError();
      return 80;  // a reasonable grid for any recent GPU; the answer only tunes speed
    }
    return sms;
  }();
  return count;
}

}  // namespace op::cuda
