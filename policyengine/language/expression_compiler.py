"""Compile jmespath ASTs into nested Python closures with jmespath 1.1.0's TreeInterpreter semantics.

One deliberate difference, shared by the closures and the fallback interpreter (`search`): an
ordering comparison (`<`, `<=`, `>`, `>=`) whose operands are not two numbers or two strings
raises OrderingError instead of giving null, so a limit rule fails closed on a value of the
wrong type instead of silently not applying (docs/rules.md, "Ordering comparisons").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from numbers import Number
from typing import Any

import jmespath
import jmespath.functions
from jmespath.exceptions import JMESPathError
from jmespath.visitor import Options, TreeInterpreter, _Expression

from policyengine.language.type_names import TypeNames, type_name
from policyengine.values.frozen import FrozenDict, FrozenList

__all__ = ["Fn", "OrderingError", "StrictInterpreter", "compile_ast", "compile_text", "search"]

Fn = Callable[[Any], Any]
"""A compiled expression: the current value in, the result out."""

_NONE_TYPE = type(None)
# Exact types that have neither .get nor .values: a field or `*` on them is null without the
# AttributeError round trip jmespath takes (an exception costs ~0.3 us, the check ~30 ns).
_PLAIN = frozenset({_NONE_TYPE, str, int, float, bool, list, FrozenList})
# Exact types whose JMESPath falsiness is Python emptiness (jmespath compares them to '', [], {}).
_SIZED = frozenset({str, list, dict, FrozenList, FrozenDict})
# Exact JSON types for which `x == True` holds only for True itself once jmespath's 0/1 rule applies.
_JSON = frozenset({_NONE_TYPE, str, int, float, bool, list, dict, FrozenList, FrozenDict})


class _Unsupported(Exception):
    """Raised inside the compiler for a node it does not handle: the caller falls back to jmespath."""


# --- jmespath's value rules, inlined with exact-type fast paths -----------------------------------


def _is_actual_number(x: Any) -> bool:
    """jmespath's number test: any numbers.Number except bool."""
    t = type(x)
    if t is int or t is float:
        return True
    if t in _JSON:
        return False
    # The ABC check is slow (~0.3 us), so only values outside plain JSON pay for it.
    return not isinstance(x, bool) and isinstance(x, Number)


# The operator each ordering comparator node stands for, as rules write it.
_SYMBOLS = {"lt": "<", "lte": "<=", "gt": ">", "gte": ">="}


class OrderingError(JMESPathError):  # type: ignore[misc]
    """An ordering comparison whose operands are not two numbers or two strings (the rule fails closed)."""

    def __init__(self, op: str, left: Any, right: Any) -> None:
        """Name the operator and the JSON types of both operands."""
        self.operator = _SYMBOLS.get(op, op)
        self.types = (_json_type(left), _json_type(right))
        super().__init__(
            f"ordering comparison `{self.operator}` needs two numbers or two strings, "
            f"got {self.types[0]} and {self.types[1]}"
        )


# The JMESPath type names (booleans are not numbers).
_JSON_TYPES: TypeNames = (
    (_NONE_TYPE, "null"),
    (bool, "boolean"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
    (Number, "number"),
    (_Expression, "expref"),
)


def _json_type(x: Any) -> str:
    """The JMESPath type name of a value (booleans are not numbers)."""
    return type_name(x, _JSON_TYPES)


def _ordered(op: str, compare: Callable[[Any, Any], Any], x: Any, y: Any) -> Any:
    """`compare(x, y)` for two numbers (not booleans) or two strings; OrderingError otherwise."""
    if (_is_actual_number(x) and _is_actual_number(y)) or (isinstance(x, str) and isinstance(y, str)):
        return compare(x, y)
    raise OrderingError(op, x, y)


def _equals(x: Any, y: Any) -> bool:
    """jmespath's ==: Python equality, except 0/1 never equal false/true (nested values unchanged)."""
    if type(x) is str or type(y) is str:
        return bool(x == y)  # a string is neither a number nor a boolean: no special case applies
    if _is_actual_number(x) and x in (0, 1):
        if isinstance(y, bool):
            return False
    elif _is_actual_number(y) and y in (0, 1) and isinstance(x, bool):
        return False
    return bool(x == y)


def _is_false(value: Any) -> bool:
    """JMESPath falsiness as jmespath tests it: '', [], {}, null and false (0 is true)."""
    t = type(value)
    if t is bool:
        return not value
    if value is None:
        return True
    if t in _SIZED:
        return not value
    if t is int or t is float:
        return False
    # Anything else gets jmespath's own equality tests, whatever its __eq__ does.
    return bool(value == "" or value == [] or value == {} or value is None or value is False)


def _get(value: Any, key: str) -> Any:
    """A field lookup: value.get(key) on anything that has .get, else null (jmespath's try/except)."""
    if isinstance(value, dict):
        return value.get(key)
    if type(value) in _PLAIN:
        return None
    try:
        return value.get(key)
    except AttributeError:
        return None


def _values(value: Any) -> Any:
    """`*` on an object: value.values() on anything that has .values, else None."""
    if isinstance(value, dict):
        return value.values()
    if type(value) in _PLAIN:
        return None
    try:
        return value.values()
    except AttributeError:
        return None


# --- expression references -----------------------------------------------------------------------


class _ExprefVisitor:
    """Stands in for the interpreter inside jmespath's _Expression: visit(expression, x) runs compiled code."""

    __slots__ = ("_fallback", "fn", "node")

    def __init__(self, node: dict[str, Any], fn: Fn, fallback: Callable[[], TreeInterpreter]) -> None:
        """Remember the referenced node, its closure and how to build a real interpreter."""
        self.node = node
        self.fn = fn
        self._fallback = fallback

    def visit(self, node: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        """Evaluate the referenced expression; any other node goes to a real TreeInterpreter."""
        if node is self.node and len(args) == 1 and not kwargs:
            return self.fn(args[0])
        # A custom function may visit some other node through the expref; keep that working.
        return self._fallback().visit(node, *args, **kwargs)


# --- the compiler ---------------------------------------------------------------------------------


class _Compiler:
    """Turns one AST into closures; holds what every node needs (functions, dict class)."""

    def __init__(self, functions: jmespath.functions.Functions, dict_cls: Callable[[], Any] | None) -> None:
        """Bind the function table and the class multi-select hashes are built with."""
        self.functions = functions
        self.dict_cls = dict_cls

    def interpreter(self) -> StrictInterpreter:
        """A real interpreter with the same options, for expref visits of foreign nodes."""
        return StrictInterpreter(Options(dict_cls=self.dict_cls, custom_functions=self.functions))

    def compile(self, node: Any) -> Fn:
        """Dispatch on the node type."""
        if not isinstance(node, dict):
            raise _Unsupported(repr(node))
        method = getattr(self, "_" + str(node.get("type")), None)
        if method is None:
            raise _Unsupported(str(node.get("type")))
        fn: Fn = method(node)
        return fn

    # Chains: subexpression, index_expression and pipe all feed each child the previous result.

    def _steps(self, node: dict[str, Any], out: list[dict[str, Any]]) -> None:
        """Flatten nested chains (composition is associative) and drop identity steps."""
        kind = node.get("type")
        if kind in ("subexpression", "index_expression", "pipe"):
            for child in node["children"]:
                self._steps(child, out)
        elif kind not in ("identity", "current"):
            out.append(node)

    def _chain(self, node: dict[str, Any]) -> Fn:
        steps: list[dict[str, Any]] = []
        self._steps(node, steps)
        fns: list[Fn] = []
        keys: list[str] = []
        for step in steps:
            if step.get("type") == "field":
                keys.append(step["value"])
                continue
            if keys:
                fns.append(_path(tuple(keys)))
                keys = []
            fns.append(self.compile(step))
        if keys:
            fns.append(_path(tuple(keys)))
        return _compose(fns)

    _subexpression = _index_expression = _pipe = _chain

    def _field(self, node: dict[str, Any]) -> Fn:
        return _path((node["value"],))

    def _identity(self, node: dict[str, Any]) -> Fn:
        return _identity

    _current = _identity

    def _literal(self, node: dict[str, Any]) -> Fn:
        # The interpreter hands out the very object stored in the AST; so do we.
        value = node["value"]
        return lambda _v: value

    def _index(self, node: dict[str, Any]) -> Fn:
        i = node["value"]
        if not isinstance(i, int):
            raise _Unsupported("index")

        def index(v: Any) -> Any:
            # jmespath indexes only lists (never strings); out of range is null.
            if isinstance(v, list):
                try:
                    return v[i]
                except IndexError:
                    return None
            return None

        return index

    def _slice(self, node: dict[str, Any]) -> Fn:
        # Python slice semantics, negative steps included; a zero step raises ValueError as in jmespath.
        s = slice(*node["children"])
        return lambda v: v[s] if isinstance(v, list) else None

    def _key_val_pair(self, node: dict[str, Any]) -> Fn:
        return self.compile(node["children"][0])

    def _multi_select_list(self, node: dict[str, Any]) -> Fn:
        fns = [self.compile(child) for child in node["children"]]
        # Only null short-circuits: [a, b] on a string or number still builds the list.
        if len(fns) == 1:
            (f0,) = fns
            return lambda v: None if v is None else [f0(v)]
        if len(fns) == 2:
            f0, f1 = fns
            return lambda v: None if v is None else [f0(v), f1(v)]

        def multi_select_list(v: Any) -> Any:
            if v is None:
                return None
            collected = []
            for fn in fns:
                collected.append(fn(v))
            return collected

        return multi_select_list

    def _multi_select_dict(self, node: dict[str, Any]) -> Fn:
        pairs = [(child["value"], self.compile(child)) for child in node["children"]]
        dict_cls = self.dict_cls

        if dict_cls is None:

            def multi_select_dict(v: Any) -> Any:
                if v is None:
                    return None
                collected = {}
                for key, fn in pairs:
                    collected[key] = fn(v)
                return collected

            return multi_select_dict

        def multi_select_custom(v: Any) -> Any:
            if v is None:
                return None
            collected = dict_cls()
            for key, fn in pairs:
                collected[key] = fn(v)
            return collected

        return multi_select_custom

    def _or_expression(self, node: dict[str, Any]) -> Fn:
        left, right = (self.compile(child) for child in node["children"])

        def or_expression(v: Any) -> Any:
            matched = left(v)
            return right(v) if _is_false(matched) else matched

        return or_expression

    def _and_expression(self, node: dict[str, Any]) -> Fn:
        left, right = (self.compile(child) for child in node["children"])

        def and_expression(v: Any) -> Any:
            matched = left(v)
            return matched if _is_false(matched) else right(v)

        return and_expression

    def _not_expression(self, node: dict[str, Any]) -> Fn:
        inner = self.compile(node["children"][0])

        def not_expression(v: Any) -> Any:
            x = inner(v)
            t = type(x)
            if t is bool:
                return not x
            # jmespath special-cases !0 to false; any other number is already falsy under not.
            if _is_actual_number(x):
                return False
            # Everything else is Python's `not`, as in jmespath (so `!{}` and `![]` are true).
            return not x

        return not_expression

    def _comparator(self, node: dict[str, Any]) -> Fn:
        op = node["value"]
        left_node, right_node = node["children"]
        left, right = self.compile(left_node), self.compile(right_node)
        if op in ("eq", "ne"):
            if right_node.get("type") == "literal":
                return _equality_with_literal(left, right_node["value"], op == "ne", literal_first=False)
            if left_node.get("type") == "literal":
                return _equality_with_literal(right, left_node["value"], op == "ne", literal_first=True)

            if op == "eq":
                return lambda v: _equals(left(v), right(v))
            return lambda v: not _equals(left(v), right(v))
        compare = _ORDERING.get(op)
        if compare is None:
            raise _Unsupported(f"comparator {op}")
        if isinstance(right_node, dict) and right_node.get("type") == "literal":
            return _ordering_with_literal(left, right_node["value"], op, compare)

        def ordering(v: Any) -> Any:
            x, y = left(v), right(v)
            tx, ty = type(x), type(y)
            # Two plain numbers, the common case, pay for two type tests only.
            if (tx is int or tx is float) and (ty is int or ty is float):
                return compare(x, y)
            return _ordered(op, compare, x, y)

        return ordering

    def _projection(self, node: dict[str, Any]) -> Fn:
        left = self.compile(node["children"][0])
        right_node = node["children"][1]
        if right_node.get("type") in ("identity", "current"):

            def projection_identity(v: Any) -> Any:
                base = left(v)
                if not isinstance(base, list):
                    return None
                # Explicit loops: in 3.11 a comprehension costs a function call, more than short lists do.
                collected = []
                for e in base:
                    if e is not None:
                        collected.append(e)
                return collected

            return projection_identity
        right = self.compile(right_node)

        def projection(v: Any) -> Any:
            base = left(v)
            if not isinstance(base, list):
                return None
            collected = []
            for e in base:
                r = right(e)
                if r is not None:
                    collected.append(r)
            return collected

        return projection

    def _value_projection(self, node: dict[str, Any]) -> Fn:
        left = self.compile(node["children"][0])
        right = self.compile(node["children"][1])

        def value_projection(v: Any) -> Any:
            base = _values(left(v))
            if base is None:
                return None
            collected = []
            for e in base:
                r = right(e)
                if r is not None:
                    collected.append(r)
            return collected

        return value_projection

    def _filter_projection(self, node: dict[str, Any]) -> Fn:
        left_node, right_node, condition_node = node["children"]
        left, condition = self.compile(left_node), self.compile(condition_node)
        if right_node.get("type") in ("identity", "current"):

            def filter_identity(v: Any) -> Any:
                base = left(v)
                if not isinstance(base, list):
                    return None
                collected = []
                for e in base:
                    c = condition(e)
                    # Conditions are mostly comparisons: skip the falsiness call for a plain true.
                    if (c is True or (c is not False and not _is_false(c))) and e is not None:
                        collected.append(e)
                return collected

            return filter_identity
        right = self.compile(right_node)

        def filter_projection(v: Any) -> Any:
            base = left(v)
            if not isinstance(base, list):
                return None
            collected = []
            for e in base:
                c = condition(e)
                if c is True or (c is not False and not _is_false(c)):
                    r = right(e)
                    if r is not None:
                        collected.append(r)
            return collected

        return filter_projection

    def _flatten(self, node: dict[str, Any]) -> Fn:
        inner = self.compile(node["children"][0])

        def flatten(v: Any) -> Any:
            base = inner(v)
            if not isinstance(base, list):
                return None
            merged: list[Any] = []
            for e in base:
                if isinstance(e, list):
                    merged.extend(e)
                else:
                    merged.append(e)
            return merged

        return flatten

    def _specialized(self, name: str, children: list[dict[str, Any]], args: list[Fn]) -> Fn | None:
        """A faster body when the functions object offers one for these literal arguments."""
        specialize = getattr(self.functions, "specialize", None)
        if specialize is None or len(children) != 2 or _literal_value(children[1]) is _NOT_LITERAL:
            return None
        from policyengine.language.functions import DYNAMIC, FALLBACK

        constant = _literal_value(children[1])
        run = specialize(name, [DYNAMIC, constant])
        if run is None:
            return None
        # A multi-select of literals (['a', 'b']) is null on a null current node: keep that.
        exact = args[1] if children[1].get("type") != "literal" else None
        return _specialized_call(run, FALLBACK, name, args[0], constant, self.functions.call_function, exact)

    def _expref(self, node: dict[str, Any]) -> Fn:
        target = node["children"][0]
        visitor = _ExprefVisitor(target, self.compile(target), self.interpreter)
        # A fresh jmespath _Expression per evaluation, as the interpreter makes: its type name is what
        # function signatures check, and functions call expref.visit(expref.expression, x).
        return lambda _v: _Expression(target, visitor)

    def _function_expression(self, node: dict[str, Any]) -> Fn:
        name = node["value"]
        args = [self.compile(child) for child in node["children"]]
        call = self.functions.call_function
        special = self._specialized(name, node["children"], args)
        if special is not None:
            return special
        fast = _fast_call(self.functions, name, len(args))
        if fast is not None:
            # Arguments whose types pass jmespath's own check go straight to the function; any
            # other goes through call_function, so errors are jmespath's exactly.
            function, check = fast
            functions = self.functions
            if len(args) == 1:
                (a0,) = args
                if name == "length" and function is _JMESPATH_LENGTH and _FAST_FORMS:
                    # Fast form (issue 22's CPU bound): a list passes length's check and jmespath
                    # returns len() of it; anything else takes the checked call below.
                    # Differential test: tests/test_expression_fast_forms.py.

                    def length_of(v: Any) -> Any:
                        x = a0(v)
                        if type(x) is list:
                            return len(x)
                        return function(functions, x) if check((x,)) else call(name, [x])

                    return length_of
                if _FAST_FORMS and check is _any_values:
                    # Fast form: a reader of any value (paths(@), urls(@), secrets(@)...) has no
                    # type to check, so it is called at once (check would pass every value).

                    def call_any(v: Any) -> Any:
                        return function(functions, a0(v))

                    return call_any

                def call1(v: Any) -> Any:
                    x = a0(v)
                    return function(functions, x) if check((x,)) else call(name, [x])

                return call1
            if len(args) == 2:
                a0, a1 = args

                def call2(v: Any) -> Any:
                    x, y = a0(v), a1(v)
                    return function(functions, x, y) if check((x, y)) else call(name, [x, y])

                return call2

            def calln(v: Any) -> Any:
                values = [a(v) for a in args]
                return function(functions, *values) if check(values) else call(name, values)

            return calln
        if len(args) == 1:
            (a0,) = args
            return lambda v: call(name, [a0(v)])
        if len(args) == 2:
            a0, a1 = args
            return lambda v: call(name, [a0(v), a1(v)])
        return lambda v: call(name, [a(v) for a in args])


def _specialized_call(
    run: Callable[[Any], Any],
    fallback: Any,
    name: str,
    subject: Fn,
    constant: Any,
    call: Callable[..., Any],
    exact: Fn | None,
) -> Fn:
    """`name(subject, constant)` through a specialised body, the general function when unsure."""

    def special(v: Any) -> Any:
        x = subject(v)
        if exact is not None and v is None:
            return call(name, [x, exact(v)])
        result = run(x)
        return call(name, [x, constant]) if result is fallback else result

    return special


def _fast_call(
    functions: jmespath.functions.Functions, name: str, arity: int
) -> tuple[Callable[..., Any], Callable[[Sequence[Any]], bool]] | None:
    """The function and a type check equal to jmespath's for its signature, or None to not try."""
    spec = getattr(functions, "FUNCTION_TABLE", {}).get(name)
    if spec is None:
        return None
    signature = spec["signature"]
    if len(signature) != arity or any(arg.get("variadic") for arg in signature):
        return None
    checks: list[tuple[frozenset[str], frozenset[str] | None]] = []
    for arg in signature:
        types = arg.get("types") or []
        if not types:
            checks.append((frozenset(), None))  # any type
            continue
        names: set[str] = set()
        subtypes: set[frozenset[str]] = set()
        for t in types:
            base, _, sub = t.partition("-")
            names.update(jmespath.functions.REVERSE_TYPES_MAP[base])
            if sub:
                subtypes.add(frozenset(jmespath.functions.REVERSE_TYPES_MAP[sub]))
        if len(subtypes) > 1:
            return None  # jmespath's mixed-subtype rules: leave them to call_function
        checks.append((frozenset(names), next(iter(subtypes)) if subtypes else None))
    frozen_checks = tuple(checks)
    if all(not names and subtype is None for names, subtype in frozen_checks):
        return spec["function"], _any_values

    def check(values: Sequence[Any]) -> bool:
        for value, (names, subtype) in zip(values, frozen_checks, strict=True):
            if names and type(value).__name__ not in names:
                return False
            # Like jmespath, the subtype applies to whatever value came (a string's characters too).
            # A string's characters are strings: the answer needs no walk over them (a 311-character
            # pattern list of baseline's gate was walked once per filtered item: 60% of a 100,000-item call).
            if subtype is not None:
                if type(value) is str:
                    if value and "str" not in subtype:
                        return False
                elif any(type(item).__name__ not in subtype for item in value):
                    return False
        return True

    return spec["function"], check


def _any_values(values: Sequence[Any]) -> bool:
    """The type check of a function whose arguments may be of any type: every value passes."""
    return True


# The compiler's fast forms (issue 22's CPU bound) can be turned off, so the differential test
# (tests/test_expression_fast_forms.py) compares them with the general code, expression by expression.
_FAST_FORMS = True
_JMESPATH_LENGTH = jmespath.functions.Functions._func_length


def _literal_value(node: dict[str, Any]) -> Any:
    """The value of a literal argument on a non-null current node, else _NOT_LITERAL.

    A literal, a multi-select of literals, or lists joined as `[lists.a, lists.b][]` (a flatten of
    such a multi-select: claude-code's credential-file globs, 522 of them, were matched one by one,
    ~1,000 RE2 matches a path and 2.5 ms a decision, because the joined list did not read as literal).
    """
    kind = node.get("type")
    if kind == "literal":
        return node["value"]
    if kind == "multi_select_list" and all(c.get("type") == "literal" for c in node["children"]):
        return [c["value"] for c in node["children"]]
    if kind == "projection" and _joined_literals(node):
        flat: list[Any] = []
        for item in _literal_value(node["children"][0]["children"][0]):
            if isinstance(item, list):
                flat.extend(item)
            else:
                flat.append(item)
        return [item for item in flat if item is not None]  # a projection drops what is null
    return _NOT_LITERAL


def _joined_literals(node: dict[str, Any]) -> bool:
    """`[literal, ...][]`: a projection of identity over the flatten of a multi-select of literals."""
    children = node.get("children") or []
    if len(children) != 2 or children[1].get("type") != "identity" or children[0].get("type") != "flatten":
        return False
    inner = children[0].get("children") or []
    return (
        len(inner) == 1
        and inner[0].get("type") == "multi_select_list"
        and all(c.get("type") == "literal" for c in inner[0]["children"])
    )


_NOT_LITERAL = object()


def _identity(v: Any) -> Any:
    """`@` and empty chains."""
    return v


def _path(keys: tuple[str, ...]) -> Fn:
    """A run of field lookups (a.b.c); a missing key or non-object anywhere gives null."""
    if len(keys) == 1:
        (k,) = keys

        def field(v: Any) -> Any:
            if isinstance(v, dict):
                return v.get(k)
            return _get(v, k)

        return field
    if len(keys) == 2:
        k0, k1 = keys

        def field2(v: Any) -> Any:
            v = v.get(k0) if isinstance(v, dict) else _get(v, k0)
            return v.get(k1) if isinstance(v, dict) else _get(v, k1)

        return field2

    def fields(v: Any) -> Any:
        for k in keys:
            if isinstance(v, dict):
                v = v.get(k)
            elif v is None:
                return None
            else:
                v = _get(v, k)
        return v

    return fields


def _compose(fns: list[Fn]) -> Fn:
    """Apply fns left to right; short chains get a closure without a loop."""
    if not fns:
        return _identity
    if len(fns) == 1:
        return fns[0]
    if len(fns) == 2:
        f, g = fns
        return lambda v: g(f(v))
    if len(fns) == 3:
        f, g, h = fns
        return lambda v: h(g(f(v)))
    chain = tuple(fns)

    def composed(v: Any) -> Any:
        for fn in chain:
            v = fn(v)
        return v

    return composed


def _equality_with_literal(other: Fn, lit: Any, negate: bool, *, literal_first: bool) -> Fn:
    """`x == literal` (or !=) with jmespath's rule folded in for the literal's type."""
    if isinstance(lit, bool):
        # Among JSON values only `lit` itself equals a boolean: 1 and 1.0 are ruled out by jmespath.
        def eq_bool(v: Any) -> bool:
            x = other(v)
            if type(x) in _JSON:
                return x is lit
            return _equals(lit, x) if literal_first else _equals(x, lit)

        test: Fn = eq_bool
    elif _is_actual_number(lit) and lit in (0, 1):

        def eq_zero_one(v: Any) -> bool:
            x = other(v)
            return not isinstance(x, bool) and bool(lit == x if literal_first else x == lit)

        test = eq_zero_one
    elif _is_actual_number(lit) or type(lit) in _JSON:
        # No 0/1-versus-boolean case can arise, so jmespath's == is Python's.
        def eq_plain(v: Any) -> bool:
            return bool(other(v) == lit)

        def eq_plain_first(v: Any) -> bool:
            # Operand order kept for __eq__ reflection; for JSON values the two agree.
            return bool(lit == other(v))

        test = eq_plain_first if literal_first else eq_plain
    else:

        def eq_any(v: Any) -> bool:
            return _equals(lit, other(v)) if literal_first else _equals(other(v), lit)

        test = eq_any
    if negate:
        return lambda v: not test(v)
    return test


def _lt(x: Any, y: Any) -> Any:
    return x < y


def _le(x: Any, y: Any) -> Any:
    return x <= y


def _gt(x: Any, y: Any) -> Any:
    return x > y


def _ge(x: Any, y: Any) -> Any:
    return x >= y


_ORDERING: dict[str, Callable[[Any, Any], Any]] = {"lt": _lt, "lte": _le, "gt": _gt, "gte": _ge}


def _ordering_with_literal(left: Fn, lit: Any, op: str, compare: Callable[[Any, Any], Any]) -> Fn:
    """`x < literal`: the literal's type is known, so only x needs checking."""
    if _is_actual_number(lit):
        return _ordering_with_number(left, lit, op, compare)
    if isinstance(lit, str):

        def with_string(v: Any) -> Any:
            x = left(v)
            if type(x) is str:
                return compare(x, lit)
            return _ordered(op, compare, x, lit)

        return with_string

    def never_ordered(v: Any) -> Any:
        # A literal that is neither a number nor a string: the left side still runs (it may
        # raise its own error first), then the comparison fails whatever it returned.
        raise OrderingError(op, left(v), lit)

    return never_ordered


def _ordering_with_number(left: Fn, lit: Any, op: str, compare: Callable[[Any, Any], Any]) -> Fn:
    """`x < `5``: a plain int or float goes straight to the operator; anything else is checked."""
    # Specialised per operator: one closure call instead of two for the common `a > `5``.
    if compare is _gt:

        def gt(v: Any) -> Any:
            x = left(v)
            t = type(x)
            if t is int or t is float:
                return x > lit
            return _ordered(op, compare, x, lit)

        return gt
    if compare is _ge:

        def ge(v: Any) -> Any:
            x = left(v)
            t = type(x)
            if t is int or t is float:
                return x >= lit
            return _ordered(op, compare, x, lit)

        return ge
    if compare is _lt:

        def lt(v: Any) -> Any:
            x = left(v)
            t = type(x)
            if t is int or t is float:
                return x < lit
            return _ordered(op, compare, x, lit)

        return lt

    def le(v: Any) -> Any:
        x = left(v)
        t = type(x)
        if t is int or t is float:
            return x <= lit
        return _ordered(op, compare, x, lit)

    return le


class StrictInterpreter(TreeInterpreter):  # type: ignore[misc]
    """jmespath's TreeInterpreter with the engine's ordering rule: the fallback when a node does not compile."""

    def visit_comparator(self, node: dict[str, Any], value: Any) -> Any:
        """Equality as jmespath; ordering raises OrderingError unless both sides are numbers or strings."""
        op = node["value"]
        compare = _ORDERING.get(op)
        if compare is None:
            return super().visit_comparator(node, value)
        left = self.visit(node["children"][0], value)
        right = self.visit(node["children"][1], value)
        return _ordered(op, compare, left, right)


def search(ast: dict[str, Any], document: Any, options: Options) -> Any:
    """Evaluate an AST with StrictInterpreter: what a compiled expression does, without compiling."""
    return StrictInterpreter(options).visit(ast, document)


def compile_ast(
    ast: dict[str, Any],
    functions: jmespath.functions.Functions,
    *,
    dict_cls: Callable[[], Any] | None = None,
) -> Callable[[Any], Any] | None:
    """Compile a jmespath AST to a closure equal to StrictInterpreter's visit, or None to fall back to it."""
    try:
        return _Compiler(functions, dict_cls).compile(ast)
    except (_Unsupported, KeyError, TypeError, ValueError, AttributeError, RecursionError):
        # A node we do not know, a malformed AST or one too deep to compile: jmespath handles it.
        return None


def compile_text(
    text: str,
    functions: jmespath.functions.Functions,
    *,
    dict_cls: Callable[[], Any] | None = None,
) -> Callable[[Any], Any] | None:
    """Parse with jmespath (its syntax errors propagate) and compile the AST; None to fall back."""
    return compile_ast(jmespath.compile(text).parsed, functions, dict_cls=dict_cls)
