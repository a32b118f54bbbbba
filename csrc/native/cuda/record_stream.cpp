// Tensor.record_stream(s) for CUDA tensors: the caching allocator keeps the tensor's memory from
// the next tensor until the work queued on s up to the tensor's free has finished
// (cuda_allocator.cpp). A CUDA Stream's id is its cudaStream_t (0: the legacy default stream),
// as opdispatch.cuda.Stream makes it.
#include <cstdint>

#include "core/error.h"
#include "native/cuda/cuda_memory.h"
#include "native/cuda/cuda_stream.h"
#include "ops/record_stream_native.h"

namespace op {

void native::record_stream_cuda(TensorBase& self, Stream s) {
  OP_CHECK(s.device().type() == DeviceType::CUDA, "record_stream: the stream is on ", s.device().str(),
           ", not on the tensor's device ", self.device().str());
  // One device in this runtime: cuda and cuda:0 name it.
  OP_CHECK(s.device().index() <= 0, "record_stream: the stream is on ", s.device().str(),
           ", not on the tensor's device ", self.device().str(), " (this runtime uses cuda:0 only)");
  const auto stream = reinterpret_cast<cuda::StreamHandle>(static_cast<uintptr_t>(s.id()));
  // An event recorded on a handle that is not a stream would crash the process.
  OP_CHECK(s.id() >= 0 && cuda::is_live_stream(stream), "record_stream: ", s.str(),
           " is not a stream of this process (its id is not the handle of a live opdispatch.cuda.Stream)");
  if (!self.storage().has_data()) return;  // nothing allocated (a tensor of no elements may have none)
  cuda::record_stream(self.storage().data(), stream);
}

}  // namespace op
