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
- ``tree``         generate a whole output tree: write-if-changed, stale removal, umbrellas
"""
from .config import CodegenConfig, DEFAULT_KEYS
from .tree import GenerateReport, generate_tree

__all__ = ["CodegenConfig", "DEFAULT_KEYS", "GenerateReport", "generate_tree"]
