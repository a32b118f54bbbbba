"""The quick tier: what a developer runs after each edit (`python -m pytest -q tests -m quick`,
under 2 minutes on 2 cores once the checkout is built). tests/conftest.py marks every test whose
node id matches one of these patterns (fnmatch) `quick`.

It keeps one of each kind of check: the model and its error messages, codegen of the repository's
yaml and its determinism, the codegen cache's store, selections, the SCons options' errors and a
codegen-only build, the import layering, and the checkout's own build (build/, incremental after
an edit: the runtime room's fixtures rebuild it) running every Python and operator test. It leaves
out what builds a tree of its own (the session's built project and its copies, backends, the CUDA
emulator, downstream projects, remote caches) and the PyTorch-wide parity checks: the full command
runs those.
"""
import fnmatch

QUICK = (
    # The model: parsing, validation rules and their messages, the CLI, the parse cache.
    "tests/model/*",
    "tests/selection/*",
    # Codegen of the repository's yaml: inputs, signatures, incremental writes, determinism (hash
    # seeds and entry order: test_inputs, test_python_table, model/test_cli; test_generate_determinism
    # regenerates PyTorch's whole yaml four times, the full run's).
    "tests/codegen/test_autograd_plan.py::*",
    "tests/codegen/test_backend_variants.py::*",
    "tests/codegen/test_generate_incremental.py::*",
    "tests/codegen/test_generate_inputs.py::*",
    "tests/codegen/test_handle_names.py::*",
    "tests/codegen/test_inputs.py::*",
    "tests/codegen/test_jobs.py::*",
    "tests/codegen/test_kernel_declarations.py::*",
    "tests/codegen/test_layer_registry.py::*",
    "tests/codegen/test_python_table.py::*",
    "tests/codegen/test_signatures.py::*",
    "tests/codegen/test_view_copy.py::*",
    "tests/codegen/test_writer.py::*",
    "tests/cache/test_store.py::*",
    "tests/cache/test_autograd_cache.py::*",
    "tests/cache/test_autograd_carry.py::test_repo_*",  # the autograd model carried across operator-yaml edits
    "tests/cache/test_stats_report.py::*",
    # SCons without a build of its own: option errors, the patches, a codegen-only build.
    "tests/scons/test_options.py::*",
    "tests/scons/test_scons_patches.py::*",
    "tests/scons/test_command_signatures.py::*",
    "tests/scons/test_cuda_arch.py::*",
    "tests/scons/test_cublas_discovery.py::*",
    "tests/scons/test_codegen_only.py::*",
    "tests/scons/test_model_build.py::*",
    # The checkout's build, reused from run to run: the operators, autograd and the Python API.
    "tests/runtime/test_ops_*",
    "tests/runtime/test_py_[!p]*",  # test_py_permutations walks every registration order: full run
    "tests/runtime/test_autograd_gradcheck.py::*",
    "tests/runtime/test_autograd_property.py::*",
    "tests/runtime/test_autograd_copy.py::*",
    "tests/runtime/test_functionalization*",
    "tests/runtime/test_generated_ops.py::*",
    "tests/runtime/test_parity_runtime.py::*",
    # Layering, read from the sources (the per-module import in a fresh interpreter is the full run's).
    "tests/test_import_directions.py::test_every_room_is_known",
    "tests/test_import_directions.py::test_imports_inside_functions_point_downward_too*",
    "tests/test_import_directions.py::test_only_the_plugin_imports_scons",
    "tests/test_import_directions.py::test_the_engine_imports_no_layer*",
    "tests/test_suite_isolation.py::*",
    "tests/test_quick_tier.py::*",
)


def is_quick(nodeid: str) -> bool:
    return any(fnmatch.fnmatchcase(nodeid, pattern) for pattern in QUICK)
