"""opdispatch: the operator library and its dispatcher from Python.

    import opdispatch
    x = opdispatch.tensor([[1., 2.], [3., 4.]])
    y = opdispatch.add(x, x, alpha=2)          # every operator with a `function` variant
    z = x.sum([1], True) + 1                   # methods and Python operators
    opdispatch.zeros(2, 3, dtype=opdispatch.float64)
    x.to("meta")                               # tensor(..., device='meta', size=(2, 2))

Functions (opdispatch.add, zeros, where, ...) and Tensor methods (x.add_, x.view, x.to, ...)
are exactly the yaml operators whose `variants` include `function` / `method`; each call binds
to the first overload whose schema accepts the arguments. Tensors also support + - * / ** @,
comparisons, in-place operators, abs(), basic indexing and bool()/int()/float().

Autograd as in PyTorch: tensor(..., requires_grad=True) and factories' requires_grad=, then
y.backward(), x.grad, y.grad_fn, opdispatch.no_grad(); opdispatch.autograd has backward, grad
and gradcheck.

opdispatch.cuda says whether CUDA kernels were built and a device is present.
opdispatch.load_library(path) loads a compiled operator library (opgen's OpgenOperatorLibrary);
get_include() / get_library_dir() locate an installed runtime's headers and library.
opdispatch.record_operators("ops.yaml") records the operators a block calls, as torchgen's
selection yaml for a selective build.
opdispatch.ops.<ns>.<op>[.<overload>] calls any registered operator, opdispatch.library
registers operators and kernels, opdispatch.dispatcher inspects and steers dispatch.
Runtime failures raise opdispatch.Error (a RuntimeError) whose message names the operator;
arguments that fit no overload raise TypeError naming the function.
"""
# The version of opgen, the generator this runtime is built and released with (opgen/__init__.py);
# a test keeps the two equal, so the runtime needs no opgen at import time to say it.
__version__ = "0.19.0"

from opdispatch import _C  # noqa: E402 - the version is readable even when the extension is not
from opdispatch._C import (  # noqa: F401 - the public API
    Error,
    Storage,
    Stream,
    Tensor,
    dtype,
    bool,
    int32,
    int64,
    float32,
    float64,
    from_numpy,
)
from opdispatch.creation import tensor  # noqa: F401
from opdispatch import autograd, cuda, dispatcher, functionalization, library, ops  # noqa: F401
from opdispatch.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled  # noqa: F401
from opdispatch.functionalization import from_functional, functionalize, is_functional, to_functional  # noqa: F401
from opdispatch.dispatcher import register_device_type  # noqa: F401
from opdispatch.loading import load_library  # noqa: F401
from opdispatch.recording import record_operators  # noqa: F401
from opdispatch.sdk import get_include, get_library_dir  # noqa: F401
from opdispatch import functions as _functions
from opdispatch.autograd import install_autograd as _install_autograd
from opdispatch.indexing import install_indexing as _install_indexing
from opdispatch.operators import install_operators as _install_operators
from opdispatch.printing import install_printing as _install_printing
from opdispatch.tensor_methods import install_methods as _install_methods

_install_methods(Tensor)
_install_operators(Tensor)
_install_indexing(Tensor)
_install_printing(Tensor)
_install_autograd(Tensor)

_FUNCTIONS = _functions.make_functions()
globals().update(_FUNCTIONS)

# Random number generators, when the extension has them.
_RANDOM = [name for name in ("Generator", "manual_seed", "initial_seed", "default_generator") if hasattr(_C, name)]
globals().update({name: getattr(_C, name) for name in _RANDOM})

__all__ = sorted(
    ["Error", "Storage", "Stream", "Tensor", "dtype", "bool", "int32", "int64", "float32", "float64", "from_numpy", "tensor",
     "register_device_type", "cuda", "dispatcher", "library", "ops", "functionalization", "functionalize",
     "is_functional", "to_functional", "from_functional", "load_library", "get_include", "get_library_dir",
     "autograd", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "record_operators"]
    + _RANDOM
    + [name for name in _FUNCTIONS if not name.startswith("_")]
)
