#include "native/cuda/cuda_stream.h"

#include <cuda_runtime_api.h>

#include <mutex>
#include <unordered_set>

#include "native/cuda/cuda_check.h"
#include "native/cuda/cuda_context.h"
#include "native/cuda/device_errors.h"

namespace op::cuda {

namespace {

// Per thread, as in torch: a stream set in one thread does not redirect another's work.
thread_local StreamHandle current = nullptr;

cudaStream_t as_cuda(StreamHandle stream) { return static_cast<cudaStream_t>(stream); }

// The streams create_stream() made and destroy_stream() has not destroyed; leaked, so that it
// outlives streams destroyed at exit.
struct LiveStreams {
  std::mutex mutex;
  std::unordered_set<StreamHandle> handles;
};
LiveStreams& live_streams() {
  static LiveStreams* live = new LiveStreams();
  return *live;
}

}  // namespace

StreamHandle current_stream() { return current; }

StreamHandle set_current_stream(StreamHandle stream) {
  const StreamHandle previous = current;
  current = stream;
  return previous;
}

StreamHandle create_stream() {
  require_device();
  cudaStream_t stream = nullptr;
  OP_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  LiveStreams& live = live_streams();
  std::lock_guard<std::mutex> lock(live.mutex);
  live.handles.insert(stream);
  return stream;
}

void destroy_stream(StreamHandle stream) {
  if (stream == nullptr) return;
  {
    LiveStreams& live = live_streams();
    std::lock_guard<std::mutex> lock(live.mutex);
    live.handles.erase(stream);
  }
  cudaStreamDestroy(as_cuda(stream));  // queued work still completes
}

bool is_live_stream(StreamHandle stream) {
  if (stream == nullptr) return true;
  LiveStreams& live = live_streams();
  std::lock_guard<std::mutex> lock(live.mutex);
  return live.handles.count(stream) != 0;
}

void synchronize_stream(StreamHandle stream) {
  require_device();
  OP_CUDA_CHECK(cudaStreamSynchronize(as_cuda(stream)));
  raise_device_error();
}

bool stream_query(StreamHandle stream) {
  require_device();
  const cudaError_t status = cudaStreamQuery(as_cuda(stream));
  if (status == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  OP_CUDA_CHECK(status);
  return true;
}

void synchronize_device() {
  require_device();
  OP_CUDA_CHECK(cudaDeviceSynchronize());
  raise_device_error();
}

}  // namespace op::cuda
