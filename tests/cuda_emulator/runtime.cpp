// The emulator's libcudart: one device whose memory is host memory, streams that are names, and
// kernels run on fibers (ucontext) of the calling thread. Each block's threads start as fibers
// and run in turn until each finishes or reaches a barrier (__syncthreads, a warp exchange);
// once every unfinished thread waits there, the next round resumes them all. So a kernel runs
// its real code, barrier semantics included, deterministically and without a GPU.
//
// A fiber starts on its own stack with makecontext/setcontext; every switch after that is a
// _setjmp/_longjmp pair, which (unlike swapcontext) makes no system call to save and restore the
// signal mask: the reductions' barriers switch millions of times. The fortified longjmp refuses
// to jump to another stack, hence the #undef before any header.
#undef _FORTIFY_SOURCE
#include <setjmp.h>
#include <ucontext.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "cuda_runtime.h"

dim3 threadIdx, blockIdx, blockDim, gridDim;

namespace {

constexpr size_t kStackBytes = 256 * 1024;
constexpr int kMultiprocessors = 4;  // few, so the reductions' plans split and fold on small tensors

thread_local cudaError_t last_error = cudaSuccess;

cudaError_t record(cudaError_t error) {
  if (error != cudaSuccess) last_error = error;
  return error;
}

struct Fiber {
  ucontext_t context;  // its start, on its own stack
  jmp_buf waiting;     // where it waits at a barrier
  std::vector<char> stack;
  dim3 index;
  bool started = false;
  bool done = false;
};

struct Block {
  std::vector<Fiber> fibers;
  ucontext_t start;     // a context to make each fiber's start from
  jmp_buf scheduler;
  Fiber* running = nullptr;
  void (*body)(void*) = nullptr;
  void* context = nullptr;
  std::vector<unsigned char> exchange;  // one 8-byte slot per thread, for warp exchanges
  bool direct = false;                  // threads run as plain calls: no barrier may come
};

Block* current_block = nullptr;
std::mutex launch_mutex;  // one kernel at a time: the block state above is global

void fiber_main() {
  Block& block = *current_block;
  block.body(block.context);
  block.running->done = true;
  _longjmp(block.scheduler, 1);
}

// The running thread waits for the rest of its block.
void yield() {
  Block& block = *current_block;
  if (block.direct) {
    std::fprintf(stderr, "cuda emulator: thread (%u, %u, %u) of block (%u, %u, %u) reached a barrier that thread 0 "
                 "did not: a divergent __syncthreads\n", threadIdx.x, threadIdx.y, threadIdx.z, blockIdx.x, blockIdx.y,
                 blockIdx.z);
    std::abort();
  }
  if (!_setjmp(block.running->waiting)) _longjmp(block.scheduler, 1);
}

unsigned linear(const dim3& index) { return index.x + blockDim.x * (index.y + blockDim.y * index.z); }

dim3 index_of(unsigned t) { return dim3(t % blockDim.x, (t / blockDim.x) % blockDim.y, t / (blockDim.x * blockDim.y)); }

void prepare(Block& block, unsigned t) {
  Fiber& f = block.fibers[t];
  f.index = index_of(t);
  f.done = false;
  f.started = false;
  f.context = block.start;
  f.context.uc_stack.ss_sp = f.stack.data();
  f.context.uc_stack.ss_size = f.stack.size();
  f.context.uc_link = nullptr;  // fiber_main never returns: it jumps back to the scheduler
  makecontext(&f.context, fiber_main, 0);
}

// Runs ``f`` until it waits at a barrier or finishes.
void resume(Block& block, Fiber& f) {
  block.running = &f;
  threadIdx = f.index;
  if (_setjmp(block.scheduler)) return;
  if (f.started) _longjmp(f.waiting, 1);
  f.started = true;
  setcontext(&f.context);
}

void run_block(Block& block) {
  const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
  // Thread 0 first, as a fiber. When it finishes without meeting a barrier the kernel has none
  // (a barrier only some threads of a block reach is undefined in CUDA, and yield() stops the
  // process on one), so the other threads run as plain calls: an elementwise kernel costs no
  // context switch per thread.
  prepare(block, 0);
  resume(block, block.fibers[0]);
  if (block.fibers[0].done) {
    block.direct = true;
    for (unsigned t = 1; t < threads; ++t) {
      threadIdx = index_of(t);
      block.body(block.context);
    }
    block.direct = false;
    return;
  }
  for (unsigned t = 1; t < threads; ++t) prepare(block, t);
  // Between two barriers each thread runs alone, start to finish; alternating the order of the
  // rounds makes a read of shared memory that a missing barrier leaves unordered see a stale
  // value in one order or the other. Thread 0 has run its first round already.
  bool backwards = false;
  unsigned first = 1;
  for (bool live = true; live; backwards = !backwards, first = 0) {
    live = !block.fibers[0].done;
    for (unsigned k = first; k < threads; ++k) {
      Fiber& f = block.fibers[backwards ? threads - 1 - k : k];
      if (f.done) continue;
      resume(block, f);
      live = live || !f.done;
    }
  }
}

// Device memory: 256-byte aligned like cudaMalloc's, between two guard zones of a known pattern
// that cudaFree checks, so a kernel that writes past either end of an allocation is caught (with
// OPDISPATCH_CUDA_NO_CACHING=1 every tensor is an allocation of its own). A request the host
// cannot hold (over 64 GiB, or refused) is the device running out of memory.
constexpr size_t kGuard = 256;  // before the data (keeping it aligned) and after it
constexpr unsigned char kGuardByte = 0xCD;

struct Allocation {
  void* base;
  size_t size;
};
std::mutex allocations_mutex;
std::unordered_map<void*, Allocation>& allocations() {
  static auto* map = new std::unordered_map<void*, Allocation>();  // leaked: frees at exit may come late
  return *map;
}

bool guard_intact(const unsigned char* from, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (from[i] != kGuardByte) return false;
  return true;
}

}  // namespace

namespace cuda_emulator {

void syncthreads() { yield(); }

void exchange_in_warp(const void* value, void* received, size_t size, int lane_mask) {
  Block& block = *current_block;
  const unsigned me = linear(threadIdx);
  const unsigned partner = (me & ~31u) | ((me & 31u) ^ static_cast<unsigned>(lane_mask & 31));
  std::memcpy(&block.exchange[8 * me], value, size);
  yield();  // every thread has written
  std::memcpy(received, &block.exchange[8 * partner], size);
  yield();  // every thread has read before the slots are written again
}

void launch(dim3 grid, dim3 block_shape, void (*body)(void*), void* context) {
  const uint64_t threads = uint64_t(block_shape.x) * block_shape.y * block_shape.z;
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.x > 0x7fffffffu || grid.y > 65535 || grid.z > 65535 ||
      threads == 0 || threads > 1024 || block_shape.z > 64) {
    record(cudaErrorInvalidConfiguration);
    return;
  }
  std::lock_guard<std::mutex> lock(launch_mutex);
  static Block block;
  if (block.fibers.size() < threads) {
    block.fibers.resize(threads);
    for (Fiber& f : block.fibers)
      if (f.stack.empty()) f.stack.resize(kStackBytes);
  }
  block.exchange.assign(8 * threads, 0);
  getcontext(&block.start);
  block.body = body;
  block.context = context;
  current_block = &block;
  gridDim = grid;
  blockDim = block_shape;
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) {
        blockIdx = dim3(x, y, z);
        run_block(block);
      }
  current_block = nullptr;
}

}  // namespace cuda_emulator

extern "C" {

cudaError_t cudaGetLastError(void) {
  const cudaError_t error = last_error;
  last_error = cudaSuccess;
  return error;
}
cudaError_t cudaPeekAtLastError(void) { return last_error; }

const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorNotReady: return "cudaErrorNotReady";
  }
  return "cudaErrorUnknown";
}
const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorNotReady: return "device not ready";
  }
  return "unknown error";
}

cudaError_t cudaGetDeviceCount(int* count) {
  *count = 1;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int* device) {
  *device = 0;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : record(cudaErrorInvalidValue); }
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  if (device != 0 || attr != cudaDevAttrMultiProcessorCount) return record(cudaErrorInvalidValue);
  *value = kMultiprocessors;
  return cudaSuccess;
}
cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }

cudaError_t cudaMalloc(void** pointer, size_t size) {
  *pointer = nullptr;
  if (size > (size_t(64) << 30)) return record(cudaErrorMemoryAllocation);
  const size_t padded = (size + 255) / 256 * 256;
  auto* base = static_cast<unsigned char*>(std::aligned_alloc(256, kGuard + padded + kGuard));
  if (base == nullptr) return record(cudaErrorMemoryAllocation);
  std::memset(base, kGuardByte, kGuard);
  std::memset(base + kGuard + size, kGuardByte, padded - size + kGuard);
  *pointer = base + kGuard;
  std::lock_guard<std::mutex> lock(allocations_mutex);
  allocations()[*pointer] = Allocation{base, size};
  return cudaSuccess;
}

cudaError_t cudaFree(void* pointer) {
  if (pointer == nullptr) return cudaSuccess;
  Allocation a;
  {
    std::lock_guard<std::mutex> lock(allocations_mutex);
    auto found = allocations().find(pointer);
    if (found == allocations().end()) return record(cudaErrorInvalidValue);
    a = found->second;
    allocations().erase(found);
  }
  const auto* data = static_cast<const unsigned char*>(pointer);
  const size_t padded = (a.size + 255) / 256 * 256;
  if (!guard_intact(data - kGuard, kGuard) || !guard_intact(data + a.size, padded - a.size + kGuard)) {
    std::fprintf(stderr, "cuda emulator: something wrote outside a %zu-byte device allocation (its guard bytes "
                 "changed): a kernel indexed out of bounds\n", a.size);
    std::abort();
  }
  std::free(a.base);
  return cudaSuccess;
}
cudaError_t cudaHostAlloc(void** pointer, size_t size, unsigned flags) {
  (void)flags;
  return cudaMalloc(pointer, size);
}
cudaError_t cudaFreeHost(void* pointer) { return cudaFree(pointer); }
cudaError_t cudaHostGetDevicePointer(void** device, void* host, unsigned flags) {
  (void)flags;
  *device = host;
  return cudaSuccess;
}
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  *free_bytes = *total_bytes = size_t(64) << 30;
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  (void)kind;
  if (count) std::memmove(dst, src, count);
  return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream) {
  (void)stream;
  return cudaMemcpy(dst, src, count, kind);
}
cudaError_t cudaMemset(void* dst, int value, size_t count) {
  std::memset(dst, value, count);
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void* dst, int value, size_t count, cudaStream_t stream) {
  (void)stream;
  return cudaMemset(dst, value, count);
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) { return cudaStreamCreateWithFlags(stream, cudaStreamDefault); }
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags) {
  (void)flags;
  *stream = reinterpret_cast<cudaStream_t>(new char(0));  // a distinct name; work on it is done at once
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  delete reinterpret_cast<char*>(stream);
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  (void)stream;
  return cudaSuccess;
}
cudaError_t cudaStreamQuery(cudaStream_t stream) {
  (void)stream;
  return cudaSuccess;
}

// Work is done when it is queued, so every event has completed once recorded.
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned flags) {
  (void)flags;
  *event = reinterpret_cast<cudaEvent_t>(new char(0));
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  (void)stream;
  return event != nullptr ? cudaSuccess : cudaErrorInvalidValue;
}
cudaError_t cudaEventQuery(cudaEvent_t event) { return event != nullptr ? cudaSuccess : cudaErrorInvalidValue; }
cudaError_t cudaEventSynchronize(cudaEvent_t event) { return cudaEventQuery(event); }
cudaError_t cudaEventDestroy(cudaEvent_t event) {
  delete reinterpret_cast<char*>(event);
  return cudaSuccess;
}

}  // extern "C"
