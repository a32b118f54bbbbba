"""Per-operator-group C++ generation.

- ``config``       which dispatch keys a build generates kernels for
- ``inputs``       a group's inputs field by field, their xxh3_128 key, and explain() of two records
- ``jobs``         one job per group with its key (the hash of its inputs); a model's keys are
                   remembered in the cache
- ``layout``       which files a group produces (known without rendering)
- ``kernels``      the kernel wrappers of one group at one dispatch key
- ``group``        template contexts for each file of a group
- ``render``       jinja2 rendering with the fixed banner
- ``backend``      an external backend's files per group (declarations, registrations)
- ``plan``         the one engine: jobs, their files, producing, umbrellas, stale files, state, report
- ``tree``         ``opgen generate``: a plan run over a whole output tree
"""
from .config import CodegenConfig, DEFAULT_KEYS
from .plan import CodegenPlan, Report
from .tree import generate_tree

__all__ = ["CodegenConfig", "CodegenPlan", "DEFAULT_KEYS", "Report", "generate_tree"]
