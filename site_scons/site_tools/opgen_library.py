"""SCons tool: another project's operator library, built against an installed opdispatch runtime.

    env.OpgenOperatorLibrary("myops", yaml="myops.yaml", kernels=Glob("kernels/*.cpp"))
        -> [build/libmyops.so]
    env.OpgenBackendLibrary("mybackend", backend_yaml="mybackend.yaml", kernels=Glob("backend/*.cpp"))
        -> [build/libmybackend.so]: kernels for the runtime's own operators at a backend key

Both go through the tools the runtime's own build uses: the yaml is loaded by opgen_model,
each operator group is its own node over opgen's codegen plan (opgen_codegen, into
<build_dir>/<name>/gen), group objects are packed into sharded archives linked whole (their
static registrations must survive), and compiles go through ccache when the opgen tool loaded
it.  The runtime's headers and library come from opgen_sdk.find_runtime ($OPGEN_RUNTIME or the
installed opdispatch package).  Load the result with ``opdispatch.load_library(path)``.

Construction variables: OPGEN_GENERATED_CXXFLAGS (default -O1: the generated glue, as
in-tree) and OPGEN_KERNEL_CXXFLAGS (default -O2) are appended to CXXFLAGS of the group units
and of the kernels.
"""
import os

from opgen_model import stop  # site_tools is on sys.path while tools load
from opgen_sdk import find_runtime

from opgen.errors import Diagnostic, OpgenError
from opgen.gen.config import DEFAULT_KEYS, CodegenConfig
from opgen.gen.layout import api_header
from opgen.model.dispatch_keys import DispatchKey


def _build_env(env, runtime, gen_dir):
    """Compiles against the generated files first, then the runtime's headers; links -lopdispatch."""
    build_env = env.Clone()
    build_env.Append(
        CPPPATH=[gen_dir, runtime.include_dir],
        # As in-tree: including api/tensor.h (every operator's methods) is a compile error.
        CPPDEFINES=["OP_ASSERT_NO_TENSOR_METHODS"],
        # -fno-gnu-unique: g++ otherwise marks inline functions' statics STB_GNU_UNIQUE, and a
        # library holding one can never be unloaded (dlclose would keep its registrations).
        CXXFLAGS=["-std=c++17", "-Wall", "-fno-gnu-unique"],
        # No object names the project's directory, so ccache hits across checkouts.
        CCFLAGS=["$(", "-ffile-prefix-map=" + env.Dir("#").abspath + "=.", "$)"],
        LIBS=["opdispatch"],
        LIBPATH=[runtime.library_dir],
        RPATH=[runtime.library_dir],
    )
    return build_env


def _objects(env, sources_by_group, obj_dir):
    """{group: [object]}, each group's unit compiled with the generated code's flags."""
    gen_env = env.Clone()
    # Content, not timestamps: a source regenerated in this very run must recompile (SCons issue 2980).
    gen_env.Decider("content")
    gen_env.Append(CXXFLAGS=["$OPGEN_GENERATED_CXXFLAGS"])
    return {group: [gen_env.SharedObject(f"{obj_dir}/ops/{os.path.splitext(source.name)[0]}", source)
                    for source in sources]
            for group, sources in sorted(sources_by_group.items())}


def _kernel_objects(env, kernels, obj_dir):
    """Each kernel's object at its path in the project (kernels/a.cpp -> <obj_dir>/kernels/a.os)."""
    kernel_env = env.Clone()
    kernel_env.Append(CXXFLAGS=["$OPGEN_KERNEL_CXXFLAGS"])
    objects = []
    for node in _nodes(env, kernels):
        relative = node.srcnode().get_path(env.Dir("#"))
        stem = os.path.splitext(relative if not relative.startswith("..") else node.name)[0]
        objects += kernel_env.SharedObject(f"{obj_dir}/{stem}", node)
    return objects


def _nodes(env, files):
    return env.Flatten([env.arg2nodes(files, env.File)])


def _kernel_dir(env, kernels):
    """Where the kernels are, for messages: their one directory relative to the project, else '.'."""
    root = env.Dir("#").abspath
    directories = {os.path.relpath(os.path.dirname(node.srcnode().abspath), root) for node in _nodes(env, kernels)}
    return directories.pop() if len(directories) == 1 else "."


def _tags_for(env, yaml, tags, runtime):
    """tags.yaml beside the yaml when there is one, else the runtime's (its tags are known)."""
    if tags is not None:
        return tags
    beside = os.path.join(os.path.dirname(env.File(yaml).srcnode().abspath), "tags.yaml")
    return beside if os.path.isfile(beside) else runtime.tags


def _check_names(model, runtime):
    """A group named like one of the runtime's would shadow its headers (ops/<g>.h) and C++
    names (op::<g>) in every kernel that includes both; stop with the yaml lines."""
    clashes = [Diagnostic(min(f.location for f in group.functions),
                          f"operator group '{group.name}' has the name of one of the runtime's operator groups "
                          f"({api_header(group.name)}, op::{group.name}); rename the operator")
               for group in model.operator_groups
               if os.path.isfile(os.path.join(runtime.include_dir, api_header(group.name)))]
    if clashes:
        stop(OpgenError(clashes), "operator names clash with the runtime's; nothing was built")


def _dispatch_keys(name, keys):
    """``keys`` as DispatchKeys (names or DispatchKey values); DEFAULT_KEYS when None."""
    if keys is None:
        return DEFAULT_KEYS
    try:
        return tuple(DispatchKey(str(getattr(key, "value", key))) for key in keys)
    except ValueError as exc:
        stop(None, f"OpgenOperatorLibrary('{name}'): keys: {exc}")


def _operator_library(env, name, yaml, kernels=(), tags=None, keys=None, build_dir="build"):
    runtime = find_runtime(env)
    model = env.OpgenModel(yaml, tags=_tags_for(env, yaml, tags, runtime))
    _check_names(model, runtime)
    gen_dir = f"{build_dir}/{name}/gen"
    obj_dir = f"{build_dir}/{name}/obj"
    codegen = env.OpgenCodegen(model, gen_dir, config=CodegenConfig(keys=_dispatch_keys(name, keys)))
    build_env = _build_env(env, runtime, gen_dir)
    archives = build_env.OpgenArchives(_objects(build_env, codegen.sources_by_group, obj_dir), obj_dir)
    return build_env.OpgenWholeArchiveLibrary(f"{build_dir}/{name}", _kernel_objects(build_env, kernels, obj_dir), archives)


def _backend_library(env, name, backend_yaml, kernels=(), yaml=None, tags=None, build_dir="build"):
    """Registrations of a backend yaml's kernels (and the out=/in-place wrappers derived from
    them) for the operators of ``yaml`` (default: the runtime's own, installed with it)."""
    runtime = find_runtime(env)
    if yaml is None:
        if not runtime.yaml or not os.path.isfile(runtime.yaml):
            stop(None, f"OpgenBackendLibrary('{name}'): the runtime has no operator yaml installed; pass yaml=")
        yaml, tags = runtime.yaml, tags or runtime.tags
    model = env.OpgenModel(yaml, tags=_tags_for(env, yaml, tags, runtime))
    backend = env.OpgenBackendYaml(model, backend_yaml)
    gen_dir = f"{build_dir}/{name}/gen"
    obj_dir = f"{build_dir}/{name}/obj"
    codegen = env.OpgenBackendCodegen(model, backend, gen_dir)
    build_env = _build_env(env, runtime, gen_dir)
    objects = _objects(build_env, codegen.sources_by_group, obj_dir)
    registrations = [o for group in sorted(objects) for o in objects[group]]
    kernel_objects = _kernel_objects(build_env, kernels, obj_dir)
    checked = build_env.OpgenCheckDefinitions(
        f"{obj_dir}/definitions.ok", registrations + kernel_objects, OPGEN_BACKEND=backend,
        OPGEN_REGISTRATIONS=registrations, OPGEN_BACKEND_SOURCES=_kernel_dir(env, kernels))
    library = build_env.OpgenWholeArchiveLibrary(f"{build_dir}/{name}", kernel_objects, build_env.OpgenArchives(objects, obj_dir))
    build_env.Depends(library, checked)
    return library


def exists(env):
    return True


def generate(env):
    env.SetDefault(OPGEN_GENERATED_CXXFLAGS=["-O1"], OPGEN_KERNEL_CXXFLAGS=["-O2"])
    env.AddMethod(_operator_library, "OpgenOperatorLibrary")
    env.AddMethod(_backend_library, "OpgenBackendLibrary")
