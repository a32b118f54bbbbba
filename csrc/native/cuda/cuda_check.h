// OP_CUDA_CHECK(call): every CUDA runtime call's status becomes an op::Error naming the call,
// so a failing kernel launch or copy is a Python exception, never an abort.
#pragma once

#include <cuda_runtime_api.h>

#include "core/error.h"

namespace op::cuda {

[[noreturn]] inline void fail_call(cudaError_t status, const char* call) {
  cudaGetLastError();  // clear the error so later calls start clean (sticky errors stay)
  fail(str("CUDA: ", call, " failed: ", cudaGetErrorString(status), " (", cudaGetErrorName(status), ")"));
}

}  // namespace op::cuda

#define OP_CUDA_CHECK(CALL)                                                  \
  do {                                                                       \
    const cudaError_t op_cuda_status_ = (CALL);                              \
    if (op_cuda_status_ != cudaSuccess) ::op::cuda::fail_call(op_cuda_status_, #CALL); \
  } while (0)

// After a <<<...>>> launch: a bad configuration is reported here, faults at the next sync.
#define OP_CUDA_CHECK_LAUNCH() OP_CUDA_CHECK(cudaGetLastError())
