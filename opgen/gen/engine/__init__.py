"""The codegen engine: what runs any generated layer and knows none of them.

- ``config``  which dispatch keys a build generates kernels for
- ``layout``  which files a group produces, and where (known without rendering)
- ``render``  jinja2 rendering with the fixed banner
- ``layer``   ``Layer``: what a generated layer declares (files, rendering, keys, content fields)
- ``jobs``    one job per group (``JobId``) with its key, the hash of its inputs; a model's keys
              are remembered in the cache
- ``plan``    the one engine: jobs, their files, producing, umbrellas, stale files, state, report
- ``workers`` rendering in worker processes forked once the jobs exist (a cold run's every core)

Nothing here imports opgen.gen.layers or the modules that assemble them (gen/group.py,
gen/registry.py, gen/sections.py, gen/tree.py), except for type annotations;
tests/test_import_directions.py checks it.
"""
