"""opgen's public builders of operator libraries: the same pipeline for this repository's own
runtime and backends and for another project's operators.

    env.OpgenOperatorLibrary("myops", yaml="myops.yaml", kernels=Glob("kernels/*.cpp"))
        -> [build/libmyops.so]
    env.OpgenBackendLibrary("mybackend", backend_yaml="mybackend.yaml", kernels=Glob("backend/*.cpp"))
        -> [build/libmybackend.so]: kernels for the runtime's own operators at a backend key

The pipeline: the yaml is loaded (model.py), every operator group is its own node over opgen's
codegen plan (codegen.py, into <build_dir>/<name>/gen), each group's unit and each kernel is
compiled with the flags of its kind (flags.py) under the one rebuild policy (rebuild.py), the
groups' objects go into sharded archives linked whole (link.py), and a backend's registrations
are checked against its kernels' definitions before linking (backend.py).

The runtime's headers and library come from sdk.find_runtime (an installed SDK, $OPGEN_RUNTIME or the
checkout opgen is installed from). This repository builds the runtime itself with the same builders, passing
what it has already: ``model=`` and ``codegen=`` (declared by its SConstruct, shared with the
backends), ``gen_dir=``, ``obj_dir=``, ``target=``, ``runtime=`` (an sdk.Runtime; library_dir
None for the runtime itself), ``objects=`` (objects compiled otherwise, e.g. by nvcc) and
``precompiled_header=``. Load a result with ``opdispatch.load_library(path)``.

Kernels the yaml names and no source defines (missing_kernels.py): ``missing_kernels="error"``
(the default) stops the build before linking, naming each with its operator's FILE:LINE;
``"stub"`` links in generated definitions that raise op::Error naming the kernel, its key and
its operator.

A selective build (``ops="ops.yaml"``: torchgen's selection yaml or a list of operators; a bad
one stops the build with FILE:LINE errors and exit status 2) generates, compiles and registers
only the operator groups the selection needs (selection.py: its closure over the model, the
groups' generated code and ``kernels``), and compiles only the kernels implementing them (and
those implementing no group); the kernels of the groups it leaves out are not exported, so the
link's garbage collection drops those a compiled file holds (opgen/selection/exports.py). When
the caller generates (``codegen=``), it passes ``ops=env.OpgenSelection(...)``, whose groups its
codegen was given.

After each link, the objects' and the library's sizes are recorded in the codegen cache
(sizes.py: object_sizes.json, for ``opgen select --report``); a selective library linked with lld
is measured from its link map too (<obj_dir>/<name>.map).

Kernels in .cu files compile with nvcc when the environment loads the nvcc tool
(``tools=["default", opgen.scons.tool, "nvcc"]``, toolpath=[opgen.scons.TOOLPATH]), for the
architectures of ``cuda_arch=`` ("native", "all" or a list such as "80,90"; default: the
environment's $CUDA_ARCH, itself "native" by default: see toolset/nvcc.py).

Construction variables: OPGEN_GENERATED_CXXFLAGS (default -O1) and OPGEN_KERNEL_CXXFLAGS
(default -O2) are appended to CXXFLAGS of the group units and of the kernels;
OPGEN_MISSING_KERNELS (error|stub) is the default of ``missing_kernels=``.
"""
import json
import os

from opgen.errors import Diagnostic, OpgenError
from opgen.gen.engine.config import DEFAULT_KEYS, CodegenConfig
from opgen.gen.engine.layout import api_header
from opgen.gen.layers.lazy import has_ir, runtime_header
from opgen.model.dispatch_keys import DispatchKey
from opgen.scons.command_signatures import same_command
from opgen.scons.frozen import FROZEN, frozen_groups, frozen_object
from opgen.scons.flags import DEFAULTS, ObjectKind, common_flags, for_kind
from opgen.scons.link import archives, whole_archive_library
from opgen.scons.missing_kernels import mode_of, runtime_library_path
from opgen.scons.rebuild import judged_by_policy
from opgen.scons.scan_rules import fold_header_closures, fold_included_sources, header_closures
from opgen.scons.sdk import find_runtime
from opgen.scons.selection import OperatorSelection, read_project_sources, source_path
from opgen.scons.sizes import record_object_sizes
from opgen.scons.stop import stop
from opgen.scons.toolset.cuda_arch import ArchError
from opgen.scons.toolset.cuda_arch import parse as parse_cuda_arch
from opgen.selection.exports import unregistered_kernels, version_script

# The runtime's header that a precompiled header is made of, as sources include it.
PRECOMPILED_HEADER = "dispatch/precompiled.h"


def _cuda_arch(env, builder, name, cuda_arch):
    """cuda_arch= checked as --cuda-arch is (a bad one stops the build with exit status 2)."""
    if cuda_arch is None:
        return None
    what = f"{builder}('{name}'): cuda_arch"
    if hasattr(env, "CudaArchitectures"):  # the nvcc tool is loaded: resolved against nvcc
        env.CudaArchitectures(str(cuda_arch), what=what)
    else:
        try:
            parse_cuda_arch(str(cuda_arch))
        except ArchError as exc:
            stop(None, f"{what}={cuda_arch}: {exc}")
    return str(cuda_arch)


def _library_env(env, runtime, gen_dir, obj_dir, precompiled_header, cuda_arch=None, include_first=()):
    """An environment compiling against ``include_first``, then the generated files, then the
    runtime's headers, with the flags of every opgen object, linking -lopdispatch unless it
    builds the runtime; its .cu kernels compile for ``cuda_arch`` when given (else $CUDA_ARCH)."""
    build_env = judged_by_policy(env)
    if cuda_arch is not None:
        build_env["CUDA_ARCH"] = cuda_arch
    common_flags(build_env)
    build_env.Append(CPPPATH=[*include_first, gen_dir, runtime.include_dir])
    if runtime.library_dir is not None:
        build_env.Append(LIBS=["opdispatch"], LIBPATH=[runtime.library_dir])
        rpath = runtime.rpath or runtime.library_dir
        if rpath.startswith("$ORIGIN"):
            build_env.Append(LINKFLAGS=[f"-Wl,-rpath,'${rpath}'"])  # '$$' is SCons' '$'
        else:
            build_env.Append(RPATH=[rpath])
    source = precompiled_header
    if isinstance(source, str) and not (os.path.isabs(source) or source.startswith("#")):
        source = os.path.join(runtime.include_dir, source)
    return {kind: with_precompiled_header(for_kind(build_env, kind), source, f"{obj_dir}/pch/{kind.name.lower()}")
            for kind in ObjectKind}


def with_precompiled_header(env, source, pch_dir):
    """``env`` whose C++ objects force-include the runtime's precompiled header (``source``: its
    file, None for none), precompiled once for ``env``'s flags into ``pch_dir``, when the
    precompiled_header tool is loaded and active (it is not with ccache or distcc)."""
    if source is None or not hasattr(env, "UsePrecompiledHeader"):
        return env
    if env.UsePrecompiledHeader(source, PRECOMPILED_HEADER, pch_dir):
        # GCC 12 does not keep a precompiled header's diagnostic pragmas, so the one array_ref.h
        # sets around its initializer_list constructor is given here (outside signatures, as
        # the header's own flags are).
        env.Append(CCFLAGS=["$(", "-Wno-init-list-lifetime", "$)"])
    return env


# Runtime headers most group units include, each with the same headers under it: an object depends
# on one stamp for each (scan_rules.header_closures) instead of on each header under it.
GENERATED_CODE_HEADERS = ("dispatch/registration.h", "autograd/codegen_support.h")


def _closures(env, obj_dir):
    """The stamps of the headers under GENERATED_CODE_HEADERS, for objects built with ``env``."""
    return header_closures(env, GENERATED_CODE_HEADERS, f"{obj_dir}/header_closures")


def _group_objects(env, codegen, obj_dir, closures, registered=None):
    """{group: [object]}: each group's unit, compiled with the generated code's flags (one
    environment: their commands differ only by their names, which SCons then expands once). The
    sources a unit includes are no dependencies of its object (the unit names their digests), and
    the headers under each root of ``closures`` are its stamp (scan_rules.py). ``registered``: a
    selective build's groups; the others generated (declared only: their headers) are not compiled."""
    registered = None if registered is None else frozenset(registered)
    objects, compiled = {}, []
    for group, sources in sorted(codegen.sources_by_group.items()):
        if registered is not None and group not in registered:
            continue
        objects[group] = []
        for source in sources:
            stem = f"{obj_dir}/ops/{os.path.splitext(source.name)[0]}"
            # A frozen group's object, when nothing it was built from may change (frozen.py).
            node = frozen_object(env, env.subst(f"{stem}$SHOBJSUFFIX"), source) \
                if group in codegen.frozen_groups else None
            if node is not None:
                objects[group].append([node])
            else:
                objects[group].append(env.SharedObject(stem, source))
                compiled.append((group, objects[group][-1]))
    for group, result in compiled:
        fold_included_sources(list(result), codegen.folded_by_group.get(group, ()))
    every_object = [node for _, result in compiled for node in result]
    fold_header_closures(every_object, closures)
    same_command(every_object, f"group units in {obj_dir}")
    return objects


def _handle_objects(env, selected, gen_dir, obj_dir):
    """{group: [object]}: the operator handles alone of the groups ``selected`` declares for a
    backward-only source (Closure.handles), each its generated ops/<g>_schema.cpp compiled again
    without schemas and with handles raising that the selection left the operator out; none for
    a full build."""
    if selected is None or not selected.closure.handles:
        return {}
    # The selection's name reaches the compiler in a header, not in a -D (SCons does not quote
    # a value with quotes for the shell).
    named = env.Textfile(f"{obj_dir}/ops/left_out_by_selection.h",
                         [f"#define OP_LEFT_OUT_BY_SELECTION {json.dumps(selected.name)}\n"])
    objects = {group: env.SharedObject(f"{obj_dir}/ops/{group}_handles", f"{gen_dir}/ops/{group}_schema.cpp",
                                       CCFLAGS=env.Flatten([env.get("CCFLAGS", []), "-include", named[0].path]))
               for group in selected.closure.handles}
    env.Depends(list(objects.values()), named)
    return objects


def _kernel_objects(env, kernels, obj_dir):
    """Each kernel's object: beside it when it is in a variant directory already, else at its
    path in the project (kernels/a.cpp -> <obj_dir>/kernels/a.os)."""
    return [o for objects in _kernel_objects_by_source(env, kernels, obj_dir).values() for o in objects]


def _kernel_objects_by_source(env, kernels, obj_dir):
    """{the kernel's path from the project's top: [its object]}, in the order of ``kernels``."""
    objects = {}
    freeze = frozen_groups()
    suffix = env.subst("$SHOBJSUFFIX")
    for node in _nodes(env, kernels):
        if node is not node.srcnode():
            target, compile_it = os.path.splitext(node.abspath)[0], lambda: env.SharedObject(node)
        else:
            relative = node.srcnode().get_path(env.Dir("#"))
            stem = os.path.splitext(relative if not relative.startswith("..") else node.name)[0]
            target, compile_it = env.Dir(obj_dir).File(stem).abspath, lambda: env.SharedObject(f"{obj_dir}/{stem}", node)
        # Only codegen inputs changed since the last build: a kernel none of whose dependencies
        # may change is the object it was (frozen.py).
        frozen = frozen_object(env, target + suffix, node) if freeze else None
        objects[source_path(env, node)] = [frozen] if frozen is not None else compile_it()
    return objects


def _sources_of(env, objects):
    """{source path: [object]} of objects compiled elsewhere (objects=), by their first source."""
    by_source = {}
    for node in env.Flatten(list(objects)):
        sources = getattr(node, "sources", None)
        if sources:
            by_source.setdefault(source_path(env, sources[0]), []).append(node)
    return by_source


def _selected(env, name, ops, model, config, codegen, kernels, runtime):
    """The library's selection (None: every group): ops= as given by a caller that generates, else
    read and closed here over the model and the library's own kernels."""
    if ops is None or isinstance(ops, OperatorSelection):
        return ops
    if codegen is not None:
        stop(None, f"OpgenOperatorLibrary('{name}'): ops= names a file but codegen= is given: generate with "
                   f"groups=env.OpgenSelection(...).groups and pass that selection as ops=")
    return env.OpgenSelection(ops, model, config, sources=read_project_sources(env, _nodes(env, kernels)),
                              include_dirs=[runtime.include_dir])


def _unregistered_kernels(env, model, codegen, selected, obj_dir):
    """A selective library's version script hiding the kernels of the groups it does not register,
    which --gc-sections then drops (opgen/selection/exports.py); None for a full build."""
    if selected is None:
        return None
    any_group = next(iter(codegen.codegen_of.values()), None)
    if any_group is None:
        return None
    patterns = unregistered_kernels(model, any_group.config, selected.groups)
    return env.Textfile(f"{obj_dir}/unregistered_kernels.ver", [version_script(patterns)])[0]


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


def _operator_library(env, name, yaml=None, kernels=(), tags=None, keys=None, build_dir="build", missing_kernels=None,
                      ops=None, *, model=None, codegen=None, runtime=None, gen_dir=None, obj_dir=None, target=None,
                      objects=(), precompiled_header=PRECOMPILED_HEADER, cuda_arch=None):
    mode = mode_of(env, name, missing_kernels)
    cuda_arch = _cuda_arch(env, "OpgenOperatorLibrary", name, cuda_arch)
    runtime = runtime or find_runtime(env, build_dir)
    if model is None:
        if yaml is None:
            stop(None, f"OpgenOperatorLibrary('{name}'): give yaml= (or model=)")
        model = env.OpgenModel(yaml, tags=_tags_for(env, yaml, tags, runtime))
    if runtime.library_dir is not None:
        _check_names(model, runtime)
    gen_dir = gen_dir or f"{build_dir}/{name}/gen"
    obj_dir = obj_dir or f"{build_dir}/{name}/obj"
    config = CodegenConfig(keys=_dispatch_keys(name, keys)) if codegen is None else None
    selected = _selected(env, name, ops, model, config, codegen, kernels, runtime)
    if codegen is None:
        codegen = env.OpgenCodegen(model, gen_dir, config=selected.config(config) if selected else config,
                                   groups=selected.generated if selected else None,
                                   listed=selected.groups if selected else None)
    if selected is not None:
        kernels = [node for node in _nodes(env, kernels) if selected.compiles(source_path(env, node))]
    envs = _library_env(env, runtime, gen_dir, obj_dir, precompiled_header, cuda_arch)
    closures = _closures(envs[ObjectKind.GENERATED], obj_dir)
    group_objects = _group_objects(envs[ObjectKind.GENERATED], codegen, obj_dir, closures,
                                   selected.groups if selected is not None else None)
    kernel_objects = _kernel_objects_by_source(envs[ObjectKind.KERNEL], kernels, obj_dir)
    handle_objects = _handle_objects(envs[ObjectKind.GENERATED], selected, gen_dir, obj_dir)
    own = [o for nodes in kernel_objects.values() for o in nodes] + list(objects) + \
        [o for nodes in handle_objects.values() for o in nodes]
    # Kernels the yaml names and no source defines: a stop before linking, or stubs linked in.
    missing = env.OpgenMissingKernels(mode, group_objects, own, codegen, gen_dir, obj_dir, runtime_library_path(runtime))
    stubs = envs[ObjectKind.GENERATED].SharedObject(f"{obj_dir}/missing_kernels", missing) if mode == "stub" else []
    # A selective library linked by lld is measured from its link map (sizes.py).
    map_path = f"{obj_dir}/{name}.map" if selected is not None and env.get("LINKER") == "lld" else None
    library = whole_archive_library(envs[ObjectKind.KERNEL], target or f"{build_dir}/{name}", own + stubs,
                                    archives(env, group_objects, obj_dir),
                                    _unregistered_kernels(env, model, codegen, selected, obj_dir), map_path)
    if mode == "error":
        env.Depends(library, missing)
    # The stamps are found as the units are scanned; required here, the build counts them from the start.
    env.Requires(library, [stamp for _, stamp in closures])
    record_object_sizes(env, library, group_objects, {**_sources_of(env, objects), **kernel_objects}, model.source,
                        selected.name if selected is not None else None, memo=f"{obj_dir}/object_sizes_symbols.json",
                        map_path=map_path, handles_by_group=handle_objects)
    return library


def _backend_library(env, name, backend_yaml=None, kernels=(), yaml=None, tags=None, build_dir="build",
                     missing_kernels=None, *, model=None, backend=None, codegen=None, runtime=None, gen_dir=None,
                     obj_dir=None, target=None, precompiled_header=PRECOMPILED_HEADER, cuda_arch=None):
    """Registrations of a backend yaml's kernels (and the out=/in-place wrappers derived from
    them) for the operators of ``yaml`` (default: the runtime's own, installed with it).
    ``missing_kernels``: "error" stops the build before linking when a kernel is not defined;
    "stub" links in a stub for each function the backend writes (kernels, lowerings, shape
    functions) that ``kernels`` leave undefined, and a backend with no kernels at all gets a
    stand-in IR runtime (gen/layers/backend_stubs.py): the yaml alone builds, links and loads."""
    mode = mode_of(env, name, missing_kernels)
    cuda_arch = _cuda_arch(env, "OpgenBackendLibrary", name, cuda_arch)
    runtime = runtime or find_runtime(env, build_dir)
    if model is None:
        if yaml is None:
            if not runtime.yaml or not os.path.isfile(runtime.yaml):
                stop(None, f"OpgenBackendLibrary('{name}'): the runtime has no operator yaml installed; pass yaml=")
            yaml, tags = runtime.yaml, tags or runtime.tags
        model = env.OpgenModel(yaml, tags=_tags_for(env, yaml, tags, runtime))
    if backend is None:
        if backend_yaml is None:
            stop(None, f"OpgenBackendLibrary('{name}'): give backend_yaml= (or backend=)")
        backend = env.OpgenBackendYaml(model, backend_yaml)
    gen_dir = gen_dir or f"{build_dir}/{name}/gen"
    obj_dir = obj_dir or f"{build_dir}/{name}/obj"
    if codegen is None:
        codegen = env.OpgenBackendCodegen(model, backend, gen_dir)
    # Without kernels there is no IR runtime (backends/<key>/ir.h) either: opgen's stand-in,
    # found before the runtime's headers.
    standin = None
    if mode == "stub" and not _nodes(env, kernels) and has_ir(backend):
        standin = env.OpgenStandinIrRuntime(f"{obj_dir}/standin/{runtime_header(backend)}", backend)
        FROZEN.generated_under(env.Dir(f"{obj_dir}/standin").abspath)  # made from the backend yaml
    envs = _library_env(env, runtime, gen_dir, obj_dir, precompiled_header, cuda_arch,
                        include_first=[f"{obj_dir}/standin"] if standin else [])
    closures = _closures(envs[ObjectKind.GENERATED], obj_dir)
    objects = _group_objects(envs[ObjectKind.GENERATED], codegen, obj_dir, closures)
    registrations = [o for group in sorted(objects) for o in objects[group]]
    if standin:
        env.Depends(registrations, standin)
    kernel_objects = _kernel_objects(envs[ObjectKind.KERNEL], kernels, obj_dir)
    if mode == "stub":
        stubs = env.OpgenBackendStubs(f"{obj_dir}/missing_kernels.cpp", backend, objects, kernel_objects, codegen)
        kernel_objects += envs[ObjectKind.GENERATED].SharedObject(f"{obj_dir}/missing_kernels", stubs)
        checked = []
    else:
        checked = envs[ObjectKind.KERNEL].OpgenCheckDefinitions(
            f"{obj_dir}/definitions.ok", registrations + kernel_objects, OPGEN_BACKEND=backend,
            OPGEN_REGISTRATIONS=registrations, OPGEN_BACKEND_SOURCES=_kernel_dir(env, kernels))
    library = whole_archive_library(envs[ObjectKind.KERNEL], target or f"{build_dir}/{name}", kernel_objects,
                                    archives(env, objects, obj_dir))
    env.Depends(library, checked)
    env.Requires(library, [stamp for _, stamp in closures])
    return library


def register(env):
    env.SetDefault(**DEFAULTS)
    env.AddMethod(_operator_library, "OpgenOperatorLibrary")
    env.AddMethod(_backend_library, "OpgenBackendLibrary")
