"""A tokenizer and parser for the C++ expression subset that derivatives.yaml formulas are written
in, and a printer that puts back exactly the parentheses C++'s precedence needs.

The parser knows C++'s grammar for this subset, nothing about operators or tensors: literals,
(qualified) names, calls, member access (``.`` and ``->``), subscripts, prefix ``- + ! ~ *``,
the binary operators from ``*`` down to ``||`` with C++'s precedence and left associativity, the
conditional ``?:`` and braced lists ``{a, b}``. Comments are dropped. What is C++ but outside the
subset (lambdas, template arguments, casts, assignments) raises ``ExpressionError`` naming the
construct, so a caller can say what a formula uses that it cannot handle.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union


class ExpressionError(Exception):
    """A formula outside the subset. ``construct`` is a short, stable label for the kind of thing
    (reports count formulas by it); the message says where and what."""

    def __init__(self, construct: str, message: str):
        super().__init__(message)
        self.construct = construct
        self.message = message


# ----- tokens --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Token:
    kind: str   # "number", "string", "char", "name", "punct", "end"
    text: str
    offset: int


_TOKEN = re.compile(r"""
    (?P<space>\s+|//[^\n]*|/\*.*?\*/)
  | (?P<number>0[xX][0-9a-fA-F]+[uUlL]*|(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?[fFlLuU]*)
  | (?P<string>"(?:\\.|[^"\\])*")
  | (?P<char>'(?:\\.|[^'\\])*')
  | (?P<name>[A-Za-z_]\w*)
  | (?P<punct>::|->|==|!=|<=|>=|&&|\|\||<<|>>|\+\+|--|[-+*/%<>!~&|^?:.,()\[\]{}=;])
""", re.S | re.X)


def tokenize(text: str) -> list[Token]:
    tokens, pos = [], 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise ExpressionError("unknown character", f"unexpected character {text[pos]!r} at column {pos + 1}")
        if match.lastgroup != "space":
            tokens.append(Token(match.lastgroup, match.group(), pos))
        pos = match.end()
    tokens.append(Token("end", "", len(text)))
    return tokens


# ----- syntax tree ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Literal:
    kind: str   # "number", "string", "char"
    text: str


@dataclass(frozen=True)
class Name:
    text: str   # 'grad', 'self_sym_sizes', 'std::nullopt'

    @property
    def qualified(self) -> bool:
        return "::" in self.text


@dataclass(frozen=True)
class Call:
    callee: "Node"
    args: tuple["Node", ...]


@dataclass(frozen=True)
class Member:
    obj: "Node"
    name: str
    arrow: bool = False


@dataclass(frozen=True)
class Index:
    obj: "Node"
    index: "Node"


@dataclass(frozen=True)
class Unary:
    op: str
    operand: "Node"


@dataclass(frozen=True)
class Binary:
    op: str
    left: "Node"
    right: "Node"


@dataclass(frozen=True)
class Conditional:
    cond: "Node"
    then: "Node"
    other: "Node"


@dataclass(frozen=True)
class Braces:
    items: tuple["Node", ...]


Node = Union[Literal, Name, Call, Member, Index, Unary, Binary, Conditional, Braces]

# C++'s binary operators, loosest first (one level per entry), all left-associative.
BINARY_LEVELS: tuple[tuple[str, ...], ...] = (
    ("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", "<=", ">", ">="), ("<<", ">>"),
    ("+", "-"), ("*", "/", "%"),
)
# Precedence of a printed expression: higher binds tighter.
CONDITIONAL, UNARY, POSTFIX = 0, len(BINARY_LEVELS) + 1, len(BINARY_LEVELS) + 2
_LEVEL = {op: i + 1 for i, ops in enumerate(BINARY_LEVELS) for op in ops}
_PREFIX = ("-", "+", "!", "~", "*")
# What an unsupported token most likely starts, for the error's construct label.
_UNSUPPORTED = {"[": "lambda", "=": "assignment", ";": "statement", "++": "increment", "--": "decrement",
                "&": "address-of"}


def binary_precedence(op: str) -> int:
    return _LEVEL[op]


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens = tokenize(text)
        self.pos = 0

    @property
    def token(self) -> Token:
        return self.tokens[self.pos]

    def take(self) -> Token:
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def at(self, *texts: str) -> bool:
        return self.token.kind == "punct" and self.token.text in texts

    def expect(self, text: str, what: str) -> None:
        if not self.at(text):
            self.fail(f"expected '{text}' {what}")
        self.pos += 1

    def fail(self, message: str, construct: str = "syntax") -> None:
        token = self.token
        if token.kind == "punct" and token.text in _UNSUPPORTED and construct == "syntax":
            construct = _UNSUPPORTED[token.text]
            message = f"{construct} ('{token.text}') is not supported"
        found = f"'{token.text}'" if token.kind != "end" else "the end"
        raise ExpressionError(construct, f"{message} at column {token.offset + 1} (found {found})")

    def parse(self) -> Node:
        node = self.expression()
        if self.token.kind != "end":
            self.fail("expected the end of the formula")
        return node

    def expression(self) -> Node:
        cond = self.binary(1)
        if not self.at("?"):
            return cond
        self.take()
        then = self.expression()
        self.expect(":", "in a conditional 'c ? a : b'")
        return Conditional(cond, then, self.expression())

    def binary(self, level: int) -> Node:
        if level > len(BINARY_LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        while self.at(*BINARY_LEVELS[level - 1]):
            op = self.take().text
            left = Binary(op, left, self.binary(level + 1))
        return left

    def unary(self) -> Node:
        if self.at(*_PREFIX):
            return Unary(self.take().text, self.unary())
        return self.postfix(self.primary())

    def postfix(self, node: Node) -> Node:
        while True:
            if self.at("("):
                node = Call(node, self.arguments("(", ")"))
            elif self.at(".", "->"):
                arrow = self.take().text == "->"
                if self.token.kind != "name":
                    self.fail("expected a member name")
                node = Member(node, self.take().text, arrow)
            elif self.at("["):
                self.take()
                index = self.expression()
                self.expect("]", "closing a subscript")
                node = Index(node, index)
            else:
                return node

    def arguments(self, open_: str, close: str) -> tuple[Node, ...]:
        self.expect(open_, "")
        items: list[Node] = []
        while not self.at(close):
            items.append(self.expression())
            if not self.at(close):
                self.expect(",", f"or '{close}' after an argument")
        self.take()
        return tuple(items)

    def primary(self) -> Node:
        token = self.token
        if token.kind in ("number", "string", "char"):
            self.take()
            return Literal(token.kind, token.text)
        if token.kind == "name" or self.at("::"):
            return self.name()
        if self.at("("):
            self.take()
            node = self.expression()
            self.expect(")", "closing a parenthesis")
            return node
        if self.at("{"):
            return Braces(self.arguments("{", "}"))
        self.fail("expected an expression")
        raise AssertionError  # unreachable

    def name(self) -> Node:
        parts = []
        if self.at("::"):
            parts.append(self.take().text)
        while True:
            if self.token.kind != "name":
                self.fail("expected a name after '::'")
            parts.append(self.take().text)
            if self._template_follows():
                raise ExpressionError("template arguments",
                                      f"template arguments ('{''.join(parts)}<...>') are not supported "
                                      f"at column {self.token.offset + 1}")
            if not self.at("::"):
                return Name("".join(parts))
            parts.append(self.take().text)

    def _template_follows(self) -> bool:
        """``name<types>`` followed by '(' '{' or '::' (static_cast<double>(x), std::vector<int64_t>{})
        rather than a comparison."""
        if not self.at("<"):
            return False
        depth, i = 0, self.pos
        while i < len(self.tokens):
            t = self.tokens[i]
            if t.kind == "punct" and t.text == "<":
                depth += 1
            elif t.kind == "punct" and t.text in (">", ">>"):
                depth -= len(t.text)
                if depth <= 0:
                    following = self.tokens[i + 1]
                    return following.kind == "punct" and following.text in ("(", "{", "::")
            elif not (t.kind in ("name", "number") or (t.kind == "punct" and t.text in ("::", ",", "*", "&"))):
                return False
            i += 1
        return False


def parse_expression(text: str) -> Node:
    """The syntax tree of one C++ expression; ``ExpressionError`` outside the subset."""
    return _Parser(text).parse()


def wrap(text: str, precedence: int, needed: int) -> str:
    """``text`` (an expression of ``precedence``) as an operand that needs at least ``needed``."""
    return f"({text})" if precedence < needed else text
