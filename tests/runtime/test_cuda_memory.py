"""opdispatch.cuda's memory and streams: the caching allocator's figures, empty_cache, running
out of memory (a huge request, and real pressure: the device filled), synchronize, Stream and
the stream context, Tensor.record_stream.

The tests of a machine without a device run everywhere and check that the memory figures are 0
and that streams raise opdispatch.Error; the others need a GPU and skip without one
(opdispatch._C._cuda_is_available()). The allocator's pool logic itself is tested in C++ with a
fake device (csrc/tests/test_caching_allocator.cpp).
"""
import gc
import os
import threading

import numpy as np
import pytest

MiB = 1 << 20
GiB = 1 << 30


@pytest.fixture(scope="module")
def built(opdispatch):
    return opdispatch._C._cuda_is_built()


@pytest.fixture(scope="module")
def no_device(opdispatch):
    """The opdispatch package, on a machine (or build) without a CUDA device."""
    if opdispatch._C._cuda_is_available():
        pytest.skip("a CUDA device is available")
    return opdispatch


def no_device_message(built):
    return "CUDA: no CUDA device is available (" if built else "built without CUDA"


def format_bytes(n):
    """As the allocator's messages write sizes: "512 bytes", "1.50 MiB"."""
    if n < 1024:
        return f"{n} byte" if n == 1 else f"{n} bytes"
    value, units = n / 1024, ["KiB", "MiB", "GiB", "TiB", "PiB"]
    while value >= 1024 and len(units) > 1:
        value, units = value / 1024, units[1:]
    return f"{value:.2f} {units[0]}"


def settle(od):
    """Frees the tensors nobody holds and waits for the device: the figures are then stable."""
    gc.collect()
    od.cuda.synchronize()


# ----- without a device (runs everywhere) -----

def test_memory_figures_are_zero_without_a_device(no_device):
    cuda = no_device.cuda
    assert (cuda.memory_allocated(), cuda.memory_reserved(), cuda.max_memory_allocated()) == (0, 0, 0)
    cuda.reset_peak_memory_stats()
    cuda.empty_cache()  # nothing cached: nothing to do, no error
    assert cuda.memory_stats() == {"allocated_bytes": 0, "reserved_bytes": 0, "peak_allocated_bytes": 0,
                                   "device_allocs": 0, "device_frees": 0, "segments": 0}


@pytest.mark.parametrize("call", ["Stream", "current_stream", "default_stream", "synchronize"])
def test_streams_and_synchronize_raise_without_a_device(no_device, built, call):
    with pytest.raises(no_device.Error) as info:
        getattr(no_device.cuda, call)()
    assert no_device_message(built) in str(info.value)


def test_a_failed_cuda_allocation_leaves_the_figures_at_zero(no_device):
    with pytest.raises(no_device.Error):
        no_device.empty([4], device="cuda")
    assert (no_device.cuda.memory_allocated(), no_device.cuda.memory_reserved()) == (0, 0)


def test_stream_none_is_a_no_op_context(no_device):
    with no_device.cuda.stream(None) as s:
        assert s is None


def test_the_public_functions_have_docstrings(opdispatch):
    cuda = opdispatch.cuda
    for name in ["memory_stats", "memory_allocated", "memory_reserved", "max_memory_allocated",
                 "reset_peak_memory_stats", "empty_cache", "synchronize", "Stream", "current_stream",
                 "default_stream", "stream"]:
        assert getattr(cuda, name).__doc__, name
    for name in ["synchronize", "query", "cuda_stream"]:
        assert getattr(cuda.Stream, name).__doc__, name


# ----- with a device: the caching allocator -----

def test_freeing_and_allocating_again_reuses_the_cached_block(cuda):
    settle(cuda)
    allocated, reserved = cuda.cuda.memory_allocated(), cuda.cuda.memory_reserved()
    x = cuda.empty([MiB], dtype=cuda.float32, device="cuda")  # 4 MiB
    assert cuda.cuda.memory_allocated() - allocated >= 4 * MiB
    assert cuda.cuda.memory_reserved() >= reserved
    reserved_with_x = cuda.cuda.memory_reserved()
    device_allocs = cuda.cuda.memory_stats()["device_allocs"]
    del x
    assert cuda.cuda.memory_allocated() == allocated
    assert cuda.cuda.memory_reserved() == reserved_with_x  # cached, not given back
    y = cuda.empty([MiB], dtype=cuda.float32, device="cuda")
    assert cuda.cuda.memory_reserved() == reserved_with_x
    assert cuda.cuda.memory_stats()["device_allocs"] == device_allocs  # no cudaMalloc
    del y
    assert cuda.cuda.memory_allocated() == allocated


def test_peak_and_its_reset(cuda):
    settle(cuda)
    cuda.cuda.reset_peak_memory_stats()
    base = cuda.cuda.memory_allocated()
    assert cuda.cuda.max_memory_allocated() == base
    x = cuda.empty([16 * MiB], dtype=cuda.float32, device="cuda")  # 64 MiB
    del x
    assert cuda.cuda.max_memory_allocated() >= base + 64 * MiB
    cuda.cuda.reset_peak_memory_stats()
    assert cuda.cuda.max_memory_allocated() == cuda.cuda.memory_allocated() == base


def test_empty_cache_gives_unused_memory_back(cuda):
    settle(cuda)
    cuda.cuda.empty_cache()
    reserved = cuda.cuda.memory_reserved()  # only segments that tensors still use
    x = cuda.empty([16 * MiB], dtype=cuda.float32, device="cuda")  # 64 MiB
    assert cuda.cuda.memory_reserved() >= cuda.cuda.memory_allocated() >= 64 * MiB
    del x
    assert cuda.cuda.memory_reserved() >= reserved  # x's memory stays cached ...
    cuda.cuda.empty_cache()
    assert cuda.cuda.memory_reserved() == reserved  # ... until the cache is emptied
    assert cuda.cuda.memory_reserved() >= cuda.cuda.memory_allocated()
    if cuda.cuda.memory_allocated() == 0:  # no tensor left anywhere: nothing stays reserved
        assert cuda.cuda.memory_reserved() == 0


def test_running_out_of_memory_raises_and_the_process_carries_on(cuda):
    settle(cuda)
    allocated = cuda.cuda.memory_allocated()
    with pytest.raises(cuda.Error) as info:
        cuda.empty([1 << 40], dtype=cuda.float32, device="cuda")  # 4 TiB
    message = str(info.value)
    assert "CUDA out of memory: tried to allocate 4.00 TiB" in message, message
    assert "allocated" in message and "reserved by the caching allocator" in message, message
    assert cuda.cuda.memory_allocated() == allocated
    a = cuda.tensor([1.0, 2.0, 3.0]).to("cuda")
    assert (a * 2).to("cpu").numpy().tolist() == [2.0, 4.0, 6.0]


def test_tensors_stay_correct_through_reuse(cuda):
    settle(cuda)
    for step in range(20):
        values = np.arange(1000, dtype=np.float32) + step
        t = cuda.from_numpy(values).to("cuda")
        np.testing.assert_array_equal((t + 1).to("cpu").numpy(), values + 1)


# ----- with a device: streams -----

def test_the_default_stream_is_current_to_begin_with(cuda):
    default = cuda.cuda.default_stream()
    assert default.cuda_stream == 0
    assert cuda.cuda.current_stream() == default
    assert default.query() is True
    default.synchronize()
    cuda.cuda.synchronize()


def test_streams_compare_by_handle(cuda):
    s, t = cuda.cuda.Stream(), cuda.cuda.Stream()
    assert s == s and s != t and s != cuda.cuda.default_stream()
    assert len({s, t, cuda.cuda.Stream._wrap(s.cuda_stream)}) == 2
    assert s.cuda_stream != 0
    assert s.query() is True  # nothing queued yet
    assert "cuda_stream=" in repr(s)


def test_work_inside_a_stream_context_is_correct_after_synchronizing(cuda):
    s = cuda.cuda.Stream()
    values = np.arange(1 << 16, dtype=np.float32)
    with cuda.cuda.stream(s) as entered:
        assert entered is s
        assert cuda.cuda.current_stream() == s
        a = cuda.from_numpy(values).to("cuda")
        b = a * 2 + 1
    assert cuda.cuda.current_stream() == cuda.cuda.default_stream()
    s.synchronize()
    assert s.query() is True
    np.testing.assert_array_equal(b.to("cpu").numpy(), values * 2 + 1)


def test_with_stream_nests_and_restores(cuda):
    s, t = cuda.cuda.Stream(), cuda.cuda.Stream()
    with s:
        assert cuda.cuda.current_stream() == s
        with cuda.cuda.stream(t):
            assert cuda.cuda.current_stream() == t
            with s:
                assert cuda.cuda.current_stream() == s
            assert cuda.cuda.current_stream() == t
        assert cuda.cuda.current_stream() == s
    assert cuda.cuda.current_stream() == cuda.cuda.default_stream()
    # An exception inside the block restores the stream too.
    with pytest.raises(ValueError):
        with cuda.cuda.stream(s):
            raise ValueError("inside")
    assert cuda.cuda.current_stream() == cuda.cuda.default_stream()


def test_the_current_stream_is_per_thread(cuda):
    s = cuda.cuda.Stream()
    seen = []
    with cuda.cuda.stream(s):
        worker = threading.Thread(target=lambda: seen.append(cuda.cuda.current_stream()))
        worker.start()
        worker.join()
        assert cuda.cuda.current_stream() == s
    assert seen == [cuda.cuda.default_stream()]


def test_memory_freed_on_a_stream_is_cached_for_that_stream(cuda):
    settle(cuda)
    s = cuda.cuda.Stream()
    allocated = cuda.cuda.memory_allocated()
    with cuda.cuda.stream(s):
        x = cuda.empty([MiB], dtype=cuda.float32, device="cuda")
        del x
        device_allocs = cuda.cuda.memory_stats()["device_allocs"]
        y = cuda.empty([MiB], dtype=cuda.float32, device="cuda")  # the same block, again
        assert cuda.cuda.memory_stats()["device_allocs"] == device_allocs
        del y
    s.synchronize()
    assert cuda.cuda.memory_allocated() == allocated


# ----- record_stream -----

def test_record_stream_of_a_cpu_tensor_raises(opdispatch):
    t = opdispatch.empty([4])
    with pytest.raises(opdispatch.Error) as info:
        t.record_stream(opdispatch.Stream("cuda:0", 0))
    assert "could not run aten::record_stream with dispatch key CPU" in str(info.value)
    with pytest.raises(TypeError):
        t.record_stream(0)  # not a stream


def test_od_cuda_streams_are_opdispatch_streams(cuda):
    s = cuda.cuda.Stream()
    assert isinstance(s, cuda.Stream) and isinstance(cuda.cuda.current_stream(), cuda.Stream)
    assert (s.device, s.id) == ("cuda:0", s.cuda_stream)
    assert s == cuda.Stream("cuda:0", s.cuda_stream)
    assert cuda.cuda.default_stream().id == 0


def test_record_stream_on_a_side_stream_keeps_the_memory_until_that_work_is_done(cuda):
    settle(cuda)
    cuda.cuda.empty_cache()
    values = np.arange(1 << 18, dtype=np.float32)  # 1 MiB: a small-pool block
    x = cuda.from_numpy(values).to("cuda")  # allocated on the default stream
    ptr = x.untyped_storage().data_ptr()
    s = cuda.cuda.Stream()
    cuda.cuda.default_stream().synchronize()  # s does not wait for the default stream by itself
    with cuda.cuda.stream(s):
        y = x * 2 + 1  # reads x on s
    x.record_stream(s)
    x.record_stream(cuda.cuda.current_stream())  # the allocation stream: nothing to record
    allocated = cuda.cuda.memory_allocated()
    del x
    # Pending until s's work up to the free is done: still counted as allocated.
    assert cuda.cuda.memory_allocated() == allocated
    s.synchronize()
    device_allocs = cuda.cuda.memory_stats()["device_allocs"]
    z = cuda.from_numpy(-values).to("cuda")  # s is done: x's block is free again
    assert z.untyped_storage().data_ptr() == ptr
    assert cuda.cuda.memory_stats()["device_allocs"] == device_allocs
    assert cuda.cuda.memory_allocated() == allocated
    np.testing.assert_array_equal(y.to("cpu").numpy(), values * 2 + 1)
    np.testing.assert_array_equal(z.to("cpu").numpy(), -values)
    del y, z
    s.synchronize()


def test_empty_cache_waits_for_pending_blocks_and_gives_them_back(cuda):
    settle(cuda)
    cuda.cuda.empty_cache()
    allocated, reserved = cuda.cuda.memory_allocated(), cuda.cuda.memory_reserved()
    s = cuda.cuda.Stream()
    x = cuda.empty([16 * MiB], dtype=cuda.float32, device="cuda")  # 64 MiB: a segment of its own
    with s:
        x.fill_(1.0)
    x.record_stream(s)  # an od.cuda.Stream, or the opdispatch.Stream it is
    x.record_stream(cuda.Stream("cuda", s.cuda_stream))
    del x
    assert cuda.cuda.memory_allocated() == allocated + 64 * MiB  # pending
    cuda.cuda.empty_cache()
    assert (cuda.cuda.memory_allocated(), cuda.cuda.memory_reserved()) == (allocated, reserved)


def test_record_stream_of_a_stream_that_is_not_one_raises(cuda):
    x = cuda.empty([4], device="cuda")
    for stream, message in [
            (cuda.Stream("cpu", 0), "record_stream: the stream is on cpu, not on the tensor's device cuda"),
            (cuda.Stream("cuda:1", 0), "the stream is on cuda:1, not on the tensor's device cuda"),
            (cuda.Stream("cuda:0", 12345), "is not a stream of this process"),
            (cuda.Stream("cuda:0", -1), "is not a stream of this process")]:
        with pytest.raises(cuda.Error) as info:
            x.record_stream(stream)
        assert message in str(info.value), str(info.value)
    s = cuda.cuda.Stream()
    handle = s.cuda_stream
    del s  # destroyed: its handle names no stream any more
    gc.collect()
    with pytest.raises(cuda.Error, match="is not a stream of this process"):
        x.record_stream(cuda.Stream("cuda:0", handle))


# ----- with a device: running out of memory for real -----

def test_filling_the_device_raises_out_of_memory_and_empty_cache_recovers(cuda):
    if os.environ.get("CUDA_EMULATOR") == "1":
        pytest.skip("the emulator's device memory is the host's: filling it would fill the machine")
    settle(cuda)
    cuda.cuda.empty_cache()
    reserved = cuda.cuda.memory_reserved()
    held, message = [], None
    try:
        for _ in range(64):  # 4 GiB each: 256 GiB at most
            try:
                held.append(cuda.empty([GiB], dtype=cuda.float32, device="cuda"))
            except cuda.Error as error:
                message = str(error)
                break
        if message is None:
            pytest.skip("the device holds 256 GiB more")
        # The figures at the failure, as the allocator left them (the cache emptied to retry).
        allocated_now, reserved_now, count = cuda.cuda.memory_allocated(), cuda.cuda.memory_reserved(), len(held)
    finally:
        del held[:]
        cuda.cuda.empty_cache()
    # The dispatcher names the operator first: "aten::empty.memory_format: CUDA out of memory: ..."
    assert "CUDA out of memory: tried to allocate 4.00 GiB; " in message, message
    assert f"; {format_bytes(allocated_now)} allocated, {format_bytes(reserved_now)} reserved by the caching allocator" \
        in message, message
    assert reserved_now >= allocated_now >= count * 4 * GiB
    assert cuda.cuda.memory_reserved() == reserved  # every 4 GiB segment went back
    again = cuda.empty([GiB], dtype=cuda.float32, device="cuda")  # the device has room again
    del again
    cuda.cuda.empty_cache()
    a = cuda.tensor([1.0, 2.0, 3.0]).to("cuda")
    assert (a * 2).to("cpu").numpy().tolist() == [2.0, 4.0, 6.0]
