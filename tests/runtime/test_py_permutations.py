"""Commutativity from Python: for a set of registrations (a def, kernels at runtime and alias
keys, a boxed fallback, fallthroughs), every registration order x every close() order passes
only through states that depend on the set of active registrations alone: the dump and the
dump_table after each step equal those of registering that set in a fixed order. Invariants
hold throughout, and a conflicting twin of each registration fails without changing anything."""
import itertools
import time

import pytest


def _identity_fallback(op, keyset, *args, **kwargs):
    return args[0]


def _autograd_kernel(x, n=1):
    return x


# name -> (register(opdispatch, ns) -> Library, its conflicting twin(opdispatch, ns) -> Library)
def _registrations(op_name):
    def lib(opdispatch, ns, kind="FRAGMENT"):
        return opdispatch.library.Library(ns, kind)

    def define(schema, twin_schema):
        def make(o, ns, text=schema):
            l = lib(o, ns)
            l.define(text, debug="def")
            return l
        return make, lambda o, ns: make(o, ns, twin_schema)

    def impl(key, label, **options):
        def make(o, ns, debug=label):
            l = lib(o, ns)
            l.impl(op_name, key, debug=debug, **options)
            return l
        return make, lambda o, ns: make(o, ns, "twin")

    def fallback(key, label, **options):
        def make(o, ns, debug=label):
            l = lib(o, "_", "IMPL")
            l.fallback(key, debug=debug, **options)
            return l
        return make, lambda o, ns: make(o, ns, "twin")

    return define, impl, fallback


def _set_one():
    define, impl, fallback = _registrations("f")
    return "f", {
        "def": define("f(Tensor x) -> Tensor", "f(Tensor x, int n) -> Tensor"),
        "cpu": impl("CPU", "cpu"),
        "implicit": impl("CompositeImplicitAutograd", "implicit"),
        "lazy fallback": fallback("Lazy", "lazy fallback", fn=_identity_fallback),
        "fallthrough": impl("AutogradCPU", "fallthrough", fallthrough=True),
    }


def _set_two():
    define, impl, fallback = _registrations("g")
    schema_impl = _registrations("g(Tensor x, int n=1) -> Tensor")[1]
    return "g", {
        "def": define("g(Tensor x, int n=1) -> Tensor", "g(Tensor x, int n=2) -> Tensor"),
        "meta by schema": schema_impl("Meta", "meta"),  # impl with a schema, possibly before the def
        "explicit": impl("CompositeExplicitAutograd", "explicit"),
        "autograd": impl("Autograd", "autograd", fn=_autograd_kernel),
        "fallthrough fallback": fallback("AutogradLazy", "autograd lazy passes"),
    }


def _set_three():
    """CompositeExplicitAutogradNonFunctional beside CompositeExplicitAutograd and a backend
    kernel: CPU, CUDA, Meta and PrivateUse1 take the first, XLA and Lazy the second."""
    define, impl, fallback = _registrations("h")
    return "h", {
        "def": define("h(Tensor x) -> Tensor", "h(Tensor y) -> Tensor"),
        "non functional": impl("CompositeExplicitAutogradNonFunctional", "non functional"),
        "explicit": impl("CompositeExplicitAutograd", "explicit"),
        "meta": impl("Meta", "meta"),
    }


class Harness:
    def __init__(self, opdispatch, ns, op, registrations):
        self.o, self.ns, self.name = opdispatch, ns, f"{ns}::{op}"
        self.labels = sorted(registrations)
        self.regs = registrations
        self.expected = {}
        self.steps = 0

    def observe(self):
        d = self.o.dispatcher
        d.check_invariants(self.name)
        return d.dump(self.name) + repr(sorted(d.dump_table(self.name).items()))

    def register(self, label):
        return self.regs[label][0](self.o, self.ns)

    def record_expected_states(self):
        """The state of every subset registered in sorted order, from an empty start."""
        for size in range(len(self.labels) + 1):
            for subset in itertools.combinations(self.labels, size):
                libs = [self.register(label) for label in subset]
                self.expected[frozenset(subset)] = self.observe()
                for lib in reversed(libs):
                    lib.close()

    def check(self, active, context):
        self.steps += 1
        state = self.observe()
        assert state == self.expected[frozenset(active)], f"{context}: active {sorted(active)}\n{state}"

    def check_twins_fail(self, active, context):
        before = self.observe()
        for label in active:
            with pytest.raises(RuntimeError):
                self.regs[label][1](self.o, self.ns)
            assert self.observe() == before, f"{context}: failed twin of {label!r} changed the state"

    def run(self):
        empty = self.observe()
        self.record_expected_states()
        assert self.observe() == empty
        for reg_order in itertools.permutations(self.labels):
            for n, close_order in enumerate(itertools.permutations(self.labels)):
                libs, active = {}, set()
                for label in reg_order:
                    libs[label] = self.register(label)
                    active.add(label)
                    if n == 0:  # the registration steps are the same for every close order
                        self.check(active, f"registering {reg_order}")
                        self.check_twins_fail(active, f"registering {reg_order}")
                for label in close_order:
                    libs[label].close()
                    active.discard(label)
                    self.check(active, f"registered {reg_order}, closing {close_order}")
                libs[close_order[0]].close()  # closing twice is a no-op
                assert self.observe() == empty


@pytest.mark.parametrize("make_set", [_set_one, _set_two, _set_three], ids=[
    "cpu-implicit-fallback-fallthrough", "schema-explicit-autograd-fallthrough", "non-functional-explicit-meta"])
def test_every_registration_and_close_order_reaches_the_same_states(opdispatch, ns, make_set):
    op, registrations = make_set()
    harness = Harness(opdispatch, ns, op, registrations)
    # This process's CPU seconds, not the wall's: the walk's own cost, whatever else the machine
    # runs (the test command's other worker, other builds).
    start = time.process_time()
    harness.run()
    elapsed = time.process_time() - start
    n = len(registrations)
    assert len(set(harness.expected.values())) == 2 ** n  # each subset reads differently: the check has teeth
    orders = len(list(itertools.permutations(range(n))))
    assert harness.steps == orders * n + orders * orders * n  # registration steps once, close steps always
    assert elapsed < 20, f"{elapsed:.1f}s"
