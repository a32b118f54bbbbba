// The calling thread's current CUDA stream: every kernel launch and copy of the CUDA loops goes
// on it (torch's getCurrentCUDAStream). No CUDA headers here, so the Python bindings and the
// allocator's host code can use it without compiling against CUDA: a stream travels as an
// opaque handle, a cudaStream_t cast to void*. nullptr is the legacy default stream, which is
// every thread's current stream until it sets another.
#pragma once

namespace op::cuda {

using StreamHandle = void*;

StreamHandle current_stream();
// Makes `stream` the calling thread's current stream and returns the one it replaces.
StreamHandle set_current_stream(StreamHandle stream);

// A new stream that does not synchronize with the legacy default stream (cudaStreamNonBlocking).
StreamHandle create_stream();
void destroy_stream(StreamHandle stream);
// True for the default stream (nullptr) and for a stream create_stream() made and
// destroy_stream() has not destroyed yet: a handle from Python is checked before use.
bool is_live_stream(StreamHandle stream);

// Blocks the host until the work queued on `stream` has finished.
void synchronize_stream(StreamHandle stream);
// True when every piece of work queued on `stream` has finished.
bool stream_query(StreamHandle stream);
// Blocks the host until the whole device is idle (cudaDeviceSynchronize).
void synchronize_device();

}  // namespace op::cuda
