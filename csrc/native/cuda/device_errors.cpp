#include "native/cuda/device_errors.h"

#include <cuda_runtime_api.h>

#include <atomic>
#include <map>
#include <mutex>
#include <vector>

#include "core/error.h"
#include "native/cuda/cuda_check.h"
#include "native/cuda/cuda_context.h"

namespace op::cuda {

namespace {

struct ErrorSlot {
  volatile int* host = nullptr;  // pinned, mapped: the device's writes land here
  int* device = nullptr;
};

std::atomic<bool> slot_made{false};

const ErrorSlot& slot() {
  static const ErrorSlot s = [] {
    require_device();
    ErrorSlot made;
    void* host = nullptr;
    OP_CUDA_CHECK(cudaHostAlloc(&host, sizeof(int), cudaHostAllocMapped));  // leaked: lives as long as the process
    *static_cast<volatile int*>(host) = 0;
    void* device = nullptr;
    OP_CUDA_CHECK(cudaHostGetDevicePointer(&device, host, 0));
    made.host = static_cast<volatile int*>(host);
    made.device = static_cast<int*>(device);
    slot_made = true;
    return made;
  }();
  return s;
}

struct Messages {
  std::mutex mutex;
  std::map<std::string, int> codes;
  std::vector<std::string> texts{""};  // code 0: no error
};

Messages& messages() {
  static Messages* m = new Messages();  // leaked: kernels may report during static destruction
  return *m;
}

}  // namespace

int* device_error_slot() { return slot().device; }

int code_for(const std::string& message) {
  Messages& m = messages();
  std::lock_guard<std::mutex> lock(m.mutex);
  const auto [it, added] = m.codes.emplace(message, static_cast<int>(m.texts.size()));
  if (added) m.texts.push_back(message);
  return it->second;
}

void raise_device_error() {
  if (!slot_made) return;  // no kernel has been given the slot yet
  const int code = *slot().host;
  if (code == 0) return;
  *slot().host = 0;
  std::string text;
  {
    Messages& m = messages();
    std::lock_guard<std::mutex> lock(m.mutex);
    text = code > 0 && code < static_cast<int>(m.texts.size()) ? m.texts[code] : "a CUDA kernel reported an unknown error";
  }
  fail(text + " (found by a kernel queued earlier on the GPU)");
}

}  // namespace op::cuda
