#!/usr/bin/env python3
"""Loader fuzzing (issue 7): mutated rule files and manifests against the pack loader.

Every mutant is a whole pack folder, derived from a seed pack (the shipped packs under
policies/ and a corpus of small valid packs below) by byte-level, token-level and structural
mutations. The oracle, per mutant:

1. `load_pack` returns a Pack or raises PackLoadError; anything else escaping is a finding.
2. Every Problem with a location (errors and warnings) names a file of the pack, inside its
   folder, with 1 <= line <= lines + 1 and 1 <= column <= len(line) + 1, lines counted as YAML
   counts them (breaks: CRLF, CR, LF, NEL, LS, PS; a UTF-8 BOM is not text). When the problem
   shows a source line, it is that line of the file.
3. The mutant is installed (PolicyLayers.install) on a registry that already runs a known-good
   pack. A refusal must leave that registry exactly as it was: the same decisions for a fixed
   set of probe calls (policyengine.enforce.evaluate). A mutant that loads must install, evaluate every
   probe without raising, and removing it must give the good pack's decisions back. Loading
   twice gives the same problems. Some of the time, `reload` onto the mutant is checked too: a
   refusal keeps the good pack running.

Every iteration is reproducible from (seed, iteration): `--replay N` writes that mutant and
prints the oracle's verdict. Findings are saved under --findings, one folder per signature
(the mutant's files, the traceback, what was checked), and minimized when --minimize is on.

    python scripts/fuzz_loader.py --iterations 100000 --workers 2 --seed 1 --findings /tmp/fuzz-findings
    python scripts/fuzz_loader.py --seed 1 --replay 1136          # one mutant, written out, with its verdict
    python scripts/fuzz_loader.py --atheris --ignore 'location:PE109:.*' -runs=100000   # needs atheris
    python scripts/fuzz_loader.py --grammar --iterations 20000 --seed 1   # JMESPath from its grammar (below)

A load slower than 2 s + 10 s per MB of files is a finding too (the limits should bound the work).

The test suite imports this file by path (tests/test_fuzz_loader.py) and runs a short, fixed
seed version of the same oracle.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import multiprocessing
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import FrameType
from typing import Any

import yaml
from jmespath.exceptions import JMESPathError
from jmespath.visitor import TreeInterpreter, _Expression

from policyengine import (
    Evaluation,
    Pack,
    PackLoadError,
    PolicyEngineError,
    PolicyLayers,
    Problem,
    Registry,
    evaluate,
    freeze,
    load_pack,
    pack_bundle,
)
from policyengine.language.expression_compiler import OrderingError
from policyengine.language.expression_compiler import search as strict_search
from policyengine.language.functions import OPTIONS, function_arity
from policyengine.packs.rule_schemas import schema

REPO_ROOT = Path(__file__).resolve().parent.parent
SHIPPED_PACKS = (REPO_ROOT / "policies" / "baseline", REPO_ROOT / "policies" / "bfcl")
MANIFEST = "pack.yaml"

Files = dict[str, bytes]

# -- the corpus --------------------------------------------------------------------------------

# Small valid packs, each exercising YAML and rule features the shipped packs do not: flow style,
# block scalars, anchors and aliases, escapes, CRLF, a BOM, every stage and every redact form.
SMALL_PACKS: dict[str, dict[str, str]] = {
    "minimal": {
        "pack.yaml": "name: minimal\nversion: 0.1.0\nfiles: [rules.yaml]\n",
        "rules.yaml": "rules:\n  - id: deny-fs-write\n    stage: pre-execute\n    tools: [fs_write]\n"
        "    decision: deny\n",
    },
    "flow": {
        "pack.yaml": "{name: flow, version: 2.0.0-rc.1, default: ask, default_reason: 'Ask: {nothing}',"
        " files: [a.yml, b.yaml], tests: []}\n",
        "a.yml": "{lists: {tools: [a, b, 'c*'], nums: [1, 2.5, true, -3]}, rules: [{id: flow-allow, stage:"
        " pre-execute, tools: ['@tools'], when: 'contains(lists.nums, `1`)', decision: allow, final: true}]}\n",
        "b.yaml": "rules: [{id: flow-guard, stage: guard, tools: ['*'], reason: \"no {name}\"},"
        " {id: flow-exec, stage: execute, tools: [x], retries: 0}]\n",
    },
    "blocks": {
        "pack.yaml": "# a pack with block scalars\nname: blocks\nversion: 1.2.3\ndescription: |\n  Several lines\n"
        "  of text.\nfiles:\n  - rules.yaml\n",
        "rules.yaml": (
            "lists:\n"
            "  dirs: &dirs\n"
            "    - /etc\n"
            "    - /usr\n"
            "rules:\n"
            "  - id: folded-when\n"
            "    stage: guard\n"
            "    tools: &all ['*']\n"
            "    when: >-\n"
            "      [arguments.path, arguments.paths][]\n"
            "      | [?path_within(@, lists.dirs)]\n"
            "      | length(@) > `0`\n"
            "    reason: |\n"
            "      Red line: {name} may not touch\n"
            "        {arguments.path}.\n"
            "  - id: literal-ask   # a comment\n"
            "    stage: pre-execute\n"
            "    tools: *all\n"
            "    when: |-\n"
            "      agent != 'release-bot'\n"
            "    decision: ask\n"
            "    reason: >\n"
            "      Run {name}\n"
            "      for {agent}?\n"
        ),
    },
    "quoted": {
        "pack.yaml": "name: quoted\nversion: \"3.0.0\"\ndescription: 'It''s quoted: «ünïcode» 中文 🙂'\n"
        "files: ['rules.yaml']\n",
        "rules.yaml": (
            "rules:\n"
            '  - id: "double-quoted"\n'
            '    description: "tab\\there, e\\u00e9, line\\nbreak"\n'
            "    stage: pre-execute\n"
            '    tools: ["send_*", "?ail", "[ab]c"]\n'
            "    when: \"regex_match(arguments.body || '', '(?i)passw(or)?d\\\\s*[:=]')\"\n"
            "    decision: deny\n"
            "    reason: 'No {{literal}} braces, only {name} and {arguments.to || ''nobody''}'\n"
            "  - id: 'single-quoted'\n"
            "    stage: pre-execute\n"
            "    tools: ['read']\n"
            "    when: 'glob_match(arguments.path, ''*.pem'') && !starts_with(arguments.path, ''/tmp'')'\n"
            "    decision: deny\n"
            "    reason: multi-line plain\n"
            "      reason for {name}\n"
        ),
    },
    "crlf": {
        "pack.yaml": "name: crlf\r\nversion: 1.0.0\r\nfiles: [rules.yaml]\r\n",
        "rules.yaml": "rules:\r\n  - id: crlf-rule\r\n    stage: guard\r\n    tools: [shell]\r\n"
        '    when: "contains(arguments.command, \'rm \')"\r\n    reason: "no {arguments.command}"\r\n',
    },
    "bom": {
        "pack.yaml": "\ufeff---\nname: bom\nversion: 1.0.0\nfiles: [rules.yaml]\n...\n",
        "rules.yaml": "\ufeffrules:\n- id: bom-rule\n  stage: execute\n  tools: [slow, fetch]\n  timeout: 0.5\n"
        "  retries: 3\n  backoff: 0.1\n",
    },
    "post": {
        "pack.yaml": "name: post\nversion: 1.0.0\nfiles: [lists.yaml, post.yaml]\n",
        "lists.yaml": "lists:\n  secret_keys: ['*password*', api_key]\n  keep: [4]\n",
        "post.yaml": (
            "rules:\n"
            "  - id: redact-paths\n"
            "    stage: post-execute\n"
            "    tools: ['*']\n"
            "    redact:\n"
            "      - path: credit_card_list[*].card_number\n"
            "        keep_last: 4\n"
            "      - path: items[0].token\n"
            "        replace_with: null\n"
            "      - keys: ['@secret_keys', 'cvv']\n"
            "        replace_with: 0\n"
            "      - pattern: '\\b\\d{13,19}\\b'\n"
            "  - id: summarise\n"
            "    stage: post-execute\n"
            "    tools: [ls]\n"
            "    when: 'length(result.value.files || `[]`) > `2`'\n"
            "    content: '{length(result.value.files)} files, first {result.value.files[0]}'\n"
            "  - id: block-big\n"
            "    stage: post-execute\n"
            "    tools: ['*']\n"
            "    when: 'length(to_string(result.value)) > `20000`'\n"
            "    block: 'Too large: {{narrow}} {name}'\n"
        ),
    },
    "functions": {
        "pack.yaml": "name: functions\nversion: 1.0.0\ndefault: deny\nfiles: [f.yaml]\n",
        "f.yaml": (
            "lists:\n"
            "  patterns: ['AKIA[0-9A-Z]{16}', 'sk-[a-z]+']\n"
            "  envs: [.env, '.env.*']\n"
            "  limits: [100, 2.5]\n"
            "rules:\n"
            "  - id: fn-regex\n"
            "    stage: guard\n"
            "    tools: ['*']\n"
            "    when: strings(arguments)[?regex_match(@, lists.patterns)] | length(@) > `0`\n"
            '    reason: \'secret in {name}: {regex_replace(to_string(arguments), `"[0-9]"`, `"#"`)}\'\n'
            "  - id: fn-paths\n"
            "    stage: pre-execute\n"
            "    tools: ['*']\n"
            "    when: >-\n"
            "      path_matches(normalize_path(arguments.path || ''), lists.envs)\n"
            "      || path_escapes(arguments.path || '')\n"
            "    decision: deny\n"
            "  - id: fn-numbers\n"
            "    stage: pre-execute\n"
            "    tools: [place_order]\n"
            "    when: product([arguments.price, arguments.amount]) > max(lists.limits)\n"
            "    decision: ask\n"
            "    reason: '{upper(arguments.symbol || `\"?\"`)} x {arguments.amount}'\n"
            "  - id: fn-allow\n"
            "    stage: pre-execute\n"
            "    tools: ['*']\n"
            "    when: is_string(agent) && contains_any(lower(agent), ['bot', 'ci'])\n"
            "    decision: allow\n"
        ),
    },
    "anchors": {
        "pack.yaml": "name: anchors\nversion: 1.0.0\nfiles: &f [rules.yaml]\ntests: *f\n",
        "rules.yaml": (
            "lists:\n"
            "  t: &tools [a, b]\n"
            "rules:\n"
            "  - &base\n"
            "    id: anchored\n"
            "    stage: pre-execute\n"
            "    tools: *tools\n"
            "    decision: &d deny\n"
            '    reason: &r "anchored {name}"\n'
            "  - id: aliased\n"
            "    stage: guard\n"
            "    tools: ['@t']\n"
            "    decision: *d\n"
            "    reason: *r\n"
        ),
    },
}

# The pack every mutant is installed next to; its rule ids are not used by any seed.
GOOD_PACK: dict[str, str] = {
    "pack.yaml": "name: known-good\nversion: 1.0.0\ndescription: installed before every mutant\nfiles: [good.yaml]\n",
    "good.yaml": (
        "lists:\n"
        "  good_secrets: ['*password*', '*token*']\n"
        "rules:\n"
        "  - id: known-good-deny-probe\n"
        "    stage: pre-execute\n"
        "    tools: [probe]\n"
        "    decision: deny\n"
        "    reason: the known-good pack denies {name}\n"
        "  - id: known-good-ask-shell\n"
        "    stage: pre-execute\n"
        "    tools: [shell]\n"
        "    when: \"arguments.command != 'true'\"\n"
        "    decision: ask\n"
        "    reason: Run {arguments.command}?\n"
        "  - id: known-good-guard-etc\n"
        "    stage: guard\n"
        "    tools: ['*']\n"
        "    when: \"path_within(arguments.path || '', ['/etc'])\"\n"
        "    reason: red line {arguments.path}\n"
        "  - id: known-good-redact\n"
        "    stage: post-execute\n"
        "    tools: ['*']\n"
        "    redact:\n"
        "      - keys: ['@good_secrets']\n"
        "  - id: known-good-timeout\n"
        "    stage: execute\n"
        "    tools: [slow]\n"
        "    timeout: 5\n"
    ),
}


@dataclass(frozen=True)
class Probe:
    """One call decided before and after every install attempt."""

    name: str
    arguments: Mapping[str, Any]
    agent: str = "agent"
    result: Mapping[str, Any] | None = None


PROBES: tuple[Probe, ...] = (
    Probe("probe", {"path": "a.txt", "count": 1}),
    Probe("shell", {"command": "rm -rf /"}),
    Probe("shell", {"command": "true"}),
    Probe("read", {"path": "/etc/shadow"}),
    Probe("read", {"path": "notes.txt"}, result={"value": {"password": "hunter2", "ok": 1}}),
    Probe("read", {"path": "a/../.env"}, agent="release-bot"),
    Probe("fs_write", {"path": "x.txt", "content": "y"}),
    Probe("send_message", {"message": "token: abcdefgh12345", "to": "bob"}),
    Probe("get_all_credit_cards", {}, result={"value": {"credit_card_list": [{"card_number": "4111111111111111"}]}}),
    Probe("place_order", {"price": 1000, "amount": 200, "symbol": "ACME"}),
    Probe("ls", {}, result={"value": {"files": ["a", "b", "c"]}}),
    Probe("slow", {"seconds": 1}),
)


@dataclass(frozen=True)
class Seed:
    """A valid pack the mutators start from."""

    name: str
    files: Mapping[str, bytes]


def _pack_files(folder: Path) -> Files:
    manifest = (folder / MANIFEST).read_bytes()
    data = yaml.safe_load(manifest)
    # The rule files, and the catalog a manifest names (a pack without it is refused).
    names = [*data["files"], *([data["catalog"]] if data.get("catalog") else [])]
    return {MANIFEST: manifest, **{str(n): (folder / str(n)).read_bytes() for n in names}}


@cache
def corpus() -> tuple[Seed, ...]:
    """The shipped packs (manifest and rule files) and the small packs above."""
    seeds = [Seed(f"shipped:{p.name}", _pack_files(p)) for p in SHIPPED_PACKS if (p / MANIFEST).is_file()]
    seeds += [Seed(f"small:{n}", {k: v.encode("utf-8") for k, v in fs.items()}) for n, fs in SMALL_PACKS.items()]
    return tuple(seeds)


@cache
def schema_fields() -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """Field names from the shipped schemas: (rule fields, redact fields, rule-file fields, manifest fields)."""
    rules = schema("rules")
    rule_fields = sorted({str(k) for stage in rules.values() for k in stage})
    redact = rules["post-execute"]["redact"]["schema"]["schema"]
    return (
        tuple(rule_fields),
        tuple(sorted(str(k) for k in redact)),
        tuple(sorted(str(k) for k in schema("rule-file"))),
        tuple(sorted(str(k) for k in schema("pack"))),
    )


STAGES = ("pre-execute", "guard", "execute", "post-execute")
DECISIONS = ("allow", "deny", "ask")
FUNCTIONS = tuple(sorted(function_arity()))

# -- random values -----------------------------------------------------------------------------

_WORDS = ("a", "name", "arguments", "path", "result", "value", "x", "fs_write", "shell", "deny", "allow", "ask")
_ODD_STRINGS = (
    "",
    " ",
    "yes",
    "no",
    "null",
    "~",
    "0x1F",
    "1e3",
    ".nan",
    "2024-01-01",
    "1:30",
    "@",
    "@nope",
    "*",
    "[",
    "{name}",
    "{",
    "}",
    "a: b",
    "- x",
    "#",
    "&a",
    "*a",
    "!!str",
    "\t",
    "\n",
    "é",
    "中文",
    "🙂",
    "\u202e",
    "\u0301",
    "\x85",
    "\u2028",
    "\ufeff",
    "\x00",
    "\x1b[31m",
)


def random_scalar(rng: random.Random) -> Any:
    """A scalar of a random type: null, bool, int (small to huge), float (incl. nan/inf) or string."""
    kind = rng.randrange(9)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.choice((0, 1, -1, 7, 2**31, -(2**63), 10 ** rng.randrange(1, 40)))
    if kind == 3:
        return Huge("9" * rng.choice((20, 300, 4299, 4301, 6000)))
    if kind == 4:
        return rng.choice((0.0, -0.0, 0.5, 1e-9, 1e308, math.inf, -math.inf, math.nan, 3.14159))
    if kind == 5:
        return rng.choice(_ODD_STRINGS)
    if kind == 6:
        return random_text(rng, rng.randrange(0, 40))
    if kind == 7:
        return rng.choice(STAGES + DECISIONS + _WORDS)
    return "x" * rng.choice((1, 128, 129, 5000))


def random_value(rng: random.Random, depth: int = 0) -> Any:
    """A value of a random type, collections included (bounded depth)."""
    roll = rng.random()
    if depth < 3 and roll < 0.15:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(0, 4))]
    if depth < 3 and roll < 0.25:
        return {str(random_scalar(rng)): random_value(rng, depth + 1) for _ in range(rng.randrange(0, 3))}
    return random_scalar(rng)


_CODEPOINT_RANGES = (
    (0x20, 0x7E),
    (0x00, 0x1F),
    (0x7F, 0x9F),
    (0xA0, 0x2FF),
    (0x300, 0x36F),
    (0x590, 0x6FF),
    (0x2000, 0x206F),
    (0x3000, 0x30FF),
    (0x4E00, 0x4FFF),
    (0xD800, 0xDFFF),
    (0xE000, 0xF8FF),
    (0xFDD0, 0xFDEF),
    (0xFE00, 0xFFFF),
    (0x1F300, 0x1F6FF),
    (0x10000, 0x10FFFF),
)


def random_char(rng: random.Random) -> str:
    low, high = rng.choice(_CODEPOINT_RANGES)
    return chr(rng.randint(low, high))


def random_text(rng: random.Random, n: int) -> str:
    """Random text, mostly printable ASCII, sometimes anything (surrogates and controls included)."""
    if rng.random() < 0.6:
        return "".join(chr(rng.randint(0x20, 0x7E)) for _ in range(n))
    return "".join(random_char(rng) for _ in range(n))


# -- JMESPath, templates, regexes ---------------------------------------------------------------

_FIELDS = ("name", "agent", "call_id", "arguments", "arguments.path", "arguments.command", "result.value", "@")
_OPERATORS = ("==", "!=", "<", "<=", ">", ">=", "&&", "||", "|", ".", ",", ":", "!", "&", "*", "@", "?")
_EXPR_TOKENS = (
    *_OPERATORS,
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "[*]",
    "[]",
    "[?",
    "[0]",
    "[-1]",
    "[1:2]",
    "[::-1]",
    "[::0]",
    "`",
    "'",
    '"',
    "\\",
    "`1`",
    "`null`",
    '`"x"`',
    "`[1, 2]`",
    "`{}`",
    "'raw'",
    "lists",
    "lists.",
    "lists.nope",
    "lists[0]",
    "lists.*",
    "lists.a.b",
    "@.lists",
    " ",
    "\n",
    "length(",
    "regex_match(@, '",
    "nope(",
    "to_number(",
    "$",
    "#",
)
_REGEX_ATOMS = (
    "a",
    ".",
    ".*",
    "\\d",
    "\\w+",
    "\\b",
    "[a-z]",
    "[^/]",
    "[",
    "]",
    "(",
    ")",
    "(?:",
    "(?i)",
    "(?P<n>x)",
    "(?<n>x)",
    "(?=x)",
    "(?!x)",
    "\\1",
    "*",
    "+",
    "?",
    "{2,}",
    "{1001}",
    "{99999}",
    "{3,1}",
    "|",
    "^",
    "$",
    "\\",
    "\\p{Greek}",
    "\\pN",
    "\\C",
    "\\Q.*\\E",
    "[[:alpha:]]",
    "[[:nope:]]",
    "\\x{110000}",
    "\\x{41}",
    "\\z",
    "(a*)*",
    "é",
    "\x00",
)
_GLOB_ATOMS = ("*", "?", "[", "]", "[!a]", "[a-", "**", "/", "\\", ".env", "a", "{a,b}", "[]]", "[z-a]")


def random_regex(rng: random.Random) -> str:
    """A random RE2-ish pattern: often valid, often not."""
    atoms = _REGEX_ATOMS if rng.random() < 0.8 else _GLOB_ATOMS
    return "".join(rng.choice(atoms) for _ in range(rng.randrange(0, 7)))


def _raw(text: str) -> str:
    """A JMESPath raw string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def random_expression(rng: random.Random, lists: Sequence[str] = (), depth: int = 0) -> str:
    """A random JMESPath expression over the call document: valid more often than not."""
    names = tuple(lists) or ("nope",)
    if depth > 3 or rng.random() < 0.3:
        leaf = rng.randrange(8)
        if leaf == 0:
            return rng.choice(_FIELDS)
        if leaf == 1:
            return f"lists.{rng.choice((*names, 'nope', 'x'))}"
        if leaf == 2:
            return "`" + json.dumps(random_scalar(rng), ensure_ascii=rng.random() < 0.5, default=str) + "`"
        if leaf == 3:
            return _raw(random_text(rng, rng.randrange(0, 6)))
        if leaf == 4:
            return rng.choice(("@", "lists", "`0`", '`""`', "`[]`"))
        if leaf == 5:
            return '"' + rng.choice(("a b", "é", "x")) + '"'
        return rng.choice(_FIELDS) + rng.choice((".a", "[0]", "[*]", "[]", "[?@]", ".*"))

    def sub() -> str:
        return random_expression(rng, lists, depth + 1)

    form = rng.randrange(10)
    if form == 0:
        return f"{sub()} {rng.choice(_OPERATORS[:8])} {sub()}"
    if form == 1:
        return f"!{sub()}"
    if form == 2:
        return f"({sub()})"
    if form == 3:
        return f"{sub()}[?{sub()}]"
    if form == 4:
        return f"[{sub()}, {sub()}]"
    if form == 5:
        return "{a: " + sub() + ", b: " + sub() + "}"
    if form == 6:
        pattern = _raw(random_regex(rng)) if rng.random() < 0.7 else f"lists.{rng.choice(names)}"
        fn = rng.choice(("regex_match", "glob_match", "path_matches", "regex_replace"))
        extra = f", {_raw(random_text(rng, 3))}" if fn == "regex_replace" else ""
        return f"{fn}({sub()}, {pattern}{extra})"
    if form == 7:
        fn = rng.choice((*FUNCTIONS, "nope", "lenght", "eval"))
        low, high = function_arity().get(fn, (1, 1))
        count = max(0, rng.choice((low, high or low + 2, low - 1, low + 1)))
        return f"{fn}({', '.join(sub() for _ in range(count))})"
    if form == 8:
        return f"{sub()} | {sub()}"
    return f"&{sub()}" if rng.random() < 0.3 else f"{sub()}.{rng.choice(('a', '*', 'b.c'))}"


def deep_expression(rng: random.Random) -> str:
    """Deeply nested JMESPath (parentheses, brackets, negations, calls, paths, pipes)."""
    n = rng.choice((10, 50, 100, 300, 1000, 3000))
    shape = rng.randrange(7)
    if shape == 0:
        return "(" * n + "a" + ")" * n
    if shape == 1:
        return "[" * n + "a" + "]" * n
    if shape == 2:
        return "!" * n + "a"
    if shape == 3:
        return "length(" * n + "@" + ")" * n
    if shape == 4:
        return ".".join(["a"] * n)
    if shape == 5:
        return " || ".join(["a"] * n)
    return "a[?" * n + "b" + "]" * n


def mutate_expression(rng: random.Random, text: str, lists: Sequence[str] = ()) -> str:
    """Mutate a JMESPath string: tokens, spans, functions, lists references, whole replacements."""
    op = rng.randrange(9)
    pos = rng.randint(0, len(text))
    if op == 0:
        return text[:pos] + rng.choice(_EXPR_TOKENS) + text[pos:]
    if op == 1 and text:
        end = min(len(text), pos + rng.randint(1, 8))
        return text[:pos] + text[end:]
    if op == 2:
        return random_expression(rng, lists)
    if op == 3:
        return deep_expression(rng)
    if op == 4:
        return f"{text} {rng.choice(_OPERATORS[:8])} {random_expression(rng, lists)}"
    if op == 5:
        found = re.findall(r"[a-z_]+(?=\()", text)
        if found:
            return text.replace(rng.choice(found), rng.choice((*FUNCTIONS, "nope", "__import__")), 1)
        return text + f" && {rng.choice(FUNCTIONS)}(@)"
    if op == 6:
        name = rng.choice((*lists, "nope", "", "a.b", "0"))
        return text[:pos] + f"lists.{name}" + text[pos:]
    if op == 7:
        found = re.findall(r"'(?:[^'\\]|\\.)*'", text)
        new = _raw(random_regex(rng))
        return text.replace(rng.choice(found), new, 1) if found else f"regex_match(@, {new})"
    return text[:pos] + random_text(rng, rng.randrange(1, 4)) + text[pos:]


def mutate_template(rng: random.Random, text: str, lists: Sequence[str] = ()) -> str:
    """Mutate a reason/content/block template: braces, placeholders, expressions inside them."""
    placeholders = [(m.start(), m.end()) for m in re.finditer(r"\{[^{}]*\}", text)]
    op = rng.randrange(5)
    pos = rng.randint(0, len(text))
    if op == 0:
        return text[:pos] + rng.choice(("{", "}", "{{", "}}", "{}", "{ }", "{{x}", "{x}}")) + text[pos:]
    if op == 1:
        return text[:pos] + "{" + random_expression(rng, lists) + "}" + text[pos:]
    if op == 2 and placeholders:
        start, end = rng.choice(placeholders)
        return text[: start + 1] + mutate_expression(rng, text[start + 1 : end - 1], lists) + text[end - 1 :]
    if op == 3:
        return text[:pos] + "{" + deep_expression(rng) + "}" + text[pos:]
    return "".join(
        "{" + random_expression(rng, lists) + "}" if rng.random() < 0.4 else random_text(rng, 4)
        for _ in range(rng.randrange(1, 5))
    )


# -- the mutant --------------------------------------------------------------------------------


@dataclass
class Mutant:
    """A pack folder to write: files (relative to the pack), folders, symlinks, files next to it."""

    origin: str
    files: Files
    dirs: list[str] = field(default_factory=list)
    links: dict[str, str] = field(default_factory=dict)
    outside: Files = field(default_factory=dict)
    ops: list[str] = field(default_factory=list)

    def copy(self) -> Mutant:
        return Mutant(self.origin, dict(self.files), list(self.dirs), dict(self.links), dict(self.outside), [])

    def rule_files(self) -> list[str]:
        return [n for n in self.files if n != MANIFEST]


class Huge(str):
    """An integer too long for int() (4300 digits): written as a plain YAML integer."""


class _Dup:
    """A mapping written with a repeated key (PyYAML dumps any list of pairs as a mapping)."""

    def __init__(self, pairs: list[tuple[Any, Any]]) -> None:
        self.pairs = pairs


def _dumper(rng: random.Random) -> type[yaml.SafeDumper]:
    """A SafeDumper choosing each string's style at random and writing _Dup mappings."""

    class Dumper(yaml.SafeDumper):
        def represent_str(self, data: str) -> yaml.ScalarNode:
            style = rng.choice((None, None, None, "'", '"', "|", ">"))
            return self.represent_scalar("tag:yaml.org,2002:str", data, style=style)

        def represent_dup(self, data: _Dup) -> yaml.MappingNode:
            return self.represent_mapping("tag:yaml.org,2002:map", data.pairs)

        def represent_huge(self, data: Huge) -> yaml.ScalarNode:
            return self.represent_scalar("tag:yaml.org,2002:int", str.__str__(data))

    Dumper.add_representer(str, Dumper.represent_str)
    Dumper.add_representer(_Dup, Dumper.represent_dup)
    Dumper.add_representer(Huge, Dumper.represent_huge)
    return Dumper


def dump_yaml(rng: random.Random, data: Any) -> bytes:
    """Data as YAML text in a random but valid style (block or flow, wrapping width, quoting)."""
    text = yaml.dump(
        data,
        Dumper=_dumper(rng),
        sort_keys=False,
        default_flow_style=rng.choice((False, False, None, True)),
        allow_unicode=rng.random() < 0.7,
        width=rng.choice((80, 80, 16, 40, 10**6)),
        indent=rng.choice((2, 2, 4, 3)),
        explicit_start=rng.random() < 0.1,
    )
    return text.encode("utf-8", "surrogatepass")


def _parse(data: bytes) -> Any:
    try:
        return yaml.load(data, Loader=yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader)
    except Exception:  # PyYAML's constructors raise more than YAMLError on odd tags
        return None


def _containers(data: Any) -> list[tuple[Any, Any]]:
    """Every (container, key-or-index) pair in data, depth first."""
    out: list[tuple[Any, Any]] = []
    stack = [data]
    seen: set[int] = set()  # aliases share containers: visit each once (an alias bomb stays small)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, dict):
            for key, value in node.items():
                out.append((node, key))
                stack.append(value)
        elif isinstance(node, list):
            for index, value in enumerate(node):
                out.append((node, index))
                stack.append(value)
    return out


def _rules_of(data: Any) -> list[dict[str, Any]]:
    rules = data.get("rules") if isinstance(data, dict) else None
    return [r for r in rules if isinstance(r, dict)] if isinstance(rules, list) else []


def _list_names(mutant: Mutant) -> list[str]:
    names: list[str] = []
    for name in mutant.rule_files():
        data = _parse(mutant.files[name]) if len(mutant.files[name]) < 200_000 else None
        if isinstance(data, dict) and isinstance(data.get("lists"), dict):
            names.extend(str(k) for k in data["lists"])
    return names


# -- byte-level mutations -----------------------------------------------------------------------

_TOKENS: tuple[bytes, ...] = tuple(
    t.encode("utf-8", "surrogatepass")
    for t in (
        ":",
        ": ",
        "- ",
        "-",
        "[",
        "]",
        "{",
        "}",
        ",",
        "?",
        "? ",
        "|",
        ">",
        "|-",
        ">+",
        "|2",
        "#",
        " #",
        "'",
        '"',
        "''",
        "\\",
        '"\\',
        "\t",
        "\r",
        "\n",
        "\r\n",
        " ",
        "    ",
        "---\n",
        "...\n",
        "%YAML 1.1\n---\n",
        "%YAML 2.0\n---\n",
        "%TAG ! tag:yaml.org,2002:python/\n---\n",
        "&a ",
        "*a",
        "*a ",
        "&a &b ",
        "<<: ",
        "!",
        "!!",
        "@",
        "`",
        "%",
        "\ufeff",
        "\x85",
        "\u2028",
        "\u2029",
        "\x00",
        "\x1b",
        "\x7f",
        "\ud800",
        "\udfff",
        "\ufffe",
        '"\\ud800"',
        '"\\udc00\\ud800"',
        '"\\x00"',
        '"\\U0010ffff"',
        '"\\U00110000"',
        '"\\N\\_\\L\\P"',
        '"\\q"',
        "null",
        "~",
        "true",
        "True",
        "yes",
        "0x",
        "0o",
        "1e999",
        ".inf",
        "-.inf",
        ".nan",
        "2001-12-14t21:59:43.10-05:00",
        "12:30:00",
        "{name}",
        "{{",
        "}}",
        "lists.",
        "@nope",
    )
)
_TAGS = (
    "!!python/object/apply:os.system ",
    "!!python/name:os.system ",
    "!!python/object:__main__.X ",
    "!!binary ",
    "!!timestamp ",
    "!!set ",
    "!!omap ",
    "!!pairs ",
    "!!merge ",
    "!!str ",
    "!!int ",
    "!!float ",
    "!!bool ",
    "!!null ",
    "!!seq ",
    "!!map ",
    "!custom ",
    "! ",
    "!<tag:yaml.org,2002:str> ",
    "!<tag:yaml.org,2002:python/none> ",
    "!<!> ",
    "!e!x ",
    "!!value ",
    "!!yaml ",
)
_INTERESTING_BYTES = b"\x00\xff\x80\xc0\xc3\xe2\xf0\xf4\xf5\n\r\t \"':-[]{}&*!#|>%@`\\,?"


def _span(rng: random.Random, data: bytes) -> tuple[int, int]:
    if not data:
        return 0, 0
    start = rng.randrange(len(data))
    length = min(len(data) - start, rng.choice((1, 2, 4, 8, 16, 64, 256)))
    return start, start + length


def _line_start(rng: random.Random, data: bytes) -> int:
    starts = [0] + [m.end() for m in re.finditer(rb"\n", data)]
    return rng.choice(starts)


def _value_position(rng: random.Random, data: bytes) -> int:
    """A position just after a `key: ` or `- `, where a value starts (else anywhere)."""
    spots = [m.end() for m in re.finditer(rb"(?:: |- |\[|, )", data)]
    return rng.choice(spots) if spots else rng.randint(0, len(data))


def _huge_number(rng: random.Random) -> bytes:
    n = rng.choice((20, 309, 4300, 4301, 5000, 20000))
    return rng.choice(
        (
            "9" * n,
            "-" + "9" * n,
            "0x" + "f" * n,
            "0o" + "7" * n,
            "1" + "0" * n + ".5",
            "1e" + "9" * min(n, 50),
            "0." + "0" * n + "1",
            "1" * n + "e5",
            "[" + "9" * n + "]",
            "a[" + "9" * n + "]",
            "`" + "9" * n + "`",
        )
    ).encode()


def _deep(rng: random.Random) -> bytes:
    n = rng.choice((10, 63, 64, 65, 100, 399, 400, 401, 1000, 5000))
    shape = rng.randrange(6)
    if shape == 0:
        return b"[" * n + b"]" * n
    if shape == 1:
        return b"{a: " * n + b"x" + b"}" * n
    if shape == 2:
        return b"".join(b"\n" + b" " * (i + 1) + b"- " for i in range(min(n, 400))) + b"x"
    if shape == 3:
        return b"".join(b"\n" + b" " * (2 * i + 2) + b"k:" for i in range(min(n, 400))) + b" x"
    if shape == 4:
        return b"[" * n
    return ("(" * n + "a" + ")" * n).encode()


def _anchors(rng: random.Random, data: bytes) -> bytes:
    shape = rng.randrange(8)
    pos = _value_position(rng, data)
    if shape == 0:  # anchor a value, alias it later
        anchored = data[:pos] + b"&x " + data[pos:]
        later = rng.randint(pos + 3, len(anchored))
        spot = _value_position(rng, anchored[later:]) + later if later < len(anchored) else len(anchored)
        return anchored[:spot] + b"*x " + anchored[spot:]
    if shape == 1:  # undefined alias
        return data[:pos] + b"*nowhere" + data[pos:]
    if shape == 2:  # alias bomb
        bomb = b"\nbomb:\n  a: &a [x, x, x, x, x, x, x, x, x, x]\n"
        for i, name in enumerate(b"bcdefghi"):
            prev = bytes([b"abcdefghi"[i]])
            bomb += b"  " + bytes([name]) + b": &" + bytes([name]) + b" [" + b", ".join([b"*" + prev] * 10) + b"]\n"
        return data + bomb
    if shape == 3:  # recursive alias
        return data[:pos] + b"&r [*r]" + data[pos:]
    if shape == 4:  # the same anchor twice
        return data[:pos] + b"&d " + data[pos:] + b"\ndup: &d x\n"
    if shape == 5:  # merge key
        return data + b"\nbase: &m {a: 1}\nmerged:\n  <<: *m\n"
    if shape == 6:  # alias as a mapping key
        return data + b"\nk: &k key\n*k : v\n"
    return data + b"\naliases: [" + b", ".join([b"*a"] * rng.choice((99, 100, 101, 200))) + b"]\na: &a 1\n"


def _recode(rng: random.Random, data: bytes) -> bytes:
    shape = rng.randrange(9)
    text = data.decode("utf-8", "replace")
    if shape == 0:
        return data.replace(b"\n", b"\r\n")
    if shape == 1:
        return data.replace(b"\n", b"\r")
    if shape == 2:
        return data.replace(b"\n", "\x85".encode())
    if shape == 3:
        return data.replace(b"\n", "\u2028".encode())
    if shape == 4:
        return text.encode(rng.choice(("utf-16", "utf-16-le", "utf-32", "utf-32-be")), "replace")
    if shape == 5:
        return text.encode("latin-1", "replace")
    if shape == 6:
        return b"\xef\xbb\xbf" * rng.randint(1, 2) + data
    if shape == 7:  # CR-only lines with a stray byte
        return data.replace(b"\n", b"\r") + b"\xff"
    return data[: rng.randint(0, len(data))]


def _indent(rng: random.Random, data: bytes) -> bytes:
    lines = data.split(b"\n")
    if not lines:
        return data
    i = rng.randrange(len(lines))
    line = lines[i]
    body = line.lstrip(b" ")
    depth = len(line) - len(body)
    shape = rng.randrange(3)
    if shape == 0:
        lines[i] = b"\t" + body
    elif shape == 1:
        lines[i] = b" " * max(0, depth + rng.choice((-4, -2, -1, 1, 2, 4))) + body
    else:
        lines.insert(i, line)
    return b"\n".join(lines)


def byte_mutation(rng: random.Random, mutant: Mutant) -> None:
    """One byte-level mutation of one file of the mutant."""
    if not mutant.files:
        return
    name = rng.choice(sorted(mutant.files))
    data = mutant.files[name]
    op = rng.randrange(19)
    label = ""
    if op == 0 and data:
        buf = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
        data, label = bytes(buf), "bitflip"
    elif op == 1 and data:
        buf = bytearray(data)
        buf[rng.randrange(len(buf))] = rng.choice(_INTERESTING_BYTES)
        data, label = bytes(buf), "byte"
    elif op == 2:
        pos = rng.randint(0, len(data))
        data, label = data[:pos] + rng.choice(_TOKENS) + data[pos:], "token"
    elif op == 3:
        pos = _value_position(rng, data)
        data, label = data[:pos] + rng.choice(_TOKENS) + data[pos:], "token@value"
    elif op == 4:
        start, end = _span(rng, data)
        data, label = data[:start] + data[end:], "delete"
    elif op == 5:
        start, end = _span(rng, data)
        pos = rng.randint(0, len(data))
        data, label = data[:pos] + data[start:end] + data[pos:], "duplicate"
    elif op == 6:
        donor = rng.choice([*mutant.files.values(), *(f for s in corpus() for f in s.files.values())])
        start, end = _span(rng, donor)
        pos = rng.randint(0, len(data))
        cut = rng.randint(pos, len(data)) if rng.random() < 0.5 else pos
        data, label = data[:pos] + donor[start:end] + data[cut:], "splice"
    elif op == 7:
        pos = rng.randint(0, len(data))
        text = random_text(rng, rng.randint(1, 6)).encode("utf-8", "surrogatepass")
        data, label = data[:pos] + text + data[pos:], "unicode"
    elif op == 8:
        pos = _value_position(rng, data)
        end = pos + (re.match(rb"[^\s,\]}]*", data[pos:]) or re.match(b"", b"")).end()  # type: ignore[union-attr]
        data, label = data[:pos] + _huge_number(rng) + data[end:], "huge-number"
    elif op == 9:
        pos = rng.randint(0, len(data))
        data, label = data[:pos] + _huge_number(rng) + data[pos:], "huge-number-anywhere"
    elif op == 10:
        pos = _value_position(rng, data) if rng.random() < 0.7 else rng.randint(0, len(data))
        data, label = data[:pos] + _deep(rng) + data[pos:], "deep"
    elif op == 11:
        data, label = _anchors(rng, data), "anchors"
    elif op == 12:
        pos = _value_position(rng, data)
        data, label = data[:pos] + rng.choice(_TAGS).encode() + data[pos:], "tag"
    elif op == 13:
        data, label = _recode(rng, data), "recode"
    elif op == 14:
        data, label = _indent(rng, data), "indent"
    elif op == 15:
        pos = _line_start(rng, data)
        data, label = (
            data[:pos] + rng.choice((b"# c\n", b"---\n", b"...\n", b"--- !!map\n", b"key: 1\n")) + data[pos:],
            ("line"),
        )
    elif op == 16 and rng.random() < 0.1:
        size = rng.choice((999_999, 1_000_000, 1_000_001, 1_200_000))
        filler = b"# " + b"x" * 78 + b"\n"
        data, label = (data + filler * (size // len(filler) + 1))[:size], "huge-file"
    elif op == 17 and rng.random() < 0.03:
        data, label = data + b"\nmany: [" + b"0," * rng.choice((50_000, 100_001)) + b"0]\n", "many-nodes"
    else:
        start, end = _span(rng, data)
        data, label = data[:start] + bytes(rng.randrange(256) for _ in range(end - start)) + data[end:], "random-bytes"
    mutant.files[name] = data
    mutant.ops.append(f"byte:{label}:{name}")


# -- token-level mutations -----------------------------------------------------------------------


def random_rule(rng: random.Random, lists: Sequence[str] = ()) -> dict[str, Any]:
    """A rule built from the schema's field names, valid-looking values mixed with random ones."""
    rule_fields, redact_fields, _, _ = schema_fields()
    stage = rng.choice(STAGES)
    rule: dict[str, Any] = {"id": f"rnd-{rng.randrange(10**6)}", "stage": stage, "tools": [rng.choice(("*", "x"))]}
    plausible: dict[str, Callable[[], Any]] = {
        "id": lambda: rng.choice((f"r{rng.randrange(100)}", "Bad Id", "", "-x", "a" * 129)),
        "description": lambda: random_text(rng, 10),
        "stage": lambda: rng.choice(STAGES),
        "tools": lambda: [rng.choice(("*", "fs_*", "@" + rng.choice((*lists, "nope")), "x y", "[", "?"))],
        "when": lambda: random_expression(rng, lists),
        "decision": lambda: rng.choice(DECISIONS),
        "final": lambda: rng.random() < 0.5,
        "reason": lambda: mutate_template(rng, "{name}", lists),
        "timeout": lambda: rng.choice((0, 0.001, 1, 30, -1, 1e9)),
        "retries": lambda: rng.choice((0, 1, 10, 11, -1)),
        "backoff": lambda: rng.choice((0, 0.5, 60, 61)),
        "redact": lambda: [
            {
                f: rng.choice((random_regex(rng), random_scalar(rng)))
                for f in rng.sample(redact_fields, rng.randint(1, 2))
            }
        ],
        "content": lambda: mutate_template(rng, "{name}", lists),
        "block": lambda: mutate_template(rng, "blocked {name}", lists),
    }
    for name in rng.sample(rule_fields, rng.randint(0, len(rule_fields))):
        maker = plausible.get(name)
        rule[name] = maker() if maker is not None and rng.random() < 0.7 else random_value(rng)
    if rng.random() < 0.1:
        rule[rng.choice(("decison", "stages", "tool", "x", "when "))] = random_value(rng)
    return rule


def _retype(rng: random.Random, data: Any) -> str:
    spots = _containers(data)
    if not spots:
        return "none"
    parent, key = rng.choice(spots)
    parent[key] = random_value(rng)
    return f"retype:{key}"


def _drop_key(rng: random.Random, data: Any) -> str:
    spots = [(p, k) for p, k in _containers(data) if isinstance(p, dict)]
    if not spots:
        return "none"
    parent, key = rng.choice(spots)
    del parent[key]
    return f"drop:{key}"


def _dup_key(rng: random.Random, data: Any) -> str:
    spots = [(p, k) for p, k in _containers(data) if isinstance(p[k], dict) and p[k]]
    if isinstance(data, dict) and data:
        spots.append(({"root": data}, "root"))
    parent, key = rng.choice(spots) if spots else (None, None)
    if parent is None:
        return "none"
    pairs = list(parent[key].items())
    dup_key, value = rng.choice(pairs)
    pairs.insert(rng.randint(0, len(pairs)), (dup_key, value if rng.random() < 0.5 else random_value(rng)))
    if key == "root":
        data.clear()
        data["__dup__"] = _Dup(pairs)
    else:
        parent[key] = _Dup(pairs)
    return f"dup:{dup_key}"


def _swap(rng: random.Random, rules: list[dict[str, Any]]) -> str:
    if len(rules) < 1:
        return "none"
    a, b = rng.choice(rules), rng.choice(rules)
    if not a or not b:
        return "none"
    ka, kb = rng.choice(list(a)), rng.choice(list(b))
    if rng.random() < 0.5:
        a[ka], b[kb] = b[kb], a[ka]  # values between fields (and rules)
        return f"swap-values:{ka}/{kb}"
    va = a.pop(ka)
    a[kb] = va  # a value under another key
    return f"swap-keys:{ka}->{kb}"


def _expression_fields(rng: random.Random, rules: list[dict[str, Any]], lists: Sequence[str]) -> str:
    spots = [(r, k) for r in rules for k in ("when", "reason", "content", "block") if isinstance(r.get(k), str)]
    if not spots:
        rule = rng.choice(rules)
        rule["when"] = random_expression(rng, lists)
        return "expr:new-when"
    rule, key = rng.choice(spots)
    if key == "when":
        rule[key] = mutate_expression(rng, rule[key], lists)
    else:
        rule[key] = mutate_template(rng, rule[key], lists)
    return f"expr:{key}"


def _patterns(rng: random.Random, rules: list[dict[str, Any]], data: dict[str, Any]) -> str:
    shape = rng.randrange(3)
    if shape == 0:  # a redact pattern / keys / path
        ops = [op for r in rules if isinstance(r.get("redact"), list) for op in r["redact"] if isinstance(op, dict)]
        if ops:
            op = rng.choice(ops)
            op.clear()
            key = rng.choice(("pattern", "keys", "path"))
            op[key] = (
                random_regex(rng)
                if key == "pattern"
                else [random_regex(rng)]
                if key == "keys"
                else rng.choice(("a.b", "a[*]", "[0]", ".a", "a[", "a[" + "9" * rng.choice((10, 5000)) + "]", "*.*"))
            )
            if rng.random() < 0.3:
                op[rng.choice(("keep_last", "replace_with"))] = random_scalar(rng)
            return f"pattern:redact-{key}"
    if shape == 1:  # a list of patterns used by regex_match
        lists = data.get("lists")
        if isinstance(lists, dict) and lists:
            name = rng.choice(list(lists))
            lists[name] = [random_regex(rng) for _ in range(rng.randint(1, 3))]
            return f"pattern:list-{name}"
    rule = rng.choice(rules) if rules else None
    if rule is None:
        return "none"
    fn = rng.choice(("regex_match", "glob_match", "path_matches", "regex_replace"))
    extra = ", 'x'" if fn == "regex_replace" else ""
    rule["when"] = f"{fn}(arguments.path || '', {_raw(random_regex(rng))}{extra})"
    return f"pattern:{fn}"


def _stage_decision(rng: random.Random, rules: list[dict[str, Any]]) -> str:
    if not rules:
        return "none"
    rule = rng.choice(rules)
    key = rng.choice(("stage", "decision", "final"))
    odd = ("pre_execute", "Pre-Execute", "guard ", "", "deny", "block", "post", None, 1, ["guard"], {"a": 1})
    if key == "stage":
        rule[key] = rng.choice(STAGES) if rng.random() < 0.6 else rng.choice(odd)
    elif key == "decision":
        rule[key] = rng.choice(DECISIONS) if rng.random() < 0.6 else rng.choice(odd)
    else:
        rule[key] = rng.choice((True, False, "yes", 1, None))
    return f"set:{key}"


def _tools_lists(rng: random.Random, rules: list[dict[str, Any]], data: dict[str, Any], names: Sequence[str]) -> str:
    if rules and rng.random() < 0.5:
        rule = rng.choice(rules)
        entries = ("*", "fs_*", "?", "[ab]", "[!a]", "[", "a b", "", "@", "@nope", "x/y", "é", "-")
        rule["tools"] = [rng.choice((*entries, *(f"@{n}" for n in names))) for _ in range(rng.randint(0, 3))]
        return "tools"
    lists = data.setdefault("lists", {})
    if not isinstance(lists, dict):
        data["lists"] = lists = {}
    name = rng.choice((*names, "new_list", "1bad", "a-b", "lists", "", "x" * 300))
    lists[name] = rng.choice(([1, 2], ["a"], [], [[1]], [{"a": 1}], "str", None, [random_scalar(rng)]))
    return f"lists:{name}"


def _manifest(rng: random.Random, data: dict[str, Any]) -> str:
    _, _, _, manifest_fields = schema_fields()
    key = rng.choice((*manifest_fields, "extra"))
    choices: dict[str, tuple[Any, ...]] = {
        "name": ("p", "Bad", "a" * 65, "-a", "", "a.b_c-d", 1),
        "version": ("1.0", "1.0.0-", "1.0.0+build.1", "01.2.3", "v1.0.0", 1.0, ""),
        "default": ("allow", "deny", "ask", "block", None, True),
        "default_reason": ("{name}", "", None, 1, "Nope {"),
        "files": ([], "rules.yaml", [None], [1], ["/abs.yaml"], ["\\win.yaml"], ["x.json"], [[]]),
        "tests": ([], ["tests/*.yaml"], "x", [1], None),
        "description": ("", None, 5, ["a"]),
    }
    options = choices.get(key)
    data[key] = rng.choice(options) if options and rng.random() < 0.7 else random_value(rng)
    return f"manifest:{key}"


def token_mutation(rng: random.Random, mutant: Mutant) -> None:
    """One data-level mutation of a file that still parses; the file is dumped again in a random style."""
    if not mutant.files:
        return
    name = rng.choice(sorted(mutant.files))
    data = _parse(mutant.files[name])
    if not isinstance(data, dict):
        byte_mutation(rng, mutant)
        return
    names = _list_names(mutant)
    if name == MANIFEST and rng.random() < 0.7:
        label = _manifest(rng, data)
    else:
        rules = _rules_of(data)
        if not rules:
            data.setdefault("rules", [])
            if isinstance(data["rules"], list):
                data["rules"].append(random_rule(rng, names))
                rules = _rules_of(data)
        op = rng.randrange(11)
        if not rules or op == 0:
            label = _retype(rng, data)
        elif op == 1:
            label = _drop_key(rng, data)
        elif op == 2:
            label = _dup_key(rng, data)
        elif op == 3:
            other = [r for n in mutant.rule_files() if n != name for r in _rules_of(_parse(mutant.files[n]))]
            label = _swap(rng, rules + other[:4])
        elif op == 4:
            label = _expression_fields(rng, rules, names)
        elif op == 5:
            label = _patterns(rng, rules, data)
        elif op == 6:
            label = _stage_decision(rng, rules)
        elif op == 7:
            label = _tools_lists(rng, rules, data, names)
        elif op == 8:
            rules_list = data["rules"]
            rules_list.insert(rng.randint(0, len(rules_list)), random_rule(rng, names))
            label = "add-rule"
        elif op == 9:
            rule = rng.choice(rules)
            field_name = rng.choice(schema_fields()[0] + ("nope",))
            rule[field_name] = random_value(rng)
            label = f"add-field:{field_name}"
        else:
            data["rules"].append(dict(rng.choice(rules)))  # a duplicate id
            label = "duplicate-rule"
    mutant.files[name] = dump_yaml(rng, data)
    mutant.ops.append(f"token:{label}:{name}")


# -- structural mutations ------------------------------------------------------------------------


def _manifest_files(mutant: Mutant) -> tuple[dict[str, Any], list[Any]] | None:
    data = _parse(mutant.files.get(MANIFEST, b""))
    if not isinstance(data, dict) or not isinstance(data.get("files"), list):
        return None
    return data, data["files"]


def structural_mutation(rng: random.Random, mutant: Mutant) -> None:
    """Missing, extra, repeated, moved or odd files, and a missing or odd manifest."""
    found = _manifest_files(mutant)
    op = rng.randrange(12)
    if found is None or op == 0:
        shape = rng.randrange(3)
        if shape == 0:
            mutant.files.pop(MANIFEST, None)
        elif shape == 1:
            mutant.files.pop(MANIFEST, None)
            mutant.dirs.append(MANIFEST)
        else:
            mutant.files[MANIFEST] = rng.choice((b"", b"\n", b"# only a comment\n", b"---\n", b"[]\n", b"x\n"))
        mutant.ops.append(f"struct:manifest-{shape}")
        return
    data, files = found
    rule_files = mutant.rule_files()
    label = ""
    if op == 1 and rule_files:
        gone = rng.choice(rule_files)
        del mutant.files[gone]
        label = f"missing:{gone}"
    elif op == 2:
        files.append(rng.choice(("missing.yaml", "nope.yml", "sub/missing.yaml")))
        label = "listed-missing"
    elif op == 3 and files:
        files.insert(rng.randint(0, len(files)), rng.choice(files))
        label = "listed-twice"
    elif op == 4:
        seed = rng.choice(corpus())
        donor = rng.choice([n for n in seed.files if n != MANIFEST])
        new = f"spliced-{rng.randrange(100)}.yaml"
        mutant.files[new] = seed.files[donor]
        if rng.random() < 0.8:
            files.insert(rng.randint(0, len(files)), new)
        label = f"spliced-file:{seed.name}/{donor}"
    elif op == 5:
        rng.shuffle(files)
        label = "reorder"
    elif op == 6 and files and isinstance(files[0], str) and files[0] in mutant.files:
        index = rng.randrange(len(files))
        old = files[index]
        if not isinstance(old, str) or old not in mutant.files:
            return
        variant = rng.randrange(10)
        content = mutant.files[old]
        if variant == 0:
            files[index] = "./" + old
        elif variant == 1:
            files[index] = "sub/../" + old
        elif variant == 2:
            del mutant.files[old]
            mutant.files["sub/" + old] = content
            files[index] = "sub/" + old
        elif variant == 3:
            del mutant.files[old]
            mutant.outside[old] = content
            files[index] = "../" + old
        elif variant == 4:
            files[index] = old.upper()
        elif variant == 5:
            files[index] = "a" * rng.choice((200, 251, 256, 300, 5000)) + ".yaml"
        elif variant == 6:
            files[index] = rng.choice(("é.yaml", "a b.yaml", "a\\b.yaml", "a\x00.yaml", " .yaml", "\u2028.yaml"))
            mutant.files[files[index]] = content
        elif variant == 7:
            files[index] = "dir.yaml"
            mutant.dirs.append("dir.yaml")
        elif variant == 8:
            files[index] = "link.yaml"
            mutant.links["link.yaml"] = rng.choice((old, "link.yaml", "dangling.yaml", MANIFEST))
        else:
            files[index] = "sub/" + "/".join(["d"] * rng.choice((5, 100, 2000))) + "/x.yaml"
        label = f"path-variant:{variant}"
    elif op == 7:
        data["files"] = rng.choice(([], [MANIFEST], rule_files[:1] * 2, ["*.yaml"], ["."], [".yaml"], [""]))
        label = "files-odd"
    elif op == 8 and rule_files:
        name = rng.choice(rule_files)
        mutant.files[name] = rng.choice(
            (
                b"",
                b"\n",
                b"# nothing\n",
                b"---\n",
                b"...\n",
                b"rules:\n",
                b"lists:\n",
                b"rules: []\n",
                b"- a\n",
                b"\x00\x01",
            )
        )
        label = f"file-odd:{name}"
    elif op == 9 and rule_files:
        mutant.files["extra.yaml"] = mutant.files[rng.choice(rule_files)]
        label = "extra-unlisted"
    elif op == 10 and len(rule_files) > 1:
        a, b = rng.sample(rule_files, 2)
        mutant.files[a], mutant.files[b] = mutant.files[b], mutant.files[a]
        label = "swap-files"
    else:
        if rule_files:
            files.extend(rng.choice(rule_files) for _ in range(rng.randint(1, 3)))
        label = "listed-again"
    mutant.files[MANIFEST] = dump_yaml(rng, data)
    mutant.ops.append(f"struct:{label}")


def make_mutant(seed: int, iteration: int) -> Mutant:
    """The mutant of (seed, iteration): a corpus pack and one to five random mutations."""
    rng = random.Random(f"fuzz-loader:{seed}:{iteration}")
    base = rng.choice(corpus())
    mutant = Mutant(base.name, dict(base.files))
    count = 1 + min(4, int(rng.expovariate(1.0)))
    for _ in range(count):
        roll = rng.random()
        op = byte_mutation if roll < 0.45 else token_mutation if roll < 0.85 else structural_mutation
        before = mutant.copy()
        try:
            op(rng, mutant)
        except Exception as error:  # data PyYAML cannot dump (too deep, huge ints): mutate the bytes instead
            ops = [*mutant.ops, f"failed:{op.__name__}:{type(error).__name__}"]
            mutant = before
            mutant.ops = ops
            byte_mutation(rng, mutant)
    return mutant


# -- writing a mutant ---------------------------------------------------------------------------


def write_mutant(mutant: Mutant, folder: Path) -> None:
    """Write the mutant as `folder` (a pack) with its outside files in folder's parent; best effort."""
    parent = folder.parent
    if parent.exists():
        shutil.rmtree(parent)
    folder.mkdir(parents=True)
    for target, files in ((parent, mutant.outside), (folder, mutant.files)):
        for rel, data in files.items():
            with contextlib.suppress(OSError, ValueError):
                path = target / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
    for rel in mutant.dirs:
        with contextlib.suppress(OSError, ValueError):
            (folder / rel).mkdir(parents=True, exist_ok=True)
    for rel, to in mutant.links.items():
        with contextlib.suppress(OSError, ValueError):
            os.symlink(to, folder / rel)


# -- the oracle ----------------------------------------------------------------------------------

_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")


def yaml_lines(data: bytes) -> list[str]:
    """The lines of a file as YAML numbers them (a UTF-8 BOM is not text; bad bytes count as one char)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    text = data.decode("utf-8", "replace")
    if not text:
        return []
    parts = _BREAK.split(text)
    if len(parts) > 1 and parts[-1] == "":
        parts.pop()
    return parts


@dataclass
class Finding:
    """Something the oracle refuses, with a signature that groups findings of one cause."""

    kind: str
    signature: str
    detail: str
    trace: str = ""


def _signature(kind: str, error: BaseException) -> str:
    """kind:ExceptionType@deepest policyengine frame (file:function), else the deepest frame."""
    frames = traceback.extract_tb(error.__traceback__)
    ours = [f for f in frames if "/policyengine/" in f.filename.replace("\\", "/")]
    chosen = ours or frames
    at = f"{Path(chosen[-1].filename).name}:{chosen[-1].name}" if chosen else "?"
    return f"{kind}:{type(error).__name__}@{at}"


def check_locations(folder: Path, problems: Sequence[Problem], allowed: set[str]) -> list[Finding]:
    """Every located problem names a file of the pack and a line and column inside it."""
    findings: list[Finding] = []
    cache: dict[str, list[str] | None] = {}
    root = os.path.realpath(folder)
    for problem in problems:
        loc = problem.location
        if loc is None:
            continue
        rendered = problem.render()
        real = os.path.realpath(loc.file)
        if not (real == root or real.startswith(root + os.sep)):
            findings.append(
                Finding("location", "location:outside-pack-folder", f"{loc.file} is outside the pack\n{rendered}")
            )
            continue
        if os.path.normpath(loc.file) not in allowed:
            findings.append(
                Finding(
                    "location", f"location:{problem.code}:not-a-pack-file", f"{loc.file} is no pack file\n{rendered}"
                )
            )
            continue
        if loc.file not in cache:
            try:
                cache[loc.file] = yaml_lines(Path(loc.file).read_bytes())
            except OSError:
                cache[loc.file] = None
        lines = cache[loc.file]
        if lines is None:
            if (loc.line, loc.column) != (1, 1):
                findings.append(
                    Finding("location", f"location:{problem.code}:unreadable-not-1:1", f"unreadable file\n{rendered}")
                )
            continue
        if not 1 <= loc.line <= len(lines) + 1:
            findings.append(
                Finding(
                    "location",
                    f"location:{problem.code}:line-out-of-file",
                    f"line {loc.line} of a {len(lines)}-line file\n{rendered}",
                )
            )
            continue
        text = lines[loc.line - 1] if loc.line <= len(lines) else ""
        if not 1 <= loc.column <= len(text) + 1:
            findings.append(
                Finding(
                    "location",
                    f"location:{problem.code}:column-out-of-line",
                    f"column {loc.column} on line {loc.line} of {len(text)} characters: {text!r}\n{rendered}",
                )
            )
            continue
        if problem.source_line is not None and loc.line <= len(lines) and problem.source_line != text:
            findings.append(
                Finding(
                    "location",
                    f"location:{problem.code}:source-line-mismatch",
                    f"shown {problem.source_line!r}, line {loc.line} is {text!r}\n{rendered}",
                )
            )
    return findings


def check_error(error: PackLoadError) -> list[Finding]:
    """A refusal carries at least one error, renders, and keeps its problems through pickling."""
    findings: list[Finding] = []
    if not error.errors:
        findings.append(Finding("refusal", "refusal:no-errors", f"PackLoadError without errors: {error.codes}"))
    try:
        str(error)
        error.render(color=True)
    except Exception as exc:
        findings.append(Finding("render", _signature("render", exc), repr(exc), traceback.format_exc()))
    return findings


def _key(problems: Sequence[Problem]) -> list[tuple[str, str, str]]:
    return [(p.code, p.message, str(p.location)) for p in problems]


# A load may take this long (seconds) plus this much per byte of the pack's files (10 s per MB).
SLOW_BASE = 2.0
SLOW_PER_BYTE = 1e-5


class Harness:
    """A worker's state: a scratch folder, an event loop, and a registry running the known-good pack."""

    def __init__(self, root: Path | None = None, *, reload_rate: float = 0.25) -> None:
        base = Path("/dev/shm") if Path("/dev/shm").is_dir() else None
        self.root = root or Path(tempfile.mkdtemp(prefix="fuzz-loader-", dir=base))
        self.own_root = root is None
        self.folder = self.root / "m" / "pack"
        self.good = self.root / "good"
        self.good.mkdir(parents=True, exist_ok=True)
        for name, text in GOOD_PACK.items():
            (self.good / name).write_text(text, encoding="utf-8")
        self.loop = asyncio.new_event_loop()
        self.registry = Registry()
        self.layers = PolicyLayers.install(self.registry, [self.good])
        self.baseline = self.decide()
        self.reload_rate = reload_rate

    def close(self) -> None:
        self.loop.close()
        if self.own_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def decide(self, registry: Registry | None = None) -> list[Evaluation]:
        """The registry's answer for every probe call."""
        reg = registry or self.registry

        async def run() -> list[Evaluation]:
            return [
                await evaluate(reg, p.name, p.arguments, agent=p.agent, call_id=f"probe-{i}", result=p.result)
                for i, p in enumerate(PROBES)
            ]

        return self.loop.run_until_complete(run())

    def _same_as_good(self, when: str, installation: Any) -> list[Finding]:
        findings = []
        if self.registry.installation is not installation:
            findings.append(Finding("install", f"install:{when}:registry-rebuilt", "the registry was changed"))
        now = self.decide()
        if now != self.baseline:
            diff = [f"{p.name}: {a} != {b}" for p, a, b in zip(PROBES, self.baseline, now, strict=True) if a != b]
            findings.append(Finding("install", f"install:{when}:decisions-changed", "\n".join(diff)))
        return findings

    def check(self, mutant: Mutant, *, reload: bool = False) -> tuple[str, list[Finding]]:
        """Write the mutant and run the whole oracle: ('ok' | 'refused', findings); `reload` checks reload too."""
        write_mutant(mutant, self.folder)
        # The manifest is always the pack's (a missing one is reported at its 1:1).
        allowed = {os.path.normpath(self.folder / rel) for rel in [MANIFEST, *mutant.files, *mutant.links]}
        findings: list[Finding] = []
        pack: Pack | None = None
        first: PackLoadError | None = None
        started = time.perf_counter()
        try:
            pack = load_pack(self.folder)
        except PackLoadError as error:
            first = error
            findings += check_error(error)
            findings += check_locations(self.folder, error.problems, allowed)
        except Exception as error:
            findings.append(Finding("escape", _signature("escape", error), repr(error)[:2000], traceback.format_exc()))
            return "finding", findings + self._install(None, None, escaped=True)
        findings += self._timing(mutant, time.perf_counter() - started)
        if pack is not None:
            if not isinstance(pack, Pack):
                findings.append(Finding("escape", "escape:not-a-pack", repr(pack)[:500]))
                return "finding", findings
            findings += check_locations(self.folder, pack.warnings, allowed)
        findings += self._install(pack, first)
        if reload:
            findings += self._reload(pack is not None)
        return ("ok" if pack is not None else "refused"), findings

    def _timing(self, mutant: Mutant, seconds: float) -> list[Finding]:
        """A load slower than SLOW_BASE + SLOW_PER_BYTE * size is a finding (the limits should bound the work)."""
        size = sum(len(d) for d in mutant.files.values()) + sum(len(d) for d in mutant.outside.values())
        if seconds <= SLOW_BASE + SLOW_PER_BYTE * size:
            return []
        return [Finding("slow", "slow:load_pack", f"load_pack took {seconds:.1f}s for {size:,} bytes of files")]

    def _install(self, pack: Pack | None, first: PackLoadError | None, escaped: bool = False) -> list[Finding]:
        """Install next to the good pack: a refusal (or a crash) leaves it alone; a success decides and comes off."""
        before = self.registry.installation
        try:
            layers = PolicyLayers.install(self.registry, [self.folder])
        except PackLoadError as error:
            findings = self._same_as_good("refused", before)
            if pack is not None:
                findings.append(Finding("install", "install:load-ok-install-refused", str(error)[:2000]))
            elif first is not None and _key(first.problems) != _key(error.problems):
                findings.append(
                    Finding("install", "install:nondeterministic-problems", f"{first.codes} != {error.codes}")
                )
            return findings
        except PolicyEngineError as error:  # e.g. a rule id the good pack already uses
            return self._same_as_good(f"refused-{type(error).__name__}", before)
        except Exception as error:
            same = self._same_as_good("escape", before)
            if escaped:  # the crash load_pack had: already a finding; what counts here is the registry
                return same
            return [
                Finding("install", _signature("install-escape", error), repr(error)[:2000], traceback.format_exc()),
                *same,
            ]
        findings = []
        if pack is None:
            findings.append(
                Finding("install", "install:load-refused-install-ok", "load_pack refused, install accepted")
            )
        try:
            self.decide()
        except Exception as error:
            findings.append(
                Finding("evaluate", _signature("evaluate", error), repr(error)[:2000], traceback.format_exc())
            )
        for handle in layers.handles:
            handle.remove()
        try:
            fresh = Registry()  # the mutant alone: no good-pack deny short-cuts its rules
            for loaded in layers.packs:
                fresh.install(pack_bundle(loaded))
            self.decide(fresh)
        except Exception as error:
            findings.append(Finding("evaluate", _signature("fresh", error), repr(error)[:2000], traceback.format_exc()))
        if self.decide() != self.baseline:
            findings.append(Finding("install", "install:remove-did-not-restore", "decisions differ after remove"))
        return findings

    def _reload(self, loads: bool) -> list[Finding]:
        before = self.registry.installation
        try:
            report = self.layers.reload([self.folder])
        except PolicyEngineError:  # a clash with an id already installed: nothing swapped
            return self._same_as_good("reload-refused", before)
        except Exception as error:
            return [Finding("reload", _signature("reload-escape", error), repr(error)[:2000], traceback.format_exc())]
        if not report.swapped:
            findings = self._same_as_good("reload-refused", before)
            if loads:
                findings.append(Finding("reload", "reload:load-ok-reload-refused", str(report.error)[:2000]))
            return findings
        findings = []
        try:
            self.decide()
        except Exception as error:
            findings.append(
                Finding("evaluate", _signature("evaluate-reload", error), repr(error), traceback.format_exc())
            )
        back = self.layers.reload([self.good])
        if not back.swapped or self.decide() != self.baseline:
            findings.append(Finding("reload", "reload:good-pack-not-restored", str(back.error)))
        return findings


# -- grammar-generated JMESPath ----------------------------------------------------------------
#
# Expressions built from the JMESPath grammar (every production of the 1.1.0 parser), each put in
# a rule's `when:` and checked on its own, without the mutation machinery:
#
# 1. load_pack returns a Pack or raises PackLoadError whose problems are all located inside the
#    rule file; a PE308 (internal error compiling a rule) is a finding, so is any other exception.
# 2. When it loads, the condition is evaluated on a few random call documents. It returns a value
#    or raises a JMESPathError (the rule then fails closed); a Python error is a finding unless
#    jmespath 1.1.0 raises the very same class on the same input (its own built-ins raise a few:
#    `contains('abc', `1`)` a TypeError, `floor` of a huge float an OverflowError, a zero slice
#    step a ValueError; the engine fails closed on those too).
# 3. The compiled closures, the engine's fallback interpreter and jmespath 1.1.0 agree (same value,
#    or same exception class), except where the engine raises OrderingError by design (an ordering
#    comparison of anything but two numbers or two strings, null in jmespath).
#
#     python scripts/fuzz_loader.py --grammar --iterations 20000 --seed 1

_GRAMMAR_NAMES = ("name", "agent", "call_id", "arguments", "result", "a", "b", "tags", "amount", "items", "path")
_GRAMMAR_QUOTED = ('"a b"', '"é"', '"tags"', '"say \\"hi\\""', '"\\u00e9"', '""', '"1"', '"\\\\"')
_GRAMMAR_COMPARATORS = ("==", "!=", "<", "<=", ">", ">=")
_GRAMMAR_STRINGS = ("", "a", "b", "A", "10", "abc", "é", "a b", "/etc/passwd", ".env", "x'y", "`", "\\")
_SIMPLE_OPERAND = re.compile(r'[@\w."\\]+')


def random_json(rng: random.Random, depth: int = 0) -> Any:
    """A JSON value (finite numbers only) whose keys overlap the grammar's identifiers."""
    roll = rng.random()
    if depth < 3 and roll < 0.2:
        return [random_json(rng, depth + 1) for _ in range(rng.randrange(0, 4))]
    if depth < 3 and roll < 0.35:
        keys = (*_GRAMMAR_NAMES, "a b", "é", "")
        return {rng.choice(keys): random_json(rng, depth + 1) for _ in range(rng.randrange(0, 4))}
    kind = rng.randrange(6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.choice((0, 1, -1, 2, 3, 10, 10000, 2**53 + 1, -(10**20)))
    if kind == 3:
        return rng.choice((0.0, -0.0, 0.5, 1.0, 2.5, -3.25, 1e308, 1e-300))
    return rng.choice(_GRAMMAR_STRINGS)


def random_call(rng: random.Random) -> dict[str, Any]:
    """A call document as rules see it: name, agent, call_id, arguments and sometimes a result."""
    arguments = {rng.choice(_GRAMMAR_NAMES): random_json(rng, 1) for _ in range(rng.randrange(0, 5))}
    call: dict[str, Any] = {
        "name": rng.choice(("t", "fs_write", "a")),
        "agent": rng.choice(("agent", "a", "")),
        "call_id": rng.choice(("c1", "", "a")),
        "arguments": arguments,
    }
    if rng.random() < 0.3:
        call["result"] = {"value": random_json(rng, 1), "content": [{"type": "text", "text": "x"}]}
    return call


def _literal(rng: random.Random) -> str:
    """A JSON literal in backticks (a backtick inside is escaped)."""
    text = json.dumps(random_json(rng, 1), ensure_ascii=rng.random() < 0.5)
    return "`" + text.replace("`", "\\`") + "`"


def _identifier(rng: random.Random) -> str:
    """A field name, now and then a quoted one (escapes, non-ASCII, empty)."""
    return rng.choice(_GRAMMAR_QUOTED) if rng.random() < 0.15 else rng.choice(_GRAMMAR_NAMES)


def _grammar_leaf(rng: random.Random) -> str:
    """identifier, quoted identifier, @, literal, raw string, `*`, a list reference or a bare bracket."""
    kind = rng.randrange(10)
    if kind <= 2:
        return _identifier(rng)
    if kind == 3:
        return "@"
    if kind == 4:
        return _literal(rng)
    if kind == 5:
        return _raw(rng.choice(_GRAMMAR_STRINGS))
    if kind == 6:
        return "*"
    if kind == 7:
        return rng.choice(("lists.names", "lists.names[0]", "lists.nope"))
    if kind == 8:
        return "[" + _bracket(rng) + "]"
    return rng.choice(("`null`", "`true`", "`[]`", "`{}`", "`1`", "''"))


def _number(rng: random.Random) -> str:
    """An index or slice bound: small, negative, or past any array."""
    return str(rng.choice((0, 1, 2, -1, -2, 3, 10, -10, 2**31)))


def _bracket(rng: random.Random) -> str:
    """What goes between [ and ] after an expression: an index, *, a slice (any of its parts) or nothing."""
    kind = rng.randrange(5)
    if kind == 0:
        return _number(rng)
    if kind == 1:
        return "*"
    if kind == 2:
        return ""
    parts = [_number(rng) if rng.random() < 0.5 else "" for _ in range(3)]
    if rng.random() < 0.15:
        parts[2] = "0"  # a zero step: a jmespath error when it meets an array
    return ":".join(parts) if rng.random() < 0.5 else ":".join(parts[:2])


def _operand(rng: random.Random, text: str) -> str:
    """`text` as the left side of `.`, `[` or `|`: parenthesised unless simple (and sometimes not at all)."""
    if _SIMPLE_OPERAND.fullmatch(text) or rng.random() < 0.1:
        return text
    return f"({text})"


def grammar_expression(rng: random.Random, depth: int = 0) -> str:
    """A random JMESPath expression from the 1.1.0 grammar, with the engine's functions at random arities."""
    if depth >= 4 or rng.random() < 0.2 + 0.15 * depth:
        return _grammar_leaf(rng)

    def sub() -> str:
        return grammar_expression(rng, depth + 1)

    form = rng.randrange(18)
    if form == 0:  # sub-expression: the right side is an identifier, a multi-select, a function or *
        right = rng.choice(
            (_identifier(rng), _identifier(rng), "*", f"[{sub()}, {sub()}]", "{k: " + sub() + "}", f"length({sub()})")
        )
        return f"{_operand(rng, sub())}.{right}"
    if form in (1, 2):  # index, slice, [*], [] after an expression
        return f"{_operand(rng, sub())}[{_bracket(rng)}]"
    if form == 3:  # a projection continued: [*].x, [*][0], [].x
        return f"{_operand(rng, sub())}[{rng.choice(('*', ''))}]{rng.choice(('.' + _identifier(rng), '[0]', '[1:]'))}"
    if form == 4:  # value projection
        return f"{_operand(rng, sub())}.*"
    if form == 5:  # filter
        return f"{_operand(rng, sub())}[?{sub()}]"
    if form in (6, 7):
        return f"{sub()} {rng.choice(_GRAMMAR_COMPARATORS)} {sub()}"
    if form == 8:
        return f"{sub()} {rng.choice(('||', '&&'))} {sub()}"
    if form == 9:
        return f"!{_operand(rng, sub())}"
    if form == 10:
        return f"({sub()})"
    if form == 11:
        return f"{sub()} | {sub()}"
    if form == 12:
        return "[" + ", ".join(sub() for _ in range(rng.randint(1, 3))) + "]"
    if form == 13:
        pairs = (f"{_identifier(rng)}: {sub()}" for _ in range(rng.randint(1, 3)))
        return "{" + ", ".join(pairs) + "}"
    if form in (14, 15):  # a function of the engine (or an unknown one) with a random number of arguments
        fn = rng.choice(FUNCTIONS) if rng.random() < 0.95 else rng.choice(("nope", "lenght"))
        low, high = function_arity().get(fn, (1, 1))
        count = max(0, rng.choice((low, low, high or low + 2, low - 1, (high or low) + 1, rng.randrange(0, 4))))
        args = (f"&{sub()}" if rng.random() < 0.15 else sub() for _ in range(count))
        return f"{fn}({', '.join(args)})"
    if form == 16:  # an expression reference outside a function (an _Expression value)
        return f"&{sub()}"
    return f"{_operand(rng, sub())}[{_bracket(rng)}].{_identifier(rng)}"


GRAMMAR_LISTS = {"names": ["a", "b", 1, True]}


def _outcome(run: Callable[..., Any], *args: Any) -> tuple[str, Any]:
    """("ok", value) or ("raise", the exception)."""
    try:
        return "ok", run(*args)
    except Exception as error:
        return "raise", error


def same_result(a: Any, b: Any) -> bool:
    """Equal as JSON values (true is not 1, NaN equals NaN); expression references by their node."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or (a != a and b != b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_result(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_result(a[k], b[k]) for k in a)
    if isinstance(a, _Expression) and isinstance(b, _Expression):
        return bool(a.expression == b.expression)
    if isinstance(a, str) and isinstance(b, str) and " at 0x" in a:
        # to_string(&x) prints the expression object with its address: equal up to the address.
        return _ADDRESS.sub("", a) == _ADDRESS.sub("", b)
    return type(a) is type(b) and a == b


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _same_outcome(a: tuple[str, Any], b: tuple[str, Any]) -> bool:
    """Both returned equal values, or both raised the same exception class."""
    if a[0] != b[0]:
        return False
    return type(a[1]) is type(b[1]) if a[0] == "raise" else same_result(a[1], b[1])


def _show(result: tuple[str, Any]) -> str:
    """An outcome for a finding's detail, cut short."""
    if result[0] == "raise":
        return f"raised {type(result[1]).__name__}: {result[1]}"[:300]
    return f"returned {result[1]!r}"[:300]


def write_expression_pack(folder: Path, text: str, rng: random.Random) -> Path:
    """A pack whose one rule has `text` as its condition, in a random YAML style; the rule file's path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MANIFEST).write_bytes(b"name: grammar\nversion: 1.0.0\nfiles: [rules.yaml]\n")
    rules = {
        "lists": GRAMMAR_LISTS,
        "rules": [{"id": "g", "stage": "pre-execute", "tools": ["*"], "when": text, "decision": "deny"}],
    }
    target = folder / "rules.yaml"
    target.write_bytes(dump_yaml(rng, rules))
    return target


def check_expression(
    folder: Path, text: str, documents: Sequence[Any], rng: random.Random
) -> tuple[str, list[Finding]]:
    """The grammar oracle for one expression: ('ok' | 'refused', findings)."""
    target = write_expression_pack(folder, text, rng)
    allowed = {os.path.normpath(folder / MANIFEST), os.path.normpath(target)}
    try:
        pack = load_pack(folder)
    except PackLoadError as error:
        findings = check_error(error) + check_locations(folder, error.problems, allowed)
        for problem in error.problems:
            if problem.location is None:
                findings.append(Finding("location", f"location:{problem.code}:unlocated", problem.render()))
            if problem.code == "PE308":  # the loader caught a bug of its own: still a bug
                findings.append(
                    Finding("internal", f"internal:{problem.message.split(':')[1].strip()}", problem.render())
                )
        return "refused", findings
    except Exception as error:
        return "refused", [
            Finding("escape", _signature("escape", error), f"{text!r}: {error!r}"[:2000], traceback.format_exc())
        ]
    (rule,) = pack.rules
    expression = rule.when
    assert expression is not None
    findings = []
    for document in documents:
        data = freeze(document)
        got = _outcome(expression.search, data)
        fallback = _outcome(strict_search, expression.parsed.parsed, data, OPTIONS)
        plain = _outcome(TreeInterpreter(OPTIONS).visit, expression.parsed.parsed, data)
        where = f"{text!r} on {document!r}"
        # A Python error is jmespath's own (tolerated) only when jmespath raises the same class here.
        native = plain[0] == "raise" and type(plain[1]) is type(got[1])
        if got[0] == "raise" and not isinstance(got[1], JMESPathError) and not native:
            findings.append(Finding("evaluate", _signature("eval", got[1]), f"{where}: {_show(got)}"))
        if not _same_outcome(got, fallback):
            findings.append(
                Finding("evaluate", "eval:compiled-differs-from-fallback", f"{where}: {_show(got)} / {_show(fallback)}")
            )
        deliberate = fallback[0] == "raise" and isinstance(fallback[1], OrderingError)
        if not deliberate and not _same_outcome(fallback, plain):
            findings.append(
                Finding(
                    "evaluate",
                    "eval:differs-from-jmespath",
                    f"{where}: engine {_show(fallback)}, jmespath {_show(plain)}",
                )
            )
        applied = _outcome(rule.applies, data)
        if applied[0] != got[0] or (applied[0] == "ok" and type(applied[1]) is not bool):
            findings.append(Finding("evaluate", "eval:applies-disagrees", f"{where}: {_show(applied)} / {_show(got)}"))
    return "ok", findings


def run_grammar(folder: Path, seed: int, start: int, count: int, *, documents: int = 3, max_examples: int = 3) -> Stats:
    """Grammar iterations [start, start + count): each a fresh expression and its call documents."""
    stats = Stats()
    for iteration in range(start, start + count):
        rng = random.Random(f"grammar:{seed}:{iteration}")
        text = grammar_expression(rng)
        calls = [random_call(rng) for _ in range(documents)]
        try:
            status, findings = check_expression(folder, text, calls, rng)
        except Exception as error:  # a bug of the oracle itself
            status, findings = (
                "finding",
                [Finding("oracle", _signature("oracle", error), repr(error), traceback.format_exc())],
            )
        stats.iterations += 1
        if findings:
            stats.findings += 1
            for finding in findings:
                stats.signatures[finding.signature] += 1
                its = stats.examples.setdefault(finding.signature, [])
                if len(its) < max_examples and iteration not in its:
                    its.append(iteration)
                stats.details.setdefault(finding.signature, finding.detail[:1500])
        elif status == "ok":
            stats.ok += 1
        else:
            stats.refused += 1
    return stats


def _grammar_work(job: tuple[int, int, int, str]) -> Stats:
    """One chunk of grammar iterations, in a scratch folder of this process."""
    seed, start, count, scratch = job
    return run_grammar(Path(scratch) / f"grammar-{os.getpid()}" / "pack", seed, start, count)


def grammar_main(args: argparse.Namespace) -> int:
    """`--grammar`: run (or, with --replay N, show) grammar iterations; 1 when anything was found."""
    shm = Path("/dev/shm") if Path("/dev/shm").is_dir() else None
    scratch = tempfile.mkdtemp(prefix="fuzz-grammar-", dir=shm)
    try:
        if args.replay is not None:
            rng = random.Random(f"grammar:{args.seed}:{args.replay}")
            text = grammar_expression(rng)
            calls = [random_call(rng) for _ in range(3)]
            status, findings = check_expression(Path(scratch) / "pack", text, calls, rng)
            print(f"expression: {text}\ncalls: {json.dumps(calls)}\nverdict: {status}")
            for finding in findings:
                print(f"\n{finding.signature}\n{finding.detail}\n{finding.trace}")
            return 1 if findings else 0
        started = time.perf_counter()
        total = Stats()
        jobs = [
            (args.seed, s, min(args.chunk, args.start + args.iterations - s), scratch)
            for s in range(args.start, args.start + args.iterations, args.chunk)
        ]
        if args.workers > 1:
            with multiprocessing.get_context("fork").Pool(args.workers) as pool:
                for stats in pool.imap_unordered(_grammar_work, jobs):
                    total.add(stats)
                    print(f"{total.iterations}/{args.iterations} findings {total.findings}", flush=True)
        else:
            for job in jobs:
                total.add(_grammar_work(job))
                print(f"{total.iterations}/{args.iterations} findings {total.findings}", flush=True)
        _report(total, time.perf_counter() - started, None)
        if total.signatures:
            print(f"replay one: python scripts/fuzz_loader.py --grammar --seed {args.seed} --replay N")
        return 1 if total.findings else 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


# -- running ------------------------------------------------------------------------------------


class IterationTimeout(BaseException):
    """One iteration ran longer than --timeout (a BaseException: the oracle's `except Exception` lets it through)."""


def _alarm(_signum: int, _frame: FrameType | None) -> None:
    raise IterationTimeout("iteration timed out")


@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise IterationTimeout after `seconds` (POSIX main thread only; no limit otherwise)."""
    if not seconds or not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def run_one(
    harness: Harness, seed: int, iteration: int, timeout: float | None = 30.0
) -> tuple[str, list[Finding], Mutant]:
    """Generate and check one mutant; a timeout (or a crash of the oracle itself) is a finding too."""
    try:
        mutant = make_mutant(seed, iteration)
    except Exception as error:  # a bug of the fuzzer itself: reported, the run goes on
        return (
            "finding",
            [Finding("generator", _signature("generator", error), repr(error), traceback.format_exc())],
            (Mutant("generator-failed", {})),
        )
    reload = random.Random(f"reload:{seed}:{iteration}").random() < harness.reload_rate
    try:
        with time_limit(timeout):
            status, findings = harness.check(mutant, reload=reload)
    except IterationTimeout:
        return "finding", [Finding("timeout", "timeout", f"iteration {iteration} took longer than {timeout}s")], mutant
    except Exception as error:
        return "finding", [Finding("oracle", _signature("oracle", error), repr(error), traceback.format_exc())], mutant
    return status, findings, mutant


@dataclass
class Stats:
    """What a batch of iterations gave."""

    iterations: int = 0
    ok: int = 0
    refused: int = 0
    findings: int = 0
    signatures: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[int]] = field(default_factory=dict)
    details: dict[str, str] = field(default_factory=dict)
    ops: Counter[str] = field(default_factory=Counter)

    def add(self, other: Stats) -> None:
        self.iterations += other.iterations
        self.ok += other.ok
        self.refused += other.refused
        self.findings += other.findings
        self.signatures.update(other.signatures)
        self.ops.update(other.ops)
        for sig, its in other.examples.items():
            self.examples.setdefault(sig, []).extend(its)
        for sig, detail in other.details.items():
            self.details.setdefault(sig, detail)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.@-]+", "_", text)[:120]


def save_finding(
    out: Path, seed: int, iteration: int, mutant: Mutant, findings: Sequence[Finding], harness: Harness
) -> None:
    """The mutant's files (as written), each finding's traceback, and how to replay it."""
    for finding in findings:
        target = out / _slug(finding.signature) / f"iter-{iteration}"
        if target.exists():
            continue
        target.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            shutil.copytree(harness.folder.parent, target / "mutant", symlinks=True)
        (target / "finding.json").write_text(
            json.dumps(
                {
                    "kind": finding.kind,
                    "signature": finding.signature,
                    "seed": seed,
                    "iteration": iteration,
                    "origin": mutant.origin,
                    "ops": mutant.ops,
                    "replay": f"python scripts/fuzz_loader.py --seed {seed} --replay {iteration}",
                },
                indent=2,
            ),
            encoding="utf-8",
        )
        (target / "detail.txt").write_text(finding.detail + "\n\n" + finding.trace, encoding="utf-8", errors="replace")


def run_range(
    harness: Harness,
    seed: int,
    start: int,
    count: int,
    *,
    findings_dir: Path | None = None,
    timeout: float | None = 30.0,
    max_examples: int = 3,
) -> Stats:
    """Run iterations [start, start + count) in this process."""
    stats = Stats()
    for iteration in range(start, start + count):
        status, findings, mutant = run_one(harness, seed, iteration, timeout)
        stats.iterations += 1
        for op in mutant.ops:
            stats.ops[op.split(":")[0] + ":" + op.split(":")[1]] += 1
        if findings:
            stats.findings += 1
            new = []
            for finding in findings:
                stats.signatures[finding.signature] += 1
                its = stats.examples.setdefault(finding.signature, [])
                if len(its) < max_examples and iteration not in its:
                    its.append(iteration)
                    new.append(finding)
                stats.details.setdefault(finding.signature, finding.detail[:1500])
            if findings_dir is not None and new:
                save_finding(findings_dir, seed, iteration, mutant, new, harness)
        elif status == "ok":
            stats.ok += 1
        else:
            stats.refused += 1
    return stats


# -- multiprocessing ---------------------------------------------------------------------------

_WORKER: Harness | None = None


def limit_memory(megabytes: int) -> None:
    """Cap this process's address space, so a memory bomb is a MemoryError (a finding), not the OOM killer."""
    try:
        import resource
    except ImportError:  # not POSIX
        return
    if megabytes > 0:
        limit = megabytes * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _init_worker(reload_rate: float, memory_mb: int = 0, scratch: str | None = None) -> None:
    global _WORKER
    limit_memory(memory_mb)
    root = Path(scratch) / f"worker-{os.getpid()}" if scratch else None
    _WORKER = Harness(root, reload_rate=reload_rate)


def _work(job: tuple[int, int, int, str | None, float | None]) -> Stats:
    seed, start, count, findings_dir, timeout = job
    assert _WORKER is not None
    return run_range(
        _WORKER, seed, start, count, findings_dir=Path(findings_dir) if findings_dir else None, timeout=timeout
    )


# -- minimizing ---------------------------------------------------------------------------------


def minimize(harness: Harness, mutant: Mutant, signature: str, budget: int = 800, seconds: float = 90.0) -> Mutant:
    """Shrink each file (lines, then characters) while the mutant still gives `signature` (bounded runs and time)."""
    runs = 0
    deadline = time.perf_counter() + seconds

    def still(candidate: Mutant) -> bool:
        nonlocal runs
        runs += 1
        if time.perf_counter() > deadline:
            runs = budget  # out of time: stop shrinking
            return False
        try:
            with time_limit(30.0):
                _status, findings = harness.check(candidate, reload=True)
        except (IterationTimeout, RecursionError):
            return signature == "timeout"
        return any(f.signature == signature for f in findings)

    best = mutant.copy()
    for name in sorted(best.files):
        for unit in ("lines", "chars"):
            data = best.files[name]
            pieces: list[bytes] = data.splitlines(keepends=True) if unit == "lines" else [bytes([b]) for b in data]
            if len(pieces) > 4000 and unit == "chars":
                continue
            chunk = max(1, len(pieces) // 2)
            while chunk >= 1 and runs < budget:
                i, shrunk = 0, False
                while i < len(pieces) and runs < budget:
                    trial = pieces[:i] + pieces[i + chunk :]
                    candidate = best.copy()
                    candidate.files[name] = b"".join(trial)
                    if still(candidate):
                        pieces, best, shrunk = trial, candidate, True
                    else:
                        i += chunk
                if not shrunk:
                    chunk //= 2
    for name in [n for n in best.files if n != MANIFEST]:
        candidate = best.copy()
        del candidate.files[name]
        if runs < budget and still(candidate):
            best = candidate
    return best


def describe(mutant: Mutant) -> str:
    """The mutant's files, printable."""
    out = []
    for name, data in sorted(mutant.files.items()):
        out.append(f"--- {name} ({len(data)} bytes)\n{data[:3000]!r}")
    for name, data in sorted(mutant.outside.items()):
        out.append(f"--- ../{name} ({len(data)} bytes)\n{data[:3000]!r}")
    out += [f"--- dir {d}" for d in mutant.dirs] + [f"--- link {k} -> {v}" for k, v in mutant.links.items()]
    return "\n".join(out)


# -- atheris --------------------------------------------------------------------------------------


def run_atheris(argv: list[str], harness: Harness, ignore: Sequence[str] = ()) -> None:
    """Coverage-guided mode: the input picks a corpus pack and replaces or mutates its files.

    A finding raises (libFuzzer saves the input as a crash file); signatures matching an `ignore`
    pattern (known bugs) do not.
    """
    import atheris  # type: ignore[import-not-found,import-untyped,unused-ignore]

    seeds = corpus()

    def one_input(data: bytes) -> None:
        provider = atheris.FuzzedDataProvider(data)
        seed = seeds[provider.ConsumeIntInRange(0, len(seeds) - 1)]
        mutant = Mutant(seed.name, dict(seed.files))
        names = sorted(mutant.files)
        target = names[provider.ConsumeIntInRange(0, len(names) - 1)]
        if provider.ConsumeBool():
            mutant.files[target] = provider.ConsumeBytes(provider.remaining_bytes())
        else:
            rng = random.Random(provider.ConsumeInt(8))
            for _ in range(provider.ConsumeIntInRange(1, 5)):
                op = (byte_mutation, token_mutation, structural_mutation)[provider.ConsumeIntInRange(0, 2)]
                with contextlib.suppress(Exception):  # data PyYAML cannot dump: skip that mutation
                    op(rng, mutant)
        _status, findings = harness.check(mutant, reload=True)
        findings = [f for f in findings if not any(re.fullmatch(p, f.signature) for p in ignore)]
        if findings:
            raise AssertionError("\n\n".join(f"{f.signature}\n{f.detail}\n{f.trace}" for f in findings))

    atheris.instrument_all()
    atheris.Setup(argv, one_input)
    atheris.Fuzz()


# -- main ------------------------------------------------------------------------------------------


def _report(stats: Stats, elapsed: float, out: Path | None) -> None:
    rate = stats.iterations / elapsed if elapsed else 0.0
    print(
        f"\n{stats.iterations} iterations in {elapsed:.1f}s ({rate:.1f}/s): "
        f"ok {stats.ok}, refused {stats.refused}, findings {stats.findings} "
        f"({len(stats.signatures)} distinct)"
    )
    for sig, n in stats.signatures.most_common():
        print(f"  {n:7d}  {sig}  e.g. iterations {stats.examples.get(sig, [])[:3]}")
        print("           " + stats.details.get(sig, "").splitlines()[0][:200] if stats.details.get(sig) else "")
    if out is not None and stats.signatures:
        print(f"findings saved under {out}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--start", type=int, default=0, help="first iteration number")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--findings", type=Path, default=Path(tempfile.gettempdir()) / "policyengine-fuzz-findings")
    parser.add_argument("--chunk", type=int, default=250, help="iterations per job")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per iteration")
    parser.add_argument("--reload-rate", type=float, default=0.25, help="share of mutants also reloaded")
    parser.add_argument("--memory-mb", type=int, default=4096, help="address-space cap per worker (0: none)")
    parser.add_argument("--replay", type=int, help="write and check one iteration, print the verdict")
    parser.add_argument("--minimize", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--minimize-budget", type=int, default=800, help="oracle runs per finding signature")
    parser.add_argument("--show-ops", action="store_true", help="print how often each mutation ran")
    parser.add_argument("--atheris", action="store_true", help="coverage-guided mode (needs atheris)")
    parser.add_argument(
        "--grammar", action="store_true", help="grammar-generated JMESPath conditions instead of mutated packs"
    )
    parser.add_argument(
        "--ignore", action="append", default=[], help="--atheris: a signature regex (a known bug) not to stop on"
    )
    args, rest = parser.parse_known_args(argv)

    if args.atheris:
        try:
            import atheris  # type: ignore[import-not-found,import-untyped,unused-ignore]  # noqa: F401
        except ImportError:
            print("atheris is not installed (pip install atheris)", file=sys.stderr)
            return 2
        args.findings.mkdir(parents=True, exist_ok=True)
        prefix = [] if any(a.startswith("-artifact_prefix=") for a in rest) else [f"-artifact_prefix={args.findings}/"]
        run_atheris([sys.argv[0], *prefix, *rest], Harness(reload_rate=args.reload_rate), args.ignore)
        return 0

    if args.grammar:
        return grammar_main(args)

    if args.replay is not None:
        harness = Harness(reload_rate=1.0)
        mutant = make_mutant(args.seed, args.replay)
        status, findings, _ = run_one(harness, args.seed, args.replay, args.timeout)
        print(f"origin {mutant.origin}; ops {mutant.ops}\n{describe(mutant)}\n\nverdict: {status}")
        for f in findings:
            print(f"\n{f.signature}\n{f.detail}\n{f.trace}")
        keep = args.findings / f"replay-{args.seed}-{args.replay}"
        shutil.rmtree(keep, ignore_errors=True)
        shutil.copytree(harness.folder.parent, keep, symlinks=True)
        print(f"mutant written to {keep}")
        harness.close()
        return 1 if findings else 0

    args.findings.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    total = Stats()
    jobs = [
        (args.seed, s, min(args.chunk, args.start + args.iterations - s), str(args.findings), args.timeout)
        for s in range(args.start, args.start + args.iterations, args.chunk)
    ]
    last = 0.0

    def progress(stats: Stats) -> None:
        nonlocal last
        total.add(stats)
        now = time.perf_counter()
        if now - last > 10 or total.iterations == args.iterations:
            last = now
            elapsed = now - started
            print(
                f"[{elapsed:7.1f}s] {total.iterations}/{args.iterations} ({total.iterations / elapsed:.1f}/s) "
                f"ok {total.ok} refused {total.refused} findings {total.findings} ({len(total.signatures)} distinct)",
                flush=True,
            )

    # Workers write their mutants under one scratch folder, removed at the end (a pool's workers are
    # terminated, so they cannot clean up after themselves).
    shm = Path("/dev/shm") if Path("/dev/shm").is_dir() else None
    scratch = tempfile.mkdtemp(prefix="fuzz-loader-", dir=shm)
    try:
        if args.workers > 1:
            context = multiprocessing.get_context("fork")
            initargs = (args.reload_rate, args.memory_mb, scratch)
            with context.Pool(args.workers, initializer=_init_worker, initargs=initargs) as pool:
                for stats in pool.imap_unordered(_work, jobs):
                    progress(stats)
        else:
            _init_worker(args.reload_rate, args.memory_mb, scratch)
            for job in jobs:
                progress(_work(job))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    elapsed = time.perf_counter() - started
    _report(total, elapsed, args.findings)
    if args.show_ops:
        for op, n in sorted(total.ops.items()):
            print(f"  {n:7d}  {op}")
    (args.findings / "summary.json").write_text(
        json.dumps(
            {
                "seed": args.seed,
                "iterations": total.iterations,
                "seconds": round(elapsed, 1),
                "rate": round(total.iterations / elapsed, 1) if elapsed else None,
                "ok": total.ok,
                "refused": total.refused,
                "findings": total.findings,
                "signatures": dict(total.signatures.most_common()),
                "examples": total.examples,
            },
            indent=2,
        ),
        encoding="utf-8",
    )
    if args.minimize and total.signatures:
        harness = Harness(reload_rate=1.0)
        for sig, its in sorted(total.examples.items()):
            small = minimize(harness, make_mutant(args.seed, its[0]), sig, args.minimize_budget)
            target = args.findings / _slug(sig) / "minimized"
            target.mkdir(parents=True, exist_ok=True)
            (target / "mutant.txt").write_text(describe(small), encoding="utf-8")
            print(f"\nminimized {sig} (iteration {its[0]}):\n{describe(small)}")
        harness.close()
    return 1 if total.findings else 0


if __name__ == "__main__":
    sys.exit(main())
