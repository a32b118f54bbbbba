// The CUDA entry of copy_stub: every copy with a CUDA side. dst and src have one shape (src
// already broadcast); dtypes may differ.
//   device -> device: one elementwise kernel converts and follows both layouts (a plain
//                     copy of the bytes when both are contiguous with one dtype, a tiled
//                     transpose through shared memory when one walks the other's columns).
//   host -> device:   src made contiguous on the host, copied as is, then converted and laid
//                     out on the device.
//   device -> host:   converted to dst's dtype and made contiguous on the device, copied to
//                     the host (the stream is synchronized: the host reads the values next),
//                     then laid out there by host::copy_.
// Every copy is queued on the current stream (cudaMemcpyAsync). A host -> device copy from
// pageable memory returns once the runtime has staged the bytes, so the source may go.
// "Host" is any device whose memory the host reads: cpu and the emulated external devices.
#include "core/host_ops.h"
#include "native/cuda/device_errors.h"
#include "native/cuda/loops.cuh"
#include "native/stubs.h"

namespace op::native {

namespace {

// dst[b][i][j] = src[b][j][i] for a 2-d tile of kTile x kTile elements per block: read along
// src's unit stride into shared memory, written along dst's. `rows` x `cols` is dst's matrix;
// src steps `src_row` between dst's rows (1: src is the transpose) and `src_col` between its
// columns; the batch (grid.z) steps by its own strides.
constexpr int kTile = 32, kTileRows = 8;  // blocks of 32 x 8 threads, each thread moving 4 elements

struct TransposeArgs {
  int64_t rows, cols, batches;
  int64_t dst_row, src_col;            // dst's column stride and src's row stride are 1
  int64_t dst_batch, src_batch;
};

template <class T>
__global__ void transpose_kernel(T* dst, const T* src, TransposeArgs a) {
  __shared__ T tile[kTile][kTile + 1];  // +1: the column reads hit 32 different banks
  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * kTile, col0 = static_cast<int64_t>(blockIdx.x) * kTile;
  for (int64_t b = blockIdx.z; b < a.batches; b += gridDim.z) {
    const T* s = src + b * a.src_batch;
    T* d = dst + b * a.dst_batch;
    // src is read along dst's rows: element (row, col) of dst sits at row + col * src_col in s.
    for (int j = threadIdx.y; j < kTile; j += kTileRows) {
      const int64_t col = col0 + j, row = row0 + threadIdx.x;
      if (row < a.rows && col < a.cols) tile[j][threadIdx.x] = s[row + col * a.src_col];
    }
    __syncthreads();
    for (int j = threadIdx.y; j < kTile; j += kTileRows) {
      const int64_t row = row0 + j, col = col0 + threadIdx.x;
      if (row < a.rows && col < a.cols) d[row * a.dst_row + col] = tile[threadIdx.x][j];
    }
    __syncthreads();
  }
}

// When dst walks its last dimension with unit stride and src walks dst's second-to-last one
// with unit stride (after merging, at most one batch dimension before them), the copy is a
// batched transpose. Same dtype only.
bool try_transpose(const TensorBase& dst, const TensorBase& src) {
  if (dst.dtype() != src.dtype() || dst.is_alias_of(src)) return false;
  const std::array<std::vector<int64_t>, 2> strides = {dst.strides().vec(), src.strides().vec()};
  const cuda::OffsetCalculator<2> calc = cuda::make_offset_calculator<2>(dst.sizes(), strides);
  if (calc.ndim < 2 || calc.ndim > 3) return false;
  const int r = calc.ndim - 2, c = calc.ndim - 1;  // dst's rows and columns
  if (calc.strides[c][0] != 1 || calc.strides[r][1] != 1 || calc.strides[c][1] == 1) return false;
  TransposeArgs a{calc.sizes[r], calc.sizes[c], 1, calc.strides[r][0], calc.strides[c][1], 0, 0};
  if (calc.ndim == 3) {
    a.batches = calc.sizes[0];
    a.dst_batch = calc.strides[0][0];
    a.src_batch = calc.strides[0][1];
  }
  if (a.rows < kTile || a.cols < kTile) return false;  // thin: the elementwise kernel does as well
  const dim3 grid(static_cast<unsigned>((a.cols + kTile - 1) / kTile),
                  static_cast<unsigned>(std::min<int64_t>((a.rows + kTile - 1) / kTile, 65535)),
                  static_cast<unsigned>(std::min<int64_t>(a.batches, 65535)));
  if ((a.rows + kTile - 1) / kTile > 65535) return false;  // grid.y has no stride loop
  const dim3 block(kTile, kTileRows);
  OP_DISPATCH_ALL_TYPES(dst.dtype(), "copy_", {
    transpose_kernel<scalar_t><<<grid, block, 0, cuda::stream()>>>(static_cast<scalar_t*>(dst.data_ptr()),
                                                                    static_cast<const scalar_t*>(src.data_ptr()), a);
  });
  OP_CUDA_CHECK_LAUNCH();
  return true;
}

bool is_cuda(const TensorBase& t) { return t.device().type() == DeviceType::CUDA; }

size_t nbytes_of(const TensorBase& t) { return static_cast<size_t>(t.numel()) * t.itemsize(); }

// Contiguous with one dtype: the bytes can move as they are.
bool same_bytes(const TensorBase& dst, const TensorBase& src) {
  return dst.dtype() == src.dtype() && dst.is_contiguous() && src.is_contiguous();
}

void device_to_device(const TensorBase& dst, const TensorBase& src) {
  if (dst.data_ptr() == src.data_ptr() && dst.dtype() == src.dtype() && dst.strides() == src.strides()) return;
  // cudaMemcpy must not see overlapping ranges; the kernel buffers those.
  if (same_bytes(dst, src) && !dst.is_alias_of(src)) {
    OP_CUDA_CHECK(cudaMemcpyAsync(dst.data_ptr(), src.data_ptr(), nbytes_of(dst), cudaMemcpyDeviceToDevice, cuda::stream()));
    return;
  }
  if (try_transpose(dst, src)) return;
  OP_DISPATCH_ALL_TYPES(dst.dtype(), "copy_", {
    cuda::elementwise<scalar_t>(dst.sizes(), dst, std::array<TensorBase, 1>{src}, cuda::Identity{});
  });
}

void host_to_device(const TensorBase& dst, const TensorBase& src) {
  src.check_host_data("copy_");
  const TensorBase staged = host::contiguous(src);
  if (same_bytes(dst, staged)) {
    OP_CUDA_CHECK(cudaMemcpyAsync(dst.data_ptr(), staged.data_ptr(), nbytes_of(dst), cudaMemcpyHostToDevice, cuda::stream()));
    return;
  }
  const TensorBase buffer = TensorBase::empty(src.sizes(), TensorOptions(src.dtype()).with_device(dst.device()));
  OP_CUDA_CHECK(cudaMemcpyAsync(buffer.data_ptr(), staged.data_ptr(), nbytes_of(buffer), cudaMemcpyHostToDevice, cuda::stream()));
  device_to_device(dst, buffer);
}

void device_to_host(const TensorBase& dst, const TensorBase& src) {
  dst.check_host_data("copy_");
  TensorBase staged = src;
  if (!(src.dtype() == dst.dtype() && src.is_contiguous())) {
    staged = TensorBase::empty(src.sizes(), TensorOptions(dst.dtype()).with_device(src.device()));
    device_to_device(staged, src);
  }
  const TensorBase landing = dst.is_contiguous() ? dst : TensorBase::empty(src.sizes(), TensorOptions(dst.dtype()));
  const cudaStream_t s = cuda::stream();
  OP_CUDA_CHECK(cudaMemcpyAsync(landing.data_ptr(), staged.data_ptr(), nbytes_of(landing), cudaMemcpyDeviceToHost, s));
  OP_CUDA_CHECK(cudaStreamSynchronize(s));
  op::cuda::raise_device_error();
  if (landing.unsafe_impl() != dst.unsafe_impl()) host::copy_(dst, landing);
}

void copy_kernel_cuda(const TensorBase& dst, const TensorBase& src) {
  OP_CHECK(dst.sizes() == src.sizes(), "copy_: src of shape ", str_list(src.sizes()), " was not broadcast to dst's shape ",
           str_list(dst.sizes()));
  OP_CHECK(!dst.is_meta() && !src.is_meta(), "copy_: cannot copy between ", src.device().str(), " and ",
           dst.device().str(), " (meta tensors have no data)");
  if (dst.numel() == 0) return;
  if (is_cuda(dst) && is_cuda(src))
    device_to_device(dst, src);
  else if (is_cuda(dst))
    host_to_device(dst, src);
  else if (is_cuda(src))
    device_to_host(dst, src);
  else
    host::copy_(dst, src);  // not a CUDA copy after all: both sides are host memory
}

}  // namespace

OP_REGISTER_STUB(copy_stub, CUDA, &copy_kernel_cuda);

}  // namespace op::native
