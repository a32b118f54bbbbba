"""Per-operator-group C++ generation (a group's inputs and their key are opgen/cache/inputs.py).

- ``engine/``    the engine, which knows no layer: config, layout, render, layer (what a layer
                 declares), jobs (a job per group with its key), plan (files, producing,
                 umbrellas, stale files, state, report)
- ``layers/``    the generated layers (operators, declarations, methods, kernels, functionalize,
                 autograd) and the external backends' and lazy IR files
- ``registry``   ``LAYERS``: the in-tree layers, in order (the one list to extend)
- ``group``      ``GroupCodegen``: one group's files, from the registry's layers and its unit
- ``sections``   the jobs and sections of a run, built from the layers for the engine
- ``tree``       ``opgen generate``: a plan run over a whole output tree

Adding a layer: docs/architecture.md#adding-a-generated-layer.
"""
from .engine.config import CodegenConfig, DEFAULT_KEYS
from .engine.plan import CodegenPlan, Report
from .tree import generate_tree

__all__ = ["CodegenConfig", "CodegenPlan", "DEFAULT_KEYS", "Report", "generate_tree"]
