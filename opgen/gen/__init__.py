"""Per-operator-group C++ generation (a group's inputs and their key are opgen/cache/inputs.py).

- ``config``         which dispatch keys a build generates kernels for
- ``layout``         which files a group produces, and where (known without rendering)
- ``families``       relations inside a group: the out= function a function delegates to, siblings
- ``kernels``        the kernel wrappers of one group at one dispatch key (``WrapperKind``)
- ``functionalize``  the kernels a group registers at the Functionalize key
- ``autograd_plan``  which functions get Autograd and ADInplaceOrView kernels, and of which kind
- ``autograd_formulas`` derivatives.yaml formulas as C++ over the method-free API (op:: calls),
                     with the operator groups whose ops/<g>.h they need (parsed by ``cpp_expr``)
- ``group``          template contexts for each in-tree file of a group
- ``backend``        an external backend's files per group (declarations, registrations)
- ``lazy``           a lazy backend's IR nodes and generated kernels
- ``umbrellas``      the umbrella headers that include every group's headers
- ``python_table``   the Python package's operator table
- ``render``         jinja2 rendering with the fixed banner
- ``jobs``           one job per group (``JobId``) with its key, the hash of its inputs; a model's
                     keys are remembered in the cache
- ``plan``           the one engine: jobs, their files, producing, umbrellas, stale files, state, report
- ``tree``           ``opgen generate``: a plan run over a whole output tree
"""
from .config import CodegenConfig, DEFAULT_KEYS
from .plan import CodegenPlan, Report
from .tree import generate_tree

__all__ = ["CodegenConfig", "CodegenPlan", "DEFAULT_KEYS", "Report", "generate_tree"]
