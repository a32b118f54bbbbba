"""opdispatch.lazy: the lazy-tensor backend (csrc/backends/lazy/, built by
`scons --backend=lazy`). Importing this module loads it. Tensors on device "lazy" record IR
instead of computing; mark_step() runs everything pending as one graph, through a cache of
compiled graphs, and t.to("cpu") runs what t needs.

    import opdispatch as od
    import opdispatch.lazy as lazy
    x = od.tensor([[1.0, 2.0], [3.0, 4.0]]).to("lazy")   # a functional wrapper of a lazy tensor
    y = x.view(4)                                          # recorded as aten::view_copy
    y.add_(1)                                              # x sees it (functionalization)
    print(lazy.ir_text(x))                                 # the pending graph, one node a line
    lazy.mark_step()                                       # one graph: compiled, cached, run
    x.to("cpu")                                            # tensor([[2., 3.], [4., 5.]])
    lazy.metrics()                                         # {'ir_nodes_created': ..., 'graphs_compiled': 1, ...}

Reading values (to("cpu"), printing, item(), tolist(), numpy()) runs what the tensor needs.
Operators the backend does not list run on the CPU through its fallback (metrics()["fallbacks"]).
In a build without the backend, is_built() is False and the other functions raise RuntimeError;
importing this module still works.
"""
from opdispatch import _C, creation
from opdispatch.loading import BackendExtension

_backend = BackendExtension("lazy")
is_built, device, reset_metrics = _backend.is_built, _backend.device, _backend.reset_metrics


def _read_through_cpu(tensor_type: type) -> None:
    """item(), tolist(), numpy() and __array__ of a lazy tensor read a cpu copy of it (running
    what it needs), so float(t), bool(t), int(t) and f"{t:.3f}", which use item(), work too."""
    for name in ("item", "tolist", "numpy", "__array__"):
        read = getattr(tensor_type, name)

        def on_cpu(self, *args, _read=read, **kwargs):
            if self.device.split(":")[0] == "lazy":
                self = self.to("cpu")
            return _read(self, *args, **kwargs)

        on_cpu.__name__, on_cpu.__doc__ = name, read.__doc__
        setattr(tensor_type, name, on_cpu)


if is_built():
    creation.use_device_kernels("lazy")  # opdispatch.tensor(..., device="lazy") and printing go through _to_copy
    _read_through_cpu(_C.Tensor)


def _tensors(name: str, tensors) -> list:
    for t in tensors:
        if not isinstance(t, _C.Tensor):
            raise TypeError(f"{name}: expected opdispatch.Tensor arguments, got {type(t).__name__}")
    return list(tensors)


def mark_step() -> None:
    """The step boundary: runs the pending IR of every live lazy tensor as one graph (compiled on
    the first step of its structure, found in the graph cache after) and gives them its results."""
    _backend.require().mark_step()


def sync(*tensors) -> None:
    """Runs what the given lazy tensors need, and nothing else."""
    _backend.require().sync(_tensors("sync", tensors))


def ir_text(*tensors) -> str:
    """The pending graph of `tensors` (of every live lazy tensor when none are given), one node a
    line: `%2 = aten::add.Tensor(%0, %1), alpha=1 -> float32[2, 3]`; inputs are
    `lazy::device_data()`, and the last line names the roots."""
    return _backend.require().ir_text(_tensors("ir_text", tensors))


def metrics() -> dict:
    """Counters since the last reset: ir_nodes_created, ir_nodes_reused (a node recorded again
    with the same operands and attributes), graphs_compiled, graph_cache_hits,
    graph_cache_misses, graphs_executed, nodes_executed (lowered calls), tensors_materialized,
    fallbacks ({operator: calls} run on the CPU by the fallback), last_plan ({'nodes', 'buffers'}
    of the last graph run: buffers are the slots its values needed at most) and
    graph_cache_size (plans cached; kept across resets)."""
    return _backend.require().metrics()

