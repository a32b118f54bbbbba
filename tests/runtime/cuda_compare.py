"""What the CUDA tests share: random operands, and running one function on cpu tensors and on
the same values moved to cuda, the results compared on the host."""
import numpy as np

DEVICE = "cuda"


def random_array(rng, shape, dtype):
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in ("int32", "int64"):
        return rng.integers(-9, 10, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def host(t):
    return t.to("cpu").numpy()


def on_device(o, array):
    return o.from_numpy(np.array(array)).to(DEVICE)  # a copy: the test keeps `array` as it was


def assert_same(cpu_result, cuda_result, exact=False, tol=None):
    assert cuda_result.device == DEVICE, cuda_result.device
    expected, got = cpu_result.numpy(), host(cuda_result)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if exact or expected.dtype.kind in "biu":
        np.testing.assert_array_equal(got, expected)
    else:
        tol = tol or (1e-5 if expected.dtype == np.float32 else 1e-12)
        np.testing.assert_allclose(got, expected, rtol=tol, atol=tol, equal_nan=True)


def compare(o, fn, *arrays, exact=False, tol=None):
    """fn on cpu tensors vs fn on the same values on cuda."""
    cpu_result = fn(*[o.from_numpy(np.ascontiguousarray(a)) for a in arrays])
    cuda_result = fn(*[on_device(o, a) for a in arrays])
    assert_same(cpu_result, cuda_result, exact, tol)
