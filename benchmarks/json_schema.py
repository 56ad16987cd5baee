"""JSON Schema validation speed: our compiled validator against jsonschema, fastjsonschema and the Cerberus fast path.

    python benchmarks/json_schema.py            # a table; ~15 s
    python benchmarks/json_schema.py --json     # the same; the LAST line is one JSON object

Three realistic tool schemas, each with valid and invalid arguments (frozen, as the pipeline
validates them):
- write_file: MCP filesystem's `write_file` (path + content, both required, closed object);
- search: a search tool with a length-bounded query, an integer range, an enum, and a nested
  closed `filters` object with an array of strings, a boolean and a pydantic-style optional;
- free_form: an HTTP tool with a URL pattern, a map of string headers and a free-form JSON body.

What is timed (median per call over --passes passes of up to --calls calls, ~20 ms a pass,
engines interleaved in each pass, GC off; the machine is shared, so compare figures of one run):
- ours: `compile_json_schema(schema)(arguments)`, the messages (the contract), and `.is_valid`;
- jsonschema: a pre-built `Draft202012Validator`'s `is_valid` and `list(iter_errors(...))`;
- fastjsonschema: `fastjsonschema.compile(schema)` called (an invalid call raises; caught);
- cerberus: today's fast path for such a tool: the catalog's Cerberus view of the schema
  (`parameters_view`, the lossy conversion), compiled by `validator.compile_schema` into the
  `FastValidator` that `define_tool` builds; on a refusal today's path then runs Cerberus to
  explain, which `cerberus+explain` adds.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import fastjsonschema  # noqa: E402
import jsonschema  # type: ignore[import-untyped]  # noqa: E402  (no stubs installed)

from policyengine.tools.json_schema_validator import compile_json_schema  # noqa: E402
from policyengine.tools.validator import compile_schema  # noqa: E402
from policyengine.values.frozen import freeze, thaw  # noqa: E402

WRITE_FILE = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Path of the file to write"},
        "content": {"type": "string", "description": "Text to write"},
    },
    "required": ["path", "content"],
    "additionalProperties": False,
    "$schema": "http://json-schema.org/draft-07/schema#",
}
SEARCH = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": 500},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
        "sort": {"type": "string", "enum": ["relevance", "date", "stars"]},
        "filters": {
            "type": "object",
            "properties": {
                "language": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 10},
                "archived": {"type": "boolean"},
                "owner": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            },
            "additionalProperties": False,
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}
FREE_FORM = {
    "type": "object",
    "properties": {
        "url": {"type": "string", "pattern": "^https?://"},
        "method": {"type": "string", "enum": ["GET", "POST", "PUT", "DELETE"]},
        "headers": {"type": "object", "additionalProperties": {"type": "string"}},
        "body": {"type": "object", "description": "any JSON object"},
    },
    "required": ["url"],
}
CASES: list[tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]]] = [
    (
        "write_file",
        WRITE_FILE,
        {"path": "/srv/app/notes/todo.md", "content": "- ship the validator\n- write the report\n"},
        {"path": 17, "mode": "w"},
    ),
    (
        "search",
        SEARCH,
        {
            "query": "json schema validator",
            "limit": 20,
            "sort": "stars",
            "filters": {"language": "python", "tags": ["fast", "safe"], "archived": False, "owner": None},
        },
        {"query": "", "limit": 5000, "sort": "size", "filters": {"tags": ["a", 3], "colour": "red"}},
    ),
    (
        "free_form",
        FREE_FORM,
        {
            "url": "https://api.example.com/v1/items",
            "method": "POST",
            "headers": {"content-type": "application/json", "x-trace": "abc123"},
            "body": {"name": "widget", "tags": ["a", "b"], "price": {"amount": 12.5, "currency": "EUR"}},
        },
        {"url": "ftp://example.com", "method": "PATCH", "headers": {"x-retry": 3}, "body": []},
    ),
]


from policyengine.tools.cerberus_dialect import ParameterValidator, describe_errors  # noqa: E402
from policyengine.tools.json_schema import parameters_view  # noqa: E402


def cerberus_path(name: str, schema: dict[str, Any]) -> tuple[Callable[[Any], tuple[bool, Any]], Any]:
    """(FastValidator, Cerberus validator) as define_tool builds them for this tool's Cerberus view."""
    view = parameters_view(schema, name, where="inputSchema")
    slow = ParameterValidator(view)
    compiled = compile_schema(slow.schema)
    if compiled is not None:
        return compiled, slow
    # A rule the closures cannot express (allow_unknown holding a schema, ...): today's path runs Cerberus.
    print(f"note: {name}'s Cerberus view has no compiled form; the cerberus column is Cerberus itself")

    def fallback(arguments: Any) -> tuple[bool, Any]:
        valid = slow.validate(thaw(arguments))
        return valid, slow.document if valid else None

    return fallback, slow


def engines(name: str, schema: dict[str, Any]) -> dict[str, Callable[[Any], Any]]:
    """Each engine as a one-argument call."""
    ours = compile_json_schema(schema)
    reference = jsonschema.Draft202012Validator(schema)
    compiled = fastjsonschema.compile(schema)
    fast, slow = cerberus_path(name, schema)

    def fastjson(arguments: Any) -> bool:
        try:
            compiled(arguments)
        except fastjsonschema.JsonSchemaException:
            return False
        return True

    def cerberus_explained(arguments: Any) -> bool:
        """Today's path for a Cerberus-dialect tool: the closures, then Cerberus to explain a refusal."""
        ok, _document = fast(arguments)
        if ok or slow.validate(thaw(arguments)):
            return True
        describe_errors(slow.errors)
        return False

    return {
        "ours": ours,
        "ours.is_valid": ours.is_valid,
        "cerberus": fast,
        "cerberus+explain": cerberus_explained,
        "fastjsonschema": fastjson,
        "jsonschema.is_valid": reference.is_valid,
        "jsonschema.iter_errors": lambda arguments: list(reference.iter_errors(arguments)),
    }


def verdict(engine: str, result: Any) -> bool:
    if engine == "ours":
        return bool(result == [])
    if engine == "cerberus":
        return bool(result[0])
    if engine == "jsonschema.iter_errors":
        return bool(result == [])
    return bool(result)


def probe(run: Callable[[Any], Any], arguments: Any) -> float:
    """Seconds per call, roughly, from 20 calls."""
    start = time.perf_counter()
    for _ in range(20):
        run(arguments)
    return max((time.perf_counter() - start) / 20, 1e-8)


def measure(calls: int, passes: int) -> list[dict[str, Any]]:
    rows = []
    for name, schema, valid, invalid in CASES:
        runs = engines(name, schema)
        for kind, arguments in (("valid", freeze(valid)), ("invalid", freeze(invalid))):
            verdicts = {engine: verdict(engine, run(arguments)) for engine, run in runs.items()}
            times: dict[str, list[float]] = {engine: [] for engine in runs}
            # Slow engines (Cerberus, jsonschema: 10-1000x) get fewer calls, so that a pass stays near 20 ms.
            counts = {engine: max(20, min(calls, int(0.02 / probe(run, arguments)))) for engine, run in runs.items()}
            gc.disable()
            try:
                for _ in range(passes):
                    for engine, run in runs.items():
                        count = counts[engine]
                        start = time.perf_counter()
                        for _ in range(count):
                            run(arguments)
                        times[engine].append((time.perf_counter() - start) / count * 1e6)
            finally:
                gc.enable()
            medians = {engine: round(statistics.median(series), 3) for engine, series in times.items()}
            rows.append({"case": f"{name} {kind}", "us": medians, "verdicts": verdicts})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=20_000, help="calls per pass and engine, at most (~20 ms a pass)")
    parser.add_argument("--passes", type=int, default=7, help="passes; the median is reported")
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = parser.parse_args()
    rows = measure(args.calls, args.passes)
    # Like with like: engines that give messages against ours(), verdict-only engines against ours.is_valid.
    # "today" is the Cerberus path a tool validates through now: the closures, plus Cerberus on a refusal.
    columns = [
        ("ours", "ours"),
        ("ours.is_valid", "ours.is_valid"),
        ("today", "ours"),
        ("cerberus", "ours.is_valid"),
        ("fastjsonschema", "ours.is_valid"),
        ("jsonschema.is_valid", "ours.is_valid"),
        ("jsonschema.iter_errors", "ours"),
    ]
    print(f"us per call (median of {args.passes} passes); (xN) = that engine's time / ours (messages) or ours.is_valid")
    print(f"{'case':18}" + "".join(f"{name:>24}" for name, _ in columns) + "  verdicts")
    for row in rows:
        us = dict(row["us"])
        us["today"] = us["cerberus+explain" if row["case"].endswith("invalid") else "cerberus"]
        row["us"]["today"] = us["today"]
        cells = []
        for name, against in columns:
            ratio = "" if name == against else f" (x{us[name] / us[against]:.1f})"
            cells.append(f"{us[name]:.2f}{ratio}")
        agree = len(set(row["verdicts"].values())) == 1
        print(f"{row['case']:18}" + "".join(f"{cell:>24}" for cell in cells) + ("  agree" if agree else "  DIFFER"))
    if args.json:
        print(json.dumps({"passes": args.passes, "calls": args.calls, "rows": rows}))


if __name__ == "__main__":
    main()
