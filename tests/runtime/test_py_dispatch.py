"""Dispatch semantics seen from Python: computed tables (dump_table), alias keys, fallthrough,
fallbacks, BackendSelect, thread-local key guards, redispatch, and failed registrations."""
import threading

import pytest

BACKENDS = ["CPU", "CUDA", "Lazy", "Meta", "PrivateUse1", "XLA"]
AUTOGRAD = ["AutogradCPU", "AutogradCUDA", "AutogradLazy", "AutogradPrivateUse1", "AutogradXLA"]


@pytest.fixture
def unary(opdispatch, make_lib, ns):
    """(lib, op, calls): ns::f(Tensor x) -> Tensor defined; `marker(name)` makes a kernel that
    records its name in `calls` and returns its argument."""
    lib = make_lib(ns, "DEF")
    lib.define("f(Tensor x) -> Tensor")
    calls = []

    def marker(name):
        def kernel(x):
            calls.append(name)
            return x
        return kernel

    lib.marker = marker
    return lib, getattr(opdispatch.ops, ns).f.default, calls


def _cpu(opdispatch):
    return opdispatch.tensor([1.0])


def _lazy(opdispatch):
    return opdispatch.tensor([1.0], device="lazy")


def _meta(opdispatch):
    return opdispatch.empty([1], device="meta")


FUNCTIONALIZE_FALLBACK = "functionalize fallback"  # every operator without a Functionalize kernel


def test_direct_kernel_beats_alias(opdispatch, unary, ns):
    lib, f, calls = unary
    lib.impl("f", "CPU", lib.marker("cpu"), debug="cpu")
    lib.impl("f", "CompositeImplicitAutograd", lib.marker("implicit"), debug="implicit")
    table = opdispatch.dispatcher.dump_table(f"{ns}::f")
    expected = {key: "implicit" for key in BACKENDS + AUTOGRAD}
    expected["CPU"] = "cpu"
    del expected["AutogradCPU"]  # the composite would shadow the CPU kernel there, so it passes through
    expected["Functionalize"] = FUNCTIONALIZE_FALLBACK  # the CPU kernel is functional: no decomposition there
    assert table == expected
    f(_cpu(opdispatch))
    f(_lazy(opdispatch))
    assert calls == ["cpu", "implicit"]


def test_composite_explicit_serves_backends_only(opdispatch, unary, ns):
    lib, f, calls = unary
    lib.impl("f", "CompositeExplicitAutograd", lib.marker("explicit"), debug="explicit")
    assert opdispatch.dispatcher.dump_table(f"{ns}::f") == {**{key: "explicit" for key in BACKENDS},
                                                             "Functionalize": FUNCTIONALIZE_FALLBACK}
    f(_cpu(opdispatch))
    f(_meta(opdispatch))
    assert calls == ["explicit", "explicit"]


def test_composite_implicit_steps_back_from_autograd_when_explicit_exists(opdispatch, unary, ns, make_lib):
    lib, f, calls = unary
    lib.impl("f", "CompositeImplicitAutograd", debug="implicit")
    alone = opdispatch.dispatcher.dump_table(f"{ns}::f")
    # A decomposition alone also runs at Functionalize (above the functionalization layer).
    assert alone == {key: "implicit" for key in BACKENDS + AUTOGRAD + ["Functionalize"]}
    explicit = make_lib(ns)
    explicit.impl("f", "CompositeExplicitAutograd", debug="explicit")
    assert opdispatch.dispatcher.dump_table(f"{ns}::f") == {**{key: "explicit" for key in BACKENDS},
                                                             "Functionalize": FUNCTIONALIZE_FALLBACK}
    explicit.close()
    assert opdispatch.dispatcher.dump_table(f"{ns}::f") == alone


def test_fallthrough_skips_to_the_next_key(opdispatch, unary, ns, make_lib):
    lib, f, calls = unary
    lib.impl("f", "CPU", lib.marker("cpu"), debug="cpu")
    lib.impl("f", "Autograd", lib.marker("autograd"), debug="autograd")
    f(_cpu(opdispatch))
    assert calls == ["autograd"]  # the autograd kernel does not redispatch
    through = make_lib(ns)
    through.impl("f", "AutogradCPU", fallthrough=True)
    assert opdispatch.dispatcher.dump_table(f"{ns}::f")["AutogradCPU"] == "fallthrough"
    f(_cpu(opdispatch))
    assert calls == ["autograd", "cpu"]
    through.close()
    key_wide = make_lib("_", "IMPL")
    key_wide.fallback("AutogradCPU")  # only covers operators with nothing of their own there
    f(_cpu(opdispatch))
    assert calls == ["autograd", "cpu", "autograd"]
    assert "AutogradCPU: fallthrough [fallthrough]" in opdispatch.dispatcher.dump(f"{ns}::f")


def test_boxed_fallback_runs_for_any_operator(opdispatch, make_lib, ns):
    lib = make_lib(ns, "DEF")
    lib.define("f(Tensor x) -> Tensor")
    lib.define("h(Tensor x, Scalar s, int[] dims, *, bool flag=False) -> (Tensor, int)")
    lib.impl("f", "CPU", lambda x: opdispatch.tensor(x.numpy() + 1))
    lib.impl("h", "CPU", lambda x, s, dims, flag=False: (opdispatch.tensor(x.numpy() * s), len(dims) + flag))
    seen = []

    def to_cpu(value):
        return value.to("cpu") if isinstance(value, opdispatch.Tensor) else value

    def lazy_fallback(op, keyset, *args, **kwargs):
        seen.append((op.name, keyset.highest(), sorted(kwargs)))
        return op.redispatch(opdispatch.dispatcher.DispatchKeySet("CPU"), *map(to_cpu, args), **kwargs)

    fallback = make_lib("_", "IMPL")
    fallback.fallback("Lazy", fn=lazy_fallback, debug="lazy->cpu")
    ops = getattr(opdispatch.ops, ns)
    assert ops.f(_lazy(opdispatch)).tolist() == [2.0]
    y, n = ops.h(_lazy(opdispatch), 3, [1, 2], flag=True)
    assert y.tolist() == [3.0] and n == 3
    assert seen == [(f"{ns}::f", "Lazy", []), (f"{ns}::h", "Lazy", ["flag"])]
    assert opdispatch.dispatcher.dump_table(f"{ns}::h")["Lazy"] == "lazy->cpu"
    lib.impl("f", "Lazy", lambda x: x, debug="lazy")  # a direct kernel beats the fallback
    ops.f(_lazy(opdispatch))
    assert len(seen) == 2 and opdispatch.dispatcher.dump_table(f"{ns}::f")["Lazy"] == "lazy"


def test_a_call_without_a_dispatch_key_runs_the_composite_kernel(opdispatch, make_lib, ns):
    """No tensor and no options (promote_types, can_cast): the call's key is Undefined, which holds
    CompositeExplicitAutograd, else CompositeImplicitAutograd, as in PyTorch."""
    lib = make_lib(ns, "DEF")
    lib.define("sum2(int a, int b) -> int")
    ops = getattr(opdispatch.ops, ns)
    with pytest.raises(RuntimeError, match="no dispatch key selects a kernel"):
        ops.sum2(2, 3)
    lib.impl("sum2", "CompositeImplicitAutograd", lambda a, b: a + b, debug="implicit")
    assert ops.sum2(2, 3) == 5
    lib.impl("sum2", "CompositeExplicitAutograd", lambda a, b: 1000 + a + b, debug="explicit")
    assert ops.sum2(2, 3) == 1005


def test_backend_select_picks_the_backend_of_a_factory(opdispatch, make_lib, ns, backend_fallbacks):
    lib = make_lib(ns, "DEF")
    lib.define("empty(int[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor")
    ran = []

    def backend(name):
        def kernel(size, dtype=None, device=None):
            ran.append(name)
            return opdispatch.empty(size, dtype=dtype, device=device)
        return kernel

    lib.impl("empty", "CPU", backend("cpu"))
    lib.impl("empty", "Meta", backend("meta"))
    empty = getattr(opdispatch.ops, ns).empty
    with pytest.raises(RuntimeError, match="no dispatch key selects a kernel"):
        empty([2])

    def backend_select(keyset, size, dtype=None, device=None):
        key = opdispatch.dispatcher.backend_key_of(device or "cpu")
        return empty.default.redispatch(keyset.without_highest().add(key), size, dtype=dtype, device=device)

    lib.impl("empty", "BackendSelect", backend_select, with_keyset=True, debug="backend_select")
    a = empty([2, 3], dtype=opdispatch.int32)
    b = empty([4], device="meta")
    with pytest.raises(TypeError, match="must be int\\[\\], not int"):
        empty(4)  # one int only stands for a list of fixed size (int[2])
    assert ran == ["cpu", "meta"]
    assert a.shape == (2, 3) and a.dtype is opdispatch.int32 and a.device == "cpu"
    assert b.shape == (4,) and b.device == "meta"
    assert opdispatch.dispatcher.dump_table(f"{ns}::empty") == {
        "BackendSelect": "backend_select", "CPU": "CPU kernel", "Meta": "Meta kernel", **backend_fallbacks}


def test_exclude_guard_is_thread_local_and_restores(opdispatch, unary):
    lib, f, calls = unary
    lib.impl("f", "CPU", lib.marker("cpu"))
    lib.impl("f", "Autograd", lib.marker("autograd"))
    x = _cpu(opdispatch)
    other_thread = []
    with opdispatch.dispatcher.exclude_keys("AutogradCPU") as excluded:
        assert excluded.keys() == ["AutogradCPU"]
        f(x)
        worker = threading.Thread(target=lambda: other_thread.append(f(x) is not None))
        worker.start()
        worker.join()
        with opdispatch.dispatcher.exclude_keys("Autograd"):  # nested, overlapping
            f(x)
        f(x)  # the inner guard restored only what it added
    f(x)
    assert calls == ["cpu", "autograd", "cpu", "cpu", "autograd"]
    assert other_thread == [True]
    included, excluded = opdispatch.dispatcher.local_keys()
    assert len(included) == 0 and len(excluded) == 0


def test_include_guard_adds_keys(opdispatch, unary):
    lib, f, calls = unary
    lib.impl("f", "CPU", lib.marker("cpu"))
    lib.impl("f", "Lazy", lib.marker("lazy"))
    with opdispatch.dispatcher.include_keys("Lazy"):
        f(_cpu(opdispatch))
        with opdispatch.dispatcher.exclude_keys("Lazy"):  # exclude wins over include
            f(_cpu(opdispatch))
    f(_cpu(opdispatch))
    assert calls == ["lazy", "cpu", "cpu"]
    with pytest.raises(ValueError, match="unknown dispatch key"):
        opdispatch.dispatcher.exclude_keys("Nope")


def test_redispatch_continues_below_the_current_key(opdispatch, unary, ns):
    lib, f, calls = unary
    lib.impl("f", "CPU", lib.marker("cpu"))
    lib.impl("f", "Lazy", lib.marker("lazy"))

    def autograd(keyset, x):
        calls.append(f"autograd saw {keyset.highest()}")
        return f.redispatch(keyset.without_highest(), x)

    lib.impl("f", "Autograd", autograd, with_keyset=True)
    f(_cpu(opdispatch))
    f(_lazy(opdispatch))
    assert calls == ["autograd saw AutogradCPU", "cpu", "autograd saw AutogradLazy", "lazy"]
    keys = opdispatch.dispatcher.DispatchKeySet(["AutogradCPU", "BackendSelect", "CPU"])
    assert keys.keys() == ["AutogradCPU", "BackendSelect", "CPU"] and keys.highest() == "AutogradCPU"
    assert keys.below("AutogradCPU") == opdispatch.dispatcher.DispatchKeySet(["BackendSelect", "CPU"])
    f.redispatch(keys.below("BackendSelect"), _cpu(opdispatch))  # from outside any kernel
    assert calls[-1] == "cpu"


def test_ad_inplace_or_view_runs_below_autograd_and_passes_through_by_default(opdispatch, unary, ns):
    lib, f, calls = unary
    lib.impl("f", "CPU", lib.marker("cpu"))
    f(_cpu(opdispatch))
    assert calls == ["cpu"] and "ADInplaceOrView" not in opdispatch.dispatcher.dump_table(f"{ns}::f")

    def view_kernel(keyset, x):
        calls.append(f"view saw {keyset.keys()}")
        return f.redispatch(keyset.without_highest(), x)

    lib.impl("f", "ADInplaceOrView", view_kernel, with_keyset=True)
    lib.impl("f", "Autograd", lib.marker("autograd"))
    calls.clear()
    f(_cpu(opdispatch))  # the marker at Autograd returns without redispatching
    with opdispatch.dispatcher.exclude_keys("Autograd"):
        f(_cpu(opdispatch))
    assert calls == ["autograd", "view saw ['ADInplaceOrView', 'BackendSelect', 'CPU']", "cpu"]
    keys = opdispatch.dispatcher.DispatchKeySet(["CPU", "AutogradCPU", "ADInplaceOrView", "Functionalize"])
    assert keys.keys() == ["AutogradCPU", "ADInplaceOrView", "Functionalize", "CPU"]
    assert "ADInplaceOrView" not in opdispatch.dispatcher.DispatchKeySet("Autograd")


def test_failed_registrations_leave_the_state_unchanged(opdispatch, make_lib, ns):
    lib = make_lib(ns, "DEF")
    lib.define("f(Tensor x) -> Tensor", debug="first")
    lib.impl("f", "CPU", debug="cpu")
    lib.impl("f", "Autograd", fallthrough=True)
    other = make_lib("_", "IMPL")
    other.fallback("Meta", fn=lambda op, ks, *a, **k: a[0], debug="meta fallback")
    name = f"{ns}::f"

    def state():
        return opdispatch.dispatcher.dump(name), opdispatch.dispatcher.dump_table(name)

    before = state()
    attempts = [
        ("conflicting definitions", lambda: lib.define("f(Tensor x, int n) -> Tensor", debug="second")),
        ("already defined", lambda: lib.define("f(Tensor x) -> Tensor", debug="again")),
        ("already has a kernel for CPU", lambda: lib.impl("f", "CPU", debug="cpu twice")),
        ("already has a kernel for Autograd", lambda: lib.impl("f", "Autograd", fallthrough=True)),
        ("declares schema", lambda: lib.impl("f(Tensor x, int n) -> Tensor", "Lazy", debug="bad schema")),
        ("a fallback for Meta is already registered", lambda: other.fallback("Meta")),
        (f"namespace '{ns}' is already defined", lambda: make_lib(ns, "DEF")),
        ("fallbacks are registered at runtime keys", lambda: other.fallback("Autograd")),
    ]
    for message, attempt in attempts:
        with pytest.raises(RuntimeError, match=message):
            attempt()
        assert state() == before, message
        opdispatch.dispatcher.check_invariants(name)
    assert "schema: " + name + "(Tensor x) -> Tensor [first]" in before[0]
    assert before[1]["CPU"] == "cpu" and before[1]["Meta"] == "meta fallback"


def test_dump_of_unknown_operator_reads_empty(opdispatch, ns, backend_fallbacks):
    dump = opdispatch.dispatcher.dump(f"{ns}::never")
    if backend_fallbacks:  # a loaded C++ backend's fallbacks cover every operator, even unknown ones
        fallbacks = "fallbacks:\n" + "".join(f"  {k}: {v} [boxed]\n" for k, v in sorted(backend_fallbacks.items()))
        table = "table:\n" + "".join(f"  {k}: {v} [fallback]\n" for k, v in sorted(backend_fallbacks.items()))
    else:
        fallbacks, table = "fallbacks: (none)\n", "table: (empty)\n"
    assert dump == f"{ns}::never\nschema: (none)\nkernels: (none)\n" + fallbacks + table
    assert opdispatch.dispatcher.dump_table(f"{ns}::never") == backend_fallbacks
    opdispatch.dispatcher.check_invariants(f"{ns}::never")
    with pytest.raises(RuntimeError, match="needs a namespace"):
        opdispatch.dispatcher.dump("never")
