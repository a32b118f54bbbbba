"""A generic SCons toolset that knows nothing of operators: ccache, distcc, nvcc, cuBLAS, a BLAS, a precompiled
header, objects depending on the compiler's version, and build output a person can follow.

Each tool is a module here with ``exists(env)`` and ``generate(env)``, loaded by name:

    from opgen.scons import TOOLPATH
    env = Environment(tools=["default", "ccache", "build_output"], toolpath=[TOOLPATH])

The modules without those functions (messages, programs, wrappers; cuda_arch, cuda_probes,
probe_cache and cublas_discovery, which import no SCons) are what the tools share;
no tool imports another tool's module.
"""
