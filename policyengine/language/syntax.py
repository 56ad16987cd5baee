"""JMESPath parsed with positions: where each sub-expression sits, and syntax errors that say what was expected.

jmespath's own parser keeps no positions in its AST and reports errors such as `invalid token` or
`Invalid jmespath expression (found None)`. `SpannedParser` is that same parser (so the AST is
node for node what `jmespath.compile` builds) that also records each node's span of text, the
delimiters still open and what it was looking for when it stopped.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from jmespath import exceptions as jp_exceptions
from jmespath import lexer
from jmespath.parser import Parser

__all__ = ["Spans", "SyntaxProblem", "describe_syntax_error", "parse_with_spans"]

Spans = dict[int, tuple[int, int]]
"""id() of an AST node -> (start, end) character offsets of its text in the expression."""

# How rules write each token type, for messages ("after `==`").
_SPELLING = {
    "dot": ".",
    "star": "*",
    "rbracket": "]",
    "comma": ",",
    "colon": ":",
    "current": "@",
    "lparen": "(",
    "rparen": ")",
    "lbrace": "{",
    "rbrace": "}",
    "lbracket": "[",
    "flatten": "[]",
    "filter": "[?",
    "or": "||",
    "and": "&&",
    "pipe": "|",
    "expref": "&",
    "lt": "<",
    "lte": "<=",
    "gt": ">",
    "gte": ">=",
    "eq": "==",
    "ne": "!=",
    "not": "!",
}
_CLOSER = {"lparen": ")", "lbracket": "]", "filter": "]", "lbrace": "}"}
_CLOSING = frozenset({"rparen", "rbracket", "rbrace"})
# Tokens after which an operand must come; after any other token the parser wanted a separator.
_WANTS_OPERAND = frozenset(
    {"or", "and", "pipe", "expref", "lt", "lte", "gt", "gte", "eq", "ne", "not", "comma", "colon", "lparen"}
    | {"lbracket", "filter", "dot", "lbrace"}
)
_OPERATORS = "an operator (`&&`, `||`, `|`, `==`, `!=`, `<`, `<=`, `>`, `>=`), `.field`, `[...]`"
_ARITHMETIC = "JMESPath has no arithmetic: use product([a, b]) to multiply and sum([a, b]) to add"
_HASH = "a multi-select hash is written {name: expression, ...}"
_NUMBER_HINT = "a number is a JSON literal in backticks, e.g. `5`"


@dataclass(frozen=True, slots=True)
class SyntaxProblem:
    """A syntax error in words: the message, where its caret goes (offset, width) and a hint."""

    message: str
    offset: int
    width: int
    hint: str | None = None


@dataclass(frozen=True, slots=True)
class _Opened:
    """A delimiter not closed yet: how it reads (`contains(`, `[?`) and where it starts."""

    label: str
    closer: str
    start: int


@dataclass(frozen=True, slots=True)
class _Failure:
    """What the parser was doing when it stopped: the kind of place, the token found, what it expected."""

    kind: str
    token: dict[str, Any]
    expected: Any = None


class SpannedParser(Parser):  # type: ignore[misc]
    """jmespath's parser, recording each node's text span, the open delimiters and why it stopped."""

    def __init__(self) -> None:
        """A parser for one expression (the instance keeps that expression's spans)."""
        super().__init__()
        self.text = ""
        self.spans: Spans = {}
        self.opened: list[_Opened] = []
        self.failure: _Failure | None = None
        self._kept: list[Any] = []

    def parse_text(self, text: str) -> dict[str, Any]:
        """The AST of `text`, as jmespath.compile(text).parsed; raises jmespath's errors."""
        # Not Parser.parse: its cache is shared with jmespath.compile and would skip the recording.
        self.text = text
        tokens = list(lexer.Lexer().tokenize(text))
        # jmespath 1.1.0 gives some tokens a wrong `end` (a length for literals, one short for
        # `==` or `&&`); a token ends where the next one starts, less the whitespace between.
        for token, following in itertools.pairwise(tokens):
            token["end"] = len(text[: following["start"]].rstrip(" \t\n\r"))
        self._tokens = tokens
        self._index = 0
        parsed: dict[str, Any] = self._expression(binding_power=0)
        if self._current_token() != "eof":
            token = self._lookahead_token(0)
            self.failure = _Failure("end", token)
            raise jp_exceptions.ParseError(
                token["start"], token["value"], token["type"], f"Unexpected token: {token['value']}"
            )
        return parsed

    # The Pratt loop of jmespath's Parser._expression, recording the span of every node it builds
    # (a left operand that a led extends in place, `a.b.c`, gets the longer span).
    def _expression(self, binding_power: int = 0) -> Any:
        left_token = self._lookahead_token(0)
        self._advance()
        nud = getattr(self, f"_token_nud_{left_token['type']}", self._error_nud_token)
        left = nud(left_token)
        self._span(left, left_token["start"])
        current = self._current_token()
        while binding_power < self.BINDING_POWER[current]:
            led = getattr(self, f"_token_led_{current}", None)
            if led is None:
                self._error_led_token(self._lookahead_token(0))
            else:
                self._advance()
                left = led(left)
                self._span(left, left_token["start"])
                current = self._current_token()
        return left

    def _span(self, node: Any, start: int) -> None:
        self.spans[id(node)] = (start, self._tokens[self._index - 1]["end"])
        # Keyed by id(): a node a led drops (the field `f` of `f(x)`) must stay alive, or a later
        # node could reuse its id and take its span.
        self._kept.append(node)

    # Open delimiters: pushed where jmespath consumes the opening token, popped by the _match
    # of the closing one, so on an error the innermost still-open delimiter is on top.

    def _open(self, token: dict[str, Any], label: str | None = None, start: int | None = None) -> None:
        self.opened.append(
            _Opened(
                label or _SPELLING.get(token["type"], str(token["value"])),
                _CLOSER[token["type"]],
                token["start"] if start is None else start,
            )
        )

    def _match(self, token_type: str | None = None) -> None:
        token = self._lookahead_token(0)
        super()._match(token_type)
        if token_type in _CLOSING and self.opened:
            self.opened.pop()
        elif token_type in _CLOSER:
            self._open(token)

    def _token_nud_lparen(self, token: dict[str, Any]) -> Any:
        self._open(token)
        return super()._token_nud_lparen(token)

    def _token_nud_lbrace(self, token: dict[str, Any]) -> Any:
        self._open(token)
        return super()._token_nud_lbrace(token)

    def _token_nud_lbracket(self, token: dict[str, Any]) -> Any:
        if not (self._current_token() == "star" and self._lookahead(1) == "rbracket"):
            self._open(token)  # `[*]` is read in one go and cannot stop half-way
        return super()._token_nud_lbracket(token)

    def _token_led_lbracket(self, left: Any) -> Any:
        self._open(self._lookahead_token(-1))
        return super()._token_led_lbracket(left)

    def _token_led_filter(self, left: Any) -> Any:
        self._open(self._lookahead_token(-1))
        return super()._token_led_filter(left)

    def _token_led_lparen(self, left: Any) -> Any:
        if left["type"] != "field":
            self.failure = _Failure("call", self._lookahead_token(-2))
        else:
            name = self._lookahead_token(-2)
            self._open(self._lookahead_token(-1), f"{left['value']}(", name["start"])
        return super()._token_led_lparen(left)

    # Why the parser stopped, noted just before jmespath raises.

    def _token_nud_quoted_identifier(self, token: dict[str, Any]) -> Any:
        if self._current_token() == "lparen":
            self.failure = _Failure("quoted-call", token)
        return super()._token_nud_quoted_identifier(token)

    def _error_nud_token(self, token: dict[str, Any]) -> Any:
        self.failure = _Failure("operand", token)
        return super()._error_nud_token(token)

    def _error_led_token(self, token: dict[str, Any]) -> Any:
        self.failure = _Failure("operator", token)
        return super()._error_led_token(token)

    def _raise_parse_error_maybe_eof(self, expected_type: Any, token: dict[str, Any]) -> Any:
        self.failure = _Failure("expected", token, expected_type)
        return super()._raise_parse_error_maybe_eof(expected_type, token)

    def _parse_dot_rhs(self, binding_power: int) -> Any:
        if self._current_token() not in ("quoted_identifier", "unquoted_identifier", "star", "lbracket", "lbrace"):
            self.failure = _Failure("dot", self._lookahead_token(0))
        start = self._lookahead_token(0)["start"]
        node = super()._parse_dot_rhs(binding_power)
        if id(node) not in self.spans:
            # `.[a, b]` and `.{k: v}` are built here, not by a nud: their span starts at the bracket.
            self._span(node, start)
        return node

    def _parse_projection_rhs(self, binding_power: int) -> Any:
        current = self._current_token()
        if self.BINDING_POWER[current] >= self._PROJECTION_STOP and current not in ("lbracket", "filter", "dot"):
            self.failure = _Failure("projection", self._lookahead_token(0))
        return super()._parse_projection_rhs(binding_power)

    def _parse_slice_expression(self) -> Any:
        try:
            return super()._parse_slice_expression()
        except jp_exceptions.ParseError:
            if self.failure is None:
                self.failure = _Failure("slice", self._lookahead_token(0))
            raise


def parse_with_spans(text: str) -> tuple[dict[str, Any], Spans]:
    """The jmespath AST of `text` and the span of every node the text spells (raises jmespath's errors)."""
    parser = SpannedParser()
    return parser.parse_text(text), parser.spans


# --- syntax errors in words -----------------------------------------------------------------------


def describe_syntax_error(text: str) -> SyntaxProblem | None:
    """What is wrong with `text` and what could come at the caret; None if it parses (or we cannot tell)."""
    parser = SpannedParser()
    try:
        parser.parse_text(text)
    except jp_exceptions.EmptyExpressionError:
        return SyntaxProblem("the expression is empty", 0, 1, "write a JMESPath expression, e.g. arguments.path")
    except jp_exceptions.LexerError as error:
        return _lexer_problem(text, error)
    except jp_exceptions.ParseError:
        if parser.failure is None:
            return None
        return _Explainer(parser, parser.failure).problem()
    return None


def _column(offset: int) -> int:
    """1-based column of a character offset in the expression."""
    return offset + 1


def _lexer_problem(text: str, error: jp_exceptions.LexerError) -> SyntaxProblem:
    position = error.lexer_position or 0
    value = str(error.lexer_value or "")
    message = str(error.message or "")
    width = max(1, len(value))
    unclosed = {
        "'": ("unterminated raw string literal", "close it with ' (write \\' for a quote inside it)"),
        "`": ("unterminated JSON literal", "close it with ` (write \\` for a backtick inside it)"),
        '"': ("unterminated quoted identifier", 'close it with " (write \\" for a quote inside it)'),
    }
    for quote, (what, hint) in unclosed.items():
        if message == f"Unclosed {quote} delimiter":
            return SyntaxProblem(
                f"{what}: this {quote} is never closed, found the end of the expression",
                position,
                width,
                hint,
            )
    if message.startswith("Bad token"):
        return SyntaxProblem(
            f"invalid JSON literal {_cut(value)}: what is between backticks must be JSON",
            position,
            width,
            'e.g. `5`, `true`, `null`, `"text"`, `[1, 2]`, `{"a": 1}`; strings are simpler as \'raw strings\'',
        )
    if value == "=":
        return SyntaxProblem("found `=`: expected `==` to compare", position, 1, "JMESPath compares with == and !=")
    if message.startswith("Unknown token"):
        char = value or text[position : position + 1]
        advice = _ARITHMETIC if char in ("+", "-", "/", "%", "^") else None
        if char == "?":
            advice = "a filter starts with `[?`, with nothing between `[` and `?`"
        return SyntaxProblem(f"found {_cut(char)}, which is not part of JMESPath", position, max(1, len(char)), advice)
    # A quoted identifier that is not a JSON string (a bad escape, a control character).
    return SyntaxProblem(
        f"invalid quoted identifier {_cut(value)}: {message}",
        position,
        width,
        "a \"quoted identifier\" is a JSON string naming a field; 'raw strings' are values",
    )


def _cut(source: str, limit: int = 30) -> str:
    """Source text for a message, in backticks (doubled around a backtick literal), on one line, cut if long."""
    source = "".join(c if c.isprintable() else repr(c)[1:-1] for c in source)
    source = source if len(source) <= limit else source[: limit - 1] + "…"
    return f"`` {source} ``" if "`" in source else f"`{source}`"


class _Explainer:
    """Turns where the parser stopped into a sentence: what was found, what could have come there."""

    def __init__(self, parser: SpannedParser, failure: _Failure) -> None:
        self.text = parser.text
        self.tokens: list[dict[str, Any]] = parser._tokens
        self.opened = parser.opened
        self.failure = failure
        self.token = failure.token
        position = next((i for i, t in enumerate(self.tokens) if t is self.token), None)
        self.before = self.tokens[position - 1] if position else None

    def problem(self) -> SyntaxProblem:
        """The message, the caret at the token found and a hint."""
        method = getattr(self, "_" + self.failure.kind.replace("-", "_"))
        message, hint = method()
        if self.token["type"] == "eof" and self.opened and "to close" not in message:
            message += f"; {self._close(self.opened[-1])} is still missing"
        width = max(1, self.token["end"] - self.token["start"]) if self.token["type"] != "eof" else 1
        return SyntaxProblem(message, self.token["start"], width, hint)

    # -- pieces of sentences

    def _spell(self, token: dict[str, Any]) -> str:
        """How a token reads in the expression, in backticks."""
        return _cut(self.text[token["start"] : token["end"]] or str(token["value"]))

    @property
    def found(self) -> str:
        if self.token["type"] == "eof":
            return "found the end of the expression"
        if self.token["type"] == "number":
            return f"found the number {self._spell(self.token)}"
        return f"found {self._spell(self.token)}"

    @staticmethod
    def _close(opened: _Opened) -> str:
        # The column counts in the expression (or the placeholder), which the caret line shows.
        return f"`{opened.closer}` to close `{opened.label}` opened at column {_column(opened.start)} of the expression"

    def _number_hint(self) -> str | None:
        return _NUMBER_HINT if self.token["type"] == "number" else None

    # -- one method per place the parser can stop

    def _operand(self) -> tuple[str, str | None]:
        """An expression was needed (after an operator, at the start, inside a call)."""
        before = self.before
        inner = self.opened[-1] if self.opened else None
        hint = self._number_hint()
        if before is None:
            return f"expected an expression, {self.found}", hint
        if inner is not None and inner.label.endswith("(") and inner.label != "(":
            # Inside a function call: after `(` or `,` an argument, after an argument `,` or `)`.
            if before["type"] == "lparen":
                return f"expected an argument or `)` after `{inner.label}`, {self.found}", hint
            if before["type"] == "comma":
                return f"expected a function argument after `,`, {self.found}", hint
            if before["type"] not in _WANTS_OPERAND:
                return f"expected `,` or {self._close(inner)}, {self.found}", hint
        if before["type"] in _WANTS_OPERAND:
            return f"expected an expression after {self._spell(before)}, {self.found}", hint
        return f"expected an expression, {self.found}", hint

    def _operator(self) -> tuple[str, str | None]:
        """A complete operand was followed by something that cannot continue it."""
        hint = _ARITHMETIC if self.token["type"] == "star" else None
        if self.token["type"] == "not":
            hint = "`!` goes before what it negates: !(a == b), or write a != b"
        after = f" after {self._spell(self.before)}" if self.before else ""
        return f"{self.found}{after}: expected {_OPERATORS} or the end of the expression", hint

    def _end(self) -> tuple[str, str | None]:
        """The expression was complete, yet more text followed."""
        kind = self.token["type"]
        if kind in _CLOSING:
            opening = {"rparen": "(", "rbracket": "[", "rbrace": "{"}[kind]
            return f"{self.found}, but no `{opening}` is open", "check that brackets and parentheses pair up"
        if kind == "comma":
            return f"{self.found} outside a list or a function call", "a list of expressions is written [a, b]"
        after = f" after {self._spell(self.before)}" if self.before else ""
        hint = self._number_hint()
        if kind in ("unquoted_identifier", "quoted_identifier", "literal", "current"):
            hint = "two expressions need an operator between them, e.g. a && b, or a.b for a field of a"
        return f"{self.found}{after}: expected {_OPERATORS} or the end of the expression", hint

    def _expected(self) -> tuple[str, str | None]:
        """jmespath wanted one kind of token (a closing bracket, a colon...) and found another."""
        expected = self.failure.expected
        inner = self.opened[-1] if self.opened else None
        if expected in ("rparen", "rbracket") and inner is not None:
            return f"expected {self._close(inner)}, {self.found}", None
        if expected == "comma" and inner is not None:
            # A multi-select list: after an element, `,` or its closing `]`.
            return f"expected `,` or {self._close(inner)}, {self.found}", None
        if expected == "star":
            hint = self._number_hint()
            if self.token["type"] in ("unquoted_identifier", "current"):
                name = self._spell(self.token).strip("`")
                hint = f"to filter write [?{name} ...]; to read a field write .{name}"
            elif self.token["type"] == "literal":
                hint = "JMESPath has no ['key']: read a field with .key or .\"key\""
            return f"expected a number, a slice such as `1:3`, `*` or `?` after `[`, {self.found}", hint
        if expected == "colon":
            key = self._spell(self.before) if self.before is not None else "the key"
            return f"expected `:` after the key {key}, {self.found}", _HASH
        if isinstance(expected, list) and "unquoted_identifier" in expected:
            if self.before is not None and self.before["type"] in ("lbrace", "comma"):
                return f"expected a key name, {self.found}", _HASH
            close = self._close(inner) if inner is not None else "`}`"
            return f"expected `,` or {close}, {self.found}", None
        wanted = _SPELLING.get(str(expected), str(expected))
        return f"expected `{wanted}`, {self.found}", None

    def _dot(self) -> tuple[str, str | None]:
        """After `.`: a field name, `*`, `[` or `{`."""
        hint = None
        if self.token["type"] == "number":
            hint = "an index is written [0], not .0"
        elif self.token["type"] == "literal":
            hint = "a field name is written .name or .\"quoted name\"; 'raw strings' are values"
        return f"expected a field name, `*`, `[` or `{{` after `.`, {self.found}", hint

    def _projection(self) -> tuple[str, str | None]:
        """After a projection (`[*]`, `*`, `[]`, a filter): `.`, `[`, or an operator."""
        return f"{self.found}: after a projection (`[*]`, `*`) comes `.field`, `[...]`, an operator or the end", None

    def _slice(self) -> tuple[str, str | None]:
        """Inside `[start:stop:step]`."""
        if self.token["type"] == "colon":
            return f"{self.found}: a slice has at most three parts, [start:stop:step]", None
        return f"expected a number, `:` or `]` in the slice, {self.found}", self._number_hint()

    def _call(self) -> tuple[str, str | None]:
        """Something that is not a name was followed by `(`."""
        return (
            f"{self._spell(self.token)} is followed by `(`, but only a function name can be called",
            "see docs/functions.md for the functions rules can use",
        )

    def _quoted_call(self) -> tuple[str, str | None]:
        """A "quoted" function name."""
        name = self._spell(self.token)
        return f"a function name cannot be quoted, {self.found}", f"write {name.strip('`').strip(chr(34))}(...)"
