"""Property test of autograd: random programs of 3 to 8 operators over float64 leaves (pointwise,
reductions, matrix products, log_softmax and the losses, views, and in-place operators on
non-leaf intermediates and on views of them, which give the base a CopySlices node), whose
gradients (od.autograd.grad of a weighted sum of what the program leaves behind, through
gradcheck) must equal central finite differences, and whose second derivatives (gradgradcheck:
the backward pass recorded with create_graph=True and differentiated again) must too.

A program is Python source (one statement per step), generated deterministically from its seed
by running each candidate step on real tensors and keeping the ones that apply; a failure prints
the program, so it can be pasted and rerun. In-place steps follow the rules PyTorch's users follow:
never on a leaf, a view of one or an expanded view, never into memory a recorded node saved
(a saved tensor modified in place makes backward raise, by design), and never reading memory
they write."""
from __future__ import annotations

import collections
import functools
import re
from dataclasses import dataclass, field

import numpy as np
import pytest

SEEDS = range(500)
LEAF_SHAPES = [(3, 4), (4,), (2, 3), (3, 1), (2, 2, 3), (4, 3), ()]

# Ops that save a tensor argument for backward (its memory must not change afterwards) and ops
# that save their result; those not listed save neither (add, sub, neg, clone, sum, views ...).
SAVES_INPUTS = {"mul", "div", "maximum", "minimum", "pow", "log", "sin", "cos", "abs", "clamp", "amax", "mm", "mse_loss",
                "nll_loss", "where", "masked_fill", "sqrt1p"}
SAVES_RESULT = {"exp", "tanh", "sigmoid", "relu", "amax", "log_softmax", "sqrt1p", "pow"}


@dataclass
class Var:
    name: str
    group: int              # tensors of one group share memory (a base and its views)
    writable: bool          # not a leaf, not a view of one, not an expanded view


@dataclass
class Program:
    leaves: list            # shapes
    lines: list = field(default_factory=list)
    outputs: list = field(default_factory=list)

    def source(self) -> str:
        args = ", ".join(f"x{i}" for i in range(len(self.leaves)))
        body = "\n".join(f"    {line}" for line in self.lines)
        result = " + ".join(f"(({o}) * _w({o}, {k})).sum()" for k, o in enumerate(self.outputs))
        return f"def program({args}):\n{body}\n    return {result}\n"


def _literal(values: np.ndarray) -> str:
    return f"od.tensor({np.round(values, 2).tolist()!r}, dtype=od.float64)"


def _mask_literal(values: np.ndarray) -> str:
    return f"od.tensor({values.tolist()!r})"


def _weights(od):
    """_w(t, k): fixed pseudo-random weights of t's shape, so the reduction is not a plain sum."""
    def w(t, k):
        rng = np.random.default_rng(1000 + k)
        return od.tensor(rng.uniform(0.5, 1.5, tuple(t.shape)), dtype=od.float64)
    return w


def _compile(od, program: Program):
    namespace = {"od": od, "_w": _weights(od)}
    exec(compile(program.source(), "<program>", "exec"), namespace)  # noqa: S102
    return namespace["program"]


class Generator:
    """Builds a program step by step, running each candidate on real tensors."""

    def __init__(self, od, seed: int):
        self.od = od
        self.rng = np.random.default_rng(seed)
        n_leaves = int(self.rng.integers(1, 4))
        shapes = [LEAF_SHAPES[i] for i in self.rng.choice(len(LEAF_SHAPES) - 1, n_leaves, replace=False)]
        if self.rng.random() < 0.1:
            shapes[0] = ()
        self.program = Program(shapes)
        self.n_ops = int(self.rng.integers(3, 9))  # steps (statements) of the program
        self.leaf_values = [self.rng.standard_normal(s) for s in shapes]  # unrounded: no sum lands on a kink
        self.vars: list[Var] = [Var(f"x{i}", i, False) for i in range(n_leaves)]
        self.frozen: set[int] = set()      # groups whose memory a node saved
        self.modified: dict[int, str] = {}  # group -> a tensor of it (its root) that in-place steps wrote
        self.roots: dict[int, str] = {i: f"x{i}" for i in range(n_leaves)}
        self.next_group = n_leaves
        self.inplace: list[tuple[str, bool]] = []  # (in-place method, whether on a view) per step
        self.env = self._run(self.program.lines)

    # ----- running -----

    def leaves(self):
        return [self.od.tensor(v, dtype=self.od.float64).requires_grad_() for v in self.leaf_values]

    def _run(self, lines):
        env = {"od": self.od}
        env.update({f"x{i}": t for i, t in enumerate(self.leaves())})
        for line in lines:
            exec(line, env)  # noqa: S102
        return env

    def try_step(self, line: str) -> bool:
        try:
            env = self._run(self.program.lines + [line])
        except self.od.Error:
            return False
        for value in env.values():  # keep values finite and moderate: finite differences need it
            if isinstance(value, self.od.Tensor) and value.numel():
                values = np.abs(value.detach().numpy())
                if not np.isfinite(values).all() or values.max() > 30:  # nan: nll_loss ignoring every target
                    return False
        self.program.lines.append(line)
        self.env = env
        return True

    # ----- choices -----

    def shape(self, name):
        return tuple(self.env[name].shape)

    def pick(self, candidates):
        return candidates[int(self.rng.integers(len(candidates)))] if candidates else None

    def fresh(self, group=None, writable=True) -> Var:
        name = f"t{len(self.vars)}"
        if group is None:
            group = self.next_group
            self.next_group += 1
            self.roots[group] = name
        var = Var(name, group, writable)
        return var

    def other_for(self, target_shape, exclude_group=None):
        """An operand broadcastable to target_shape (result shape unchanged): a variable or a constant."""
        fits = [v for v in self.vars if v.group != exclude_group
                and _broadcasts_to(self.shape(v.name), target_shape)]
        if fits and self.rng.random() < 0.7:
            chosen = self.pick(fits)
            return chosen.name, chosen
        shape = target_shape[int(self.rng.integers(0, len(target_shape) + 1)):] if target_shape else ()
        return _literal(self.rng.standard_normal(shape)), None

    # ----- steps -----

    def step(self) -> bool:
        kind = self.pick(["unary"] * 4 + ["binary"] * 4 + ["reduce"] * 2 + ["matrix", "loss"] + ["view"] * 5 +
                         ["inplace"] * 6 + ["clone"] * 2)
        return getattr(self, "_" + kind)()

    def _new(self, expr: str, op: str, inputs: list[Var]) -> bool:
        var = self.fresh()
        if not self.try_step(f"{var.name} = {expr}"):
            return False
        self.vars.append(var)
        if op in SAVES_INPUTS:
            self.frozen.update(v.group for v in inputs)
        if op in SAVES_RESULT:
            self.frozen.add(var.group)
        return True

    def _unary(self) -> bool:
        v = self.pick(self.vars)
        op, expr = self.pick([
            ("neg", f"-{v.name}"), ("exp", f"{v.name}.exp()"), ("sin", f"{v.name}.sin()"), ("cos", f"od.cos({v.name})"),
            ("tanh", f"{v.name}.tanh()"), ("sigmoid", f"od.sigmoid({v.name})"), ("abs", f"{v.name}.abs()"),
            ("relu", f"od.relu({v.name})"), ("clamp", f"{v.name}.clamp(-0.5, 0.8)"), ("clamp", f"od.clamp({v.name}, None, 0.3)"),
            ("pow", f"{v.name}.pow(2)"), ("pow", f"od.pow({v.name}, 3)"), ("mul", f"{v.name} * 1.5"),
            ("add", f"{v.name} + 0.25"), ("sub", f"0.5 - {v.name}"), ("div", f"{v.name} / 3"),
            ("log", f"od.log({v.name} * {v.name} + 0.5)"), ("sqrt1p", f"od.sqrt({v.name} * {v.name} + 1)"),
        ])
        return self._new(expr, op, [v])

    def _binary(self) -> bool:
        v = self.pick(self.vars)
        shape = self.shape(v.name)
        other, ov = self.other_for(shape)
        a, b = (v.name, other) if self.rng.random() < 0.7 else (other, v.name)  # either side may broadcast
        inputs = [v] + ([ov] if ov is not None else [])
        op = self.pick(["add", "sub", "mul", "div", "maximum", "minimum", "where", "pow", "masked_fill", "add_alpha"])
        if op == "add":
            expr = f"{a} + {b}"
        elif op == "add_alpha":
            op, expr = "add", f"od.add({a}, {b}, alpha={self.pick([2, -0.5])})"
        elif op == "sub":
            expr = f"{a} - {b}"
        elif op == "mul":
            expr = f"{a} * {b}"
        elif op == "div":
            expr = f"{a} / ({b} * {b} + 0.5)"
        elif op == "pow":
            expr = f"({a} * {a} + 0.5).pow({b})"
        elif op in ("maximum", "minimum"):
            expr = f"od.{op}({a}, {b})"
        else:
            mask = _mask_literal(self.rng.random(shape[int(self.rng.integers(0, len(shape) + 1)):]) < 0.5)
            if op == "where":
                expr = f"od.where({mask}, {a}, {b})"
            else:
                expr, inputs = f"{v.name}.masked_fill({mask}, {self.pick([0.0, -1.5])})", [v]
        return self._new(expr, op, inputs)

    def _reduce(self) -> bool:
        v = self.pick(self.vars)
        n = len(self.shape(v.name))
        op = self.pick(["sum", "sum_dim", "mean", "mean_dim", "amax", "log_softmax"])
        dims = sorted({int(d) for d in self.rng.integers(-n, n, int(self.rng.integers(1, n + 1)))}) if n else [0]
        keepdim = bool(self.rng.random() < 0.5)
        if op == "sum":
            expr = f"{v.name}.sum()"
        elif op == "sum_dim":
            expr = f"{v.name}.sum({dims}, {keepdim})"
        elif op == "mean":
            expr = f"{v.name}.mean()"
        elif op == "mean_dim":
            expr = f"od.mean({v.name}, {dims}, {keepdim})"
        elif op == "amax":
            expr = f"{v.name}.amax({dims}, {keepdim})"
        else:
            expr = f"od.log_softmax({v.name}, {dims[0]})"
        return self._new(expr, op.split("_")[0] if op != "log_softmax" else op, [v])

    def _matrix(self) -> bool:
        mats = [v for v in self.vars if len(self.shape(v.name)) == 2]
        a = self.pick(mats)
        if a is None:
            return False
        n, k = self.shape(a.name)
        rights = [v for v in mats if self.shape(v.name)[0] == k]
        b = self.pick(rights)
        if self.rng.random() < 0.3 or b is None:
            return self._new(f"{a.name}.mm({a.name}.t())", "mm", [a])
        if self.rng.random() < 0.3:
            m = self.shape(b.name)[1]
            bias = _literal(self.rng.standard_normal((m,)))
            return self._new(f"od.addmm({bias}, {a.name}, {b.name}, beta=0.5, alpha=2)", "mm", [a, b])
        return self._new(f"od.mm({a.name}, {b.name})", "mm", [a, b])

    def _loss(self) -> bool:
        v = self.pick(self.vars)
        shape = self.shape(v.name)
        reduction = int(self.rng.integers(0, 3))  # PyTorch's numbers: 0 none, 1 mean, 2 sum
        if len(shape) == 2 and self.rng.random() < 0.5:
            target = self.rng.integers(0, shape[1], shape[0])
            ignore = int(target[0]) if self.rng.random() < 0.3 else -100
            expr = f"od.nll_loss(od.log_softmax({v.name}, 1), od.tensor({target.tolist()!r}), None, {reduction}, {ignore})"
            return self._new(expr, "nll_loss", [v])
        other, ov = self.other_for(shape)
        return self._new(f"od.mse_loss({v.name}, {other}, {reduction})", "mse_loss", [v] + ([ov] if ov else []))

    def _view(self, v: Var = None):
        """A view of v (a random variable, writable ones preferred, when None): its Var, or None."""
        if v is None:
            writable = [w for w in self.vars if w.writable]
            v = self.pick(writable if writable and self.rng.random() < 0.7 else self.vars)
        shape = self.shape(v.name)
        n = len(shape)
        op = self.pick(["select", "slice", "transpose", "t", "view", "expand", "unsqueeze", "squeeze", "permute"])
        r = self.rng.integers
        if op == "select" and n and all(shape):
            d = int(r(0, n))
            expr = f"{v.name}.select({d}, {int(r(-shape[d], shape[d]))})"
        elif op == "slice" and n and all(shape):
            d = int(r(0, n))
            start = int(r(0, shape[d]))
            expr = f"{v.name}[{':, ' * d}{start}:{self.pick([None, shape[d]])}:{int(r(1, 3))}]"
        elif op == "transpose" and n:
            expr = f"{v.name}.transpose({int(r(-n, n))}, {int(r(0, n))})"
        elif op == "t" and n <= 2:
            expr = f"{v.name}.t()"
        elif op == "view":
            numel = int(np.prod(shape)) if shape else 1
            divisors = [d for d in range(1, numel + 1) if numel % d == 0]
            expr = f"{v.name}.view({self.pick(divisors)}, -1)" if numel else f"{v.name}.view(-1)"
        elif op == "expand" and n < 3:
            expr = f"{v.name}.expand({[int(r(1, 3))] + [s if s != 1 else int(r(1, 4)) for s in shape]})"
        elif op == "unsqueeze" and n < 3:
            expr = f"{v.name}.unsqueeze({int(r(-n - 1, n + 1))})"
        elif op == "squeeze" and 1 in shape:
            expr = f"{v.name}.squeeze({self.pick([d for d, s in enumerate(shape) if s == 1])})"
        elif op == "squeeze" and n:
            expr = f"{v.name}.squeeze()"
        elif op == "permute" and n:
            expr = f"{v.name}.permute({[int(d) for d in self.rng.permutation(n)]})"
        else:
            return None
        var = self.fresh(group=v.group, writable=v.writable and op != "expand")
        if not self.try_step(f"{var.name} = {expr}"):
            return None
        self.vars.append(var)
        return var

    def _clone(self) -> bool:
        v = self.pick(self.vars)
        return self._new(self.pick([f"{v.name}.clone()", f"{v.name} * 1", f"{v.name}.contiguous() + 0"]), "clone", [v])

    def _inplace(self) -> bool:
        targets = [v for v in self.vars if v.writable and v.group not in self.frozen]
        t = self.pick(targets)
        if t is None:
            return False
        if self.rng.random() < 0.5 and len(self.program.lines) + 2 <= self.n_ops:
            view = self._view(t)  # in place on a view: the base gets a CopySlices node
            t = view if view is not None and view.writable else t
        shape = self.shape(t.name)
        op = self.pick(["add_", "sub_", "mul_", "mul_s", "div_", "clamp_", "relu_", "neg_", "tanh_", "sigmoid_",
                        "masked_fill_", "copy_", "fill_", "zero_", "pow_", "transpose_", "unsqueeze_"])
        other, ov = self.other_for(shape, exclude_group=t.group)
        reads, saves_result, saves_other = ([ov] if ov is not None else []), False, False
        if op == "add_":
            line = f"{t.name}.add_({other}, alpha={self.pick([1, 2, -0.5])})"
        elif op == "sub_":
            line = f"{t.name}.sub_({other})"
        elif op == "mul_":
            line, saves_other = f"{t.name}.mul_({other})", True
        elif op == "mul_s":
            line, reads = f"{t.name}.mul_({self.pick([2, -0.5])})", []
        elif op == "div_":
            line, saves_other = f"{t.name}.div_({other} * {other} + 0.5)", True
        elif op == "clamp_":
            line, reads = f"{t.name}.clamp_(-0.7, 0.6)", []
        elif op in ("relu_", "tanh_", "sigmoid_"):
            line, reads, saves_result = f"{t.name}.{op}()", [], True
        elif op == "neg_":
            line, reads = f"{t.name}.neg_()", []
        elif op == "masked_fill_":
            mask = _mask_literal(self.rng.random(shape) < 0.5)
            line, reads = f"{t.name}.masked_fill_({mask}, {self.pick([0.0, 2.0])})", []
        elif op == "copy_":
            line = f"{t.name}.copy_({other})"
        elif op == "fill_":
            line, reads = f"{t.name}.fill_({self.pick([0.5, -1.0])})", []
        elif op == "zero_":
            line, reads = f"{t.name}.zero_()", []
        elif op == "pow_":
            line, reads = f"{t.name}.pow_(2)", []
        elif op == "transpose_" and len(shape) >= 2:
            line, reads = f"{t.name}.transpose_(0, {len(shape) - 1})", []
        elif op == "unsqueeze_" and len(shape) < 3:
            line, reads = f"{t.name}.unsqueeze_(0)", []
        else:
            return False
        if not self.try_step(line):
            return False
        self.inplace.append((op.rstrip("s").rstrip("_") + "_", t.name != self.roots[t.group]))
        if saves_other:
            self.frozen.update(v.group for v in reads)
        if saves_result:
            self.frozen.add(t.group)
        if not op.startswith(("transpose_", "unsqueeze_")):
            self.modified.setdefault(t.group, self.roots[t.group])
        return True


@functools.lru_cache(maxsize=None)
def generate(od, seed: int) -> tuple[Program, Generator]:
    gen = Generator(od, seed)
    n_ops = gen.n_ops
    attempts = 0
    while len(gen.program.lines) < n_ops and attempts < 200:
        attempts += 1
        gen.step()
    last = gen.vars[-1].name
    gen.program.outputs = [last] + [root for root in gen.modified.values() if root != last]
    return gen.program, gen


def _broadcasts_to(shape, target) -> bool:
    if len(shape) > len(target):
        return False
    return all(s == t or s == 1 for s, t in zip(reversed(shape), reversed(target)))


@pytest.mark.parametrize("seed", SEEDS)
def test_random_program_gradients_match_finite_differences(opdispatch, seed):
    od = opdispatch
    program, gen = generate(od, seed)
    assert 3 <= len(program.lines) <= 8, program.source()
    fn = _compile(od, program)
    leaves = gen.leaves()
    try:
        ok = od.autograd.gradcheck(fn, tuple(leaves), raise_exception=False)
        error = None
    except od.Error as exc:  # backward raised
        ok, error = False, exc
    if not ok:
        values = "\n".join(f"x{i} = od.tensor({v.tolist()!r}, dtype=od.float64, requires_grad=True)"
                           for i, v in enumerate(gen.leaf_values))
        pytest.fail(f"seed {seed}: gradients differ from finite differences{f' ({error})' if error else ''}:\n"
                    f"{program.source()}\n{values}\n"
                    "from test_autograd_property import _weights; _w = _weights(od)\n"
                    "od.autograd.gradcheck(program, (x0, ...))\n")


VIEWS = {"select", "slice", "transpose", "t", "view", "expand", "unsqueeze", "squeeze", "permute"}
IN_PLACE = {"add_", "sub_", "mul_", "div_", "clamp_", "relu_", "neg_", "tanh_", "sigmoid_", "masked_fill_", "copy_",
            "fill_", "zero_", "pow_", "transpose_", "unsqueeze_"}


def test_the_programs_cover_every_step_kind(opdispatch):
    """The generator keeps producing what the property is about: every view and in-place step,
    in place on views (CopySlices) in a good share of the programs, programs of 3 to 8 steps."""
    calls, on_view, lengths = collections.Counter(), 0, collections.Counter()
    for seed in SEEDS:
        program, gen = generate(opdispatch, seed)
        lengths[len(program.lines)] += 1
        for line in program.lines:
            calls.update(re.findall(r"\.(\w+)\(", line))
            calls.update("slice" for _ in re.findall(r"\w\[[^\]]*:", line))
        on_view += any(view for _, view in gen.inplace)
    assert VIEWS <= set(calls), VIEWS - set(calls)
    assert IN_PLACE <= set(calls), IN_PLACE - set(calls)
    assert on_view >= len(SEEDS) // 10, on_view
    assert set(lengths) == set(range(3, 9)), lengths


@pytest.mark.parametrize("seed", SEEDS)
def test_random_program_second_derivatives_match_finite_differences(opdispatch, seed):
    """The same programs differentiated twice: gradgradcheck runs autograd.grad with
    create_graph=True on each, so the backward pass (views, in-place steps and their CopySlices
    included) is itself recorded and differentiated, against finite differences of the gradients."""
    od = opdispatch
    program, gen = generate(od, seed)
    fn = _compile(od, program)
    leaves = gen.leaves()
    try:
        ok = od.autograd.gradgradcheck(fn, tuple(leaves), raise_exception=False)
        error = None
    except od.Error as exc:
        ok, error = False, exc
    if not ok:
        pytest.fail(f"seed {seed}: second derivatives differ from finite differences"
                    f"{f' ({error})' if error else ''}:\n{program.source()}")
