"""opdispatch.cuda: CUDA devices, the caching allocator's memory and streams.

    opdispatch.cuda.is_built()       # compiled with nvcc (scons --cuda=auto|on)
    opdispatch.cuda.is_available()   # ... and a CUDA device is present
    opdispatch.cuda.device_count()

    opdispatch.cuda.memory_allocated()      # bytes in use by tensors
    opdispatch.cuda.memory_reserved()       # bytes held from the device, cached or in use
    opdispatch.cuda.max_memory_allocated()  # peak of memory_allocated() (reset_peak_memory_stats())
    opdispatch.cuda.empty_cache()           # gives cached, unused memory back to the device
    opdispatch.cuda.synchronize()           # waits for all work on the device

    s = opdispatch.cuda.Stream()            # a new stream
    with opdispatch.cuda.stream(s):         # (or `with s:`) kernels, copies and allocations go on s
        y = x * 2
    x.record_stream(s)                      # x's memory is not reused before s's work is done
    s.synchronize()
    opdispatch.cuda.current_stream(), opdispatch.cuda.default_stream()

CUDA tensors take their memory from a caching allocator, as torch's do: freed memory stays
reserved for the next tensor of the same stream, and memory_reserved() only drops on
empty_cache() (or when the device runs out and the cache is emptied to retry). Without a device,
or in a build without CUDA, the memory figures are 0 and empty_cache() does nothing (as torch's
do before CUDA is initialised); streams and synchronize() raise opdispatch.Error.
"""
import contextlib
import threading

from opdispatch import _C


def is_built() -> bool:
    return bool(_C._cuda_is_built())


def is_available() -> bool:
    return bool(_C._cuda_is_available())


def device_count() -> int:
    return int(_C._cuda_device_count())


# ----- memory -----

def memory_stats() -> dict:
    """The caching allocator's figures: allocated_bytes, reserved_bytes, peak_allocated_bytes,
    device_allocs and device_frees (cudaMalloc / cudaFree calls so far) and segments (blocks of
    device memory held now)."""
    return dict(_C._cuda_memory_stats())


def memory_allocated() -> int:
    """Bytes of device memory in use by tensors (each rounded up as the allocator hands it out)."""
    return int(_C._cuda_memory_stats()["allocated_bytes"])


def memory_reserved() -> int:
    """Bytes of device memory the caching allocator holds: in use by tensors or cached for reuse."""
    return int(_C._cuda_memory_stats()["reserved_bytes"])


def max_memory_allocated() -> int:
    """The peak of memory_allocated() since the process started or reset_peak_memory_stats()."""
    return int(_C._cuda_memory_stats()["peak_allocated_bytes"])


def reset_peak_memory_stats() -> None:
    """Starts max_memory_allocated() over from memory_allocated()."""
    _C._cuda_reset_peak_memory_stats()


def empty_cache() -> None:
    """Gives the cached device memory that no tensor uses back to the device, so other
    processes (or libraries) can have it. Synchronizes the device when there is any."""
    _C._cuda_empty_cache()


def synchronize() -> None:
    """Blocks until all work queued on the device, on every stream, has finished."""
    _C._cuda_synchronize()


# ----- streams -----

class Stream(_C.Stream):
    """A CUDA stream: a queue of device work that runs in order.

    Stream() makes a new stream that does not synchronize with the default stream
    (cudaStreamNonBlocking); current_stream() and default_stream() wrap existing ones, and such
    a wrapper is valid while the stream it wraps lives. Two Stream objects are equal when they
    wrap the same stream. `with s:` makes s the calling thread's current stream, as
    `with opdispatch.cuda.stream(s):` does. A stream made here is destroyed with its object,
    after the work queued on it has finished.

    It is an opdispatch.Stream (device 'cuda:0', id: the cudaStream_t), so operators with a
    Stream argument take it: `x.record_stream(s)`.
    """

    __slots__ = ("_handle", "_owned", "_previous")

    def __init__(self):
        handle = int(_C._cuda_create_stream())
        super().__init__("cuda:0", handle)
        self._handle = handle
        self._owned = True
        self._previous = {}  # thread id -> the streams `with self:` replaced there, innermost last

    @classmethod
    def _wrap(cls, handle: int) -> "Stream":
        stream = cls.__new__(cls)
        _C.Stream.__init__(stream, "cuda:0", int(handle))
        stream._handle, stream._owned, stream._previous = int(handle), False, {}
        return stream

    @property
    def cuda_stream(self) -> int:
        """The cudaStream_t as an int (0: the legacy default stream)."""
        return self._handle

    def synchronize(self) -> None:
        """Blocks until the work queued on this stream has finished."""
        _C._cuda_stream_synchronize(self._handle)

    def query(self) -> bool:
        """True when all the work queued on this stream has finished."""
        return bool(_C._cuda_stream_query(self._handle))

    def __enter__(self) -> "Stream":
        previous = _C._cuda_set_current_stream(self._handle)
        self._previous.setdefault(threading.get_ident(), []).append(previous)
        return self

    def __exit__(self, *exc_info) -> None:
        stack = self._previous[threading.get_ident()]
        _C._cuda_set_current_stream(stack.pop())
        if not stack:
            del self._previous[threading.get_ident()]

    def __eq__(self, other) -> bool:
        if isinstance(other, Stream):
            return other._handle == self._handle
        return _C.Stream.__eq__(self, other)  # an opdispatch.Stream: the same device and id

    def __hash__(self) -> int:
        return hash(self._handle)

    def __repr__(self) -> str:
        return f"<opdispatch.cuda.Stream cuda_stream={self._handle:#x}>"

    def __del__(self):
        if getattr(self, "_owned", False):
            try:
                _C._cuda_destroy_stream(self._handle)
            except Exception:  # at interpreter exit _C (or the CUDA runtime) may be gone
                pass


def current_stream() -> Stream:
    """The calling thread's current stream: the default stream unless a `with stream(s):` (or
    `with s:`) block has made another one current."""
    return Stream._wrap(_C._cuda_current_stream())


def default_stream() -> Stream:
    """The legacy default stream (handle 0), every thread's current stream to begin with."""
    _C._cuda_current_stream()  # raises, as the other stream functions do, without a device
    return Stream._wrap(0)


@contextlib.contextmanager
def stream(s):
    """Makes `s` the calling thread's current stream inside the block and restores the previous
    one after it: the kernels, copies and allocations of the block go on `s`. `stream(None)`
    changes nothing."""
    if s is None:
        yield None
        return
    previous = _C._cuda_set_current_stream(s.cuda_stream)
    try:
        yield s
    finally:
        _C._cuda_set_current_stream(previous)
