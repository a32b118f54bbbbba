"""Mutated real schemas either parse and round-trip, or raise opgen's own error -- never anything else."""
import json
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opgen.errors import OpgenError
from opgen.model import FunctionSchema
from opgen.model.loader import build_model
from opgen.yamlio import load_located

# Characters the schema language gives meaning to, plus a few it does not.
ALPHABET = "()[]?!*,=->.|_ :'\"aZ09\\/\t"
TOKEN = re.compile(r"[A-Za-z0-9_]+|\s+|.")


@st.composite
def mutated_schemas(draw, schemas):
    text = draw(st.sampled_from(schemas))
    for _ in range(draw(st.integers(1, 3))):
        text = draw(st.sampled_from(MUTATIONS))(draw, text)
    return text


def _delete(draw, text):
    i = draw(st.integers(0, max(len(text) - 1, 0)))
    return text[:i] + text[i + 1:]


def _insert(draw, text):
    i = draw(st.integers(0, len(text)))
    return text[:i] + draw(st.sampled_from(ALPHABET)) + text[i:]


def _replace(draw, text):
    if not text:
        return text
    i = draw(st.integers(0, len(text) - 1))
    return text[:i] + draw(st.sampled_from(ALPHABET)) + text[i + 1:]


def _swap_tokens(draw, text):
    tokens = TOKEN.findall(text)
    if len(tokens) < 2:
        return text
    i, j = draw(st.integers(0, len(tokens) - 1)), draw(st.integers(0, len(tokens) - 1))
    tokens[i], tokens[j] = tokens[j], tokens[i]
    return "".join(tokens)


def _duplicate_punctuation(draw, text):
    spots = [i for i, ch in enumerate(text) if ch in ",()[]*!?"]
    if not spots:
        return text
    i = draw(st.sampled_from(spots))
    return text[:i] + text[i] + text[i:]


def _drop_token(draw, text):
    tokens = TOKEN.findall(text)
    del tokens[draw(st.integers(0, len(tokens) - 1))]
    return "".join(tokens)


MUTATIONS = [_delete, _insert, _replace, _swap_tokens, _duplicate_punctuation, _drop_token]


def _fuzz_settings(n):
    return settings(max_examples=n, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_fuzz_settings(300)
@given(data=st.data())
def test_mutated_schema_round_trips_or_raises_opgen_error(real_schemas, data):
    text = data.draw(mutated_schemas(real_schemas), label="schema")
    try:
        parsed = FunctionSchema.parse(text)
    except OpgenError as exc:
        assert exc.diagnostics and all(d.message for d in exc.diagnostics)
        return
    assert str(parsed) == text
    assert FunctionSchema.parse(str(parsed)) == parsed


@_fuzz_settings(100)
@given(data=st.data())
def test_mutated_schema_in_a_yaml_entry_loads_or_raises_opgen_error(real_schemas, data):
    """The whole loader (entry checks, cross-entry checks, autogen, grouping) holds up too."""
    text = data.draw(mutated_schemas(real_schemas), label="schema")
    document = load_located(f"- func: {json.dumps(text)}\n  dispatch:\n    CPU: kernel\n", "fuzz.yaml")
    try:
        model = build_model(document, "fuzz.yaml", frozenset({"nondeterministic_seeded", "core", "pointwise"}))
    except OpgenError as exc:
        assert all(d.location is None or d.location.file == "fuzz.yaml" for d in exc.diagnostics)
        return
    assert str(model.functions[0].func) == text.split("(")[0].rpartition("::")[2] + text[len(text.split("(")[0]):]
