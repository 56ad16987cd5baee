"""Micro-benchmarks of two fast paths against the code they replace (printed, never asserted).

    python benchmarks/micro.py

1. fastschema (compiled argument validation) against Cerberus on a small tool schema.
2. jpcompile (JMESPath compiled to closures) against jmespath's interpreter on typical conditions.

Both fast paths are pinned to the code they replace by differential tests in the suite
(tests/test_validator.py, tests/test_expression_compiler.py); this script only times them.
"""

from __future__ import annotations

import functools
import timeit
from collections.abc import Callable
from typing import Any

import jmespath

from policyengine.language.expression_compiler import compile_text
from policyengine.language.functions import FUNCTIONS, OPTIONS
from policyengine.tools.cerberus_dialect import ParameterValidator
from policyengine.tools.validator import compile_schema
from policyengine.values.frozen import freeze

CONDITIONS = [
    "arguments.amount > `2000`",
    "agent == 'release-bot'",
    "arguments.missing.deep == `true` || arguments.items[?price > `10`].name == ['b']",
    "lower(arguments.environment) == 'production'",
    "agent == 'reviewer' && glob_match(name, ['shell_*', 'exec_*', 'run_?'])",
]
DOCUMENT = freeze(
    {
        "name": "shell_exec",
        "agent": "reviewer",
        "arguments": {
            "amount": 2500,
            "environment": "Production",
            "path": "src/app/main.py",
            "paths": ["src/a.py", "./.env", "docs/x.md"],
            "items": [{"name": "a", "price": 5}, {"name": "b", "price": 50}],
        },
    }
)


def per_call_us(fn: Callable[[], Any], number: int, repeat: int = 5) -> float:
    """Best-of-`repeat` microseconds per call."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def fastschema() -> None:
    """Compiled validation against Cerberus on one small tool schema."""
    schema = {
        "path": {"type": "string", "required": True, "description": "file to read"},
        "limit": {"type": "integer", "min": 1, "default": 100},
        "tags": {"type": "list", "schema": {"type": "string"}, "nullable": True},
    }
    document = {"path": "/tmp/report.txt", "tags": ["a", "b"]}
    fast = compile_schema(schema)
    assert fast is not None
    cerberus = ParameterValidator(schema)
    fast_us = per_call_us(lambda: fast(document), 20_000)
    cerberus_us = per_call_us(lambda: cerberus.validate(document), 500)
    print(f"fastschema: {fast_us:.2f} us per validation; Cerberus: {cerberus_us:.1f} us (x{cerberus_us / fast_us:.0f})")


def jpcompile() -> None:
    """Compiled conditions against jmespath's interpreter."""
    print("jpcompile, per evaluation:")
    for text in CONDITIONS:
        parsed = jmespath.compile(text)
        fn = compile_text(text, FUNCTIONS)
        assert fn is not None
        n = 2000
        interp = per_call_us(functools.partial(parsed.search, DOCUMENT, options=OPTIONS), n, 3)
        compiled = per_call_us(functools.partial(fn, DOCUMENT), n, 3)
        print(f"  {text[:66]:66} interpreter {interp:6.2f} us  compiled {compiled:6.2f} us  x{interp / compiled:5.1f}")


if __name__ == "__main__":
    fastschema()
    jpcompile()
