"""opdispatch.xla: the sample external backend (csrc/backends/xla/, built by
`scons --backend=xla`). Importing this module loads it: tensors on device "xla" then run the
backend's kernels, and operators it has no kernel for run on the CPU through its fallback.

    import opdispatch as od
    import opdispatch.xla
    x = od.ones([2, 2], device=opdispatch.xla.device())
    od.cos(x + x)                      # add: an XLA kernel; cos: the CPU fallback
    opdispatch.xla.metrics()           # {'kernels': {'aten::add.Tensor': 1, ...},
                                       #  'fallbacks': {'aten::cos': 1}, 'autograd': {}, 'trace': [...]}
    opdispatch.xla.reset_metrics()

In a build without the backend, is_built() is False and metrics() / reset_metrics() raise
RuntimeError; importing this module still works.
"""
from opdispatch.loading import BackendExtension

_backend = BackendExtension("xla")
is_built, device, reset_metrics = _backend.is_built, _backend.device, _backend.reset_metrics


def metrics() -> dict:
    """Calls since the last reset, per operator name ("aten::add.Tensor"): 'kernels' (the
    backend's own kernels; generated out= and in-place variants count as their functional
    kernel), 'fallbacks' (operators run on the CPU by the fallback), 'autograd' (AutogradXLA
    kernels), and 'trace': (kind, operator) pairs in call order (the latest 4096)."""
    return _backend.require().metrics()

