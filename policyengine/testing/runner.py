"""Policy unit tests for rule packs: discover test files, run them through explain(), measure coverage.

A pack's manifest lists test files (`tests: [tests/*.yaml]`, globs relative to the pack folder);
each file holds `tests:`, one call per test, an optional recorded result, and what the loaded
packs must decide (schema: `schemas/tests.yaml`). The runner is built so that a test can never
pass by accident:

- every expectation given is compared, values with their types (`1`, `true` and `"1"` differ),
  and every mismatch says `expected X, got Y` at the expectation's `file:line:column`;
- an expectation naming a rule id that no loaded pack has (a typo) fails the run before any
  test runs (PT001), instead of silently matching nothing;
- with `require_tests`, a pack without tests fails the run (PT002);
- `TestReport.ok()` is false whenever anything failed, was not run, or (given a threshold) a
  pack's rule coverage is below it, so an exit code built on it cannot ignore a failure.

A test with `steps:` is a sequence: its calls are decided in order in one session of their own
(a fresh session id per run), each step's expectations compared as a test's are, and
`expect.labels` with exactly the labels the session holds after the step. Label rules that
labelled a step count as exercised.

Failure codes: PT001 unknown rule id, PT002 pack without tests, PT003 expectation mismatch,
PT004 the call could not be evaluated, PT005 not run (another test named an unknown rule).
Problems in the test files themselves (YAML, schema) are load problems (PE1xx, PE2xx): `discover`
raises PackLoadError with all of them, each at its `file:line:column`. A run's text, JSON and
JUnit reports are in `policyengine.testing.reports`.
"""

from __future__ import annotations

import asyncio
import difflib
import itertools
import json
import math
import re
import secrets
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar

from policyengine.enforce.evaluate import Evaluation, evaluate
from policyengine.enforce.explain import explain
from policyengine.enforce.install import PolicyLayers
from policyengine.language.type_names import TypeNames, type_name
from policyengine.packs.loader import MANIFEST, Pack
from policyengine.packs.rule_schemas import schema, schema_problems
from policyengine.packs.rules import Rule
from policyengine.packs.yaml_source import SourceDoc, load_yaml_file
from policyengine.values.decisions import Source, SourceKind
from policyengine.values.frozen import thaw
from policyengine.values.problems import Location, Problem, ProblemSink

__all__ = [
    "EXPECT_FIELDS",
    "MISMATCH",
    "NOT_RUN",
    "NO_TESTS",
    "RUN_ERROR",
    "UNKNOWN_RULE",
    "Failure",
    "PackSummary",
    "PolicyTest",
    "RuleRef",
    "TestFile",
    "TestReport",
    "TestResult",
    "discover",
    "run_tests",
    "run_tests_async",
]

UNKNOWN_RULE = "PT001"
NO_TESTS = "PT002"
MISMATCH = "PT003"
RUN_ERROR = "PT004"
NOT_RUN = "PT005"

DEFAULT_RULE = "default"
"""What `expect.rule` names when a pack's `default:` decided."""

EXPECT_FIELDS = (
    "decision",
    "rule",
    "stage",
    "reason",
    "reason_contains",
    "post",
    "value",
    "content",
    "feedback_contains",
    "rewrites",
)
"""Every expectation a test can state, in the order they are compared."""

# Expectations about post-execute: they mean nothing without a recorded result.
_NEEDS_RESULT = ("post", "value", "content", "feedback_contains", "rewrites")
_SUMMARY = "no test was run"
_TESTS_KEY = "tests"


class _Missing:
    """Marks a key absent on one side of a comparison."""

    def __repr__(self) -> str:
        return "<missing>"


_MISSING = _Missing()


# -- the test files -----------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class PolicyTest:
    """One test: a call, an optional recorded result, the expectations, and where it is written."""

    __test__: ClassVar[bool] = False

    name: str
    description: str
    tool: str
    arguments: Mapping[str, Any]
    agent: str
    call_id: str
    result: Mapping[str, Any] | None
    expect: Mapping[str, Any]
    file: str
    index: int
    location: Location
    doc: SourceDoc = field(repr=False)
    cwd: str | None = None
    # A sequence: its steps, each a test of one call in the sequence's session (its fields above are
    # its first step's); `at` is where a step is written inside its test (("steps", j)).
    steps: tuple[PolicyTest, ...] = ()
    at: tuple[str | int, ...] = ()

    def where(self, *path: str | int) -> Location:
        """The location of a part of this test (e.g. where("expect", "rule"))."""
        return self.doc.locate((_TESTS_KEY, self.index, *self.at, *path))


@dataclass(frozen=True, eq=False)
class TestFile:
    """A loaded, schema-checked test file of one pack."""

    __test__: ClassVar[bool] = False

    path: str
    pack: str
    tests: tuple[PolicyTest, ...]


def discover(packs: Iterable[Pack]) -> list[TestFile]:
    """Load every test file the packs' manifests list; raise PackLoadError with every problem."""
    sink = ProblemSink()
    files: list[TestFile] = []
    for pack in packs:
        for path in _test_paths(pack, sink):
            loaded = _load_file(path, pack.name, sink)
            if loaded is not None:
                files.append(loaded)
    sink.raise_if_errors(_SUMMARY)
    return files


def _manifest_doc(pack: Pack) -> SourceDoc | None:
    """The pack's manifest again, with marks, to locate problems about its `tests:`."""
    return load_yaml_file(pack.path / MANIFEST, ProblemSink(), filename=str(pack.path / MANIFEST))


def _test_paths(pack: Pack, sink: ProblemSink) -> list[Path]:
    """The files matched by the manifest's `tests:` globs, in glob order, each once."""
    found: list[Path] = []
    seen: set[Path] = set()
    for i, pattern in enumerate(pack.tests):
        pure = PurePosixPath(pattern.replace("\\", "/"))
        if not pattern.strip() or pure.is_absolute() or ".." in pure.parts or re.match(r"^[A-Za-z]:", pattern):
            _manifest_problem(pack, i, f"test glob {pattern!r} must be relative to the pack folder, without '..'", sink)
            continue
        try:
            matches = sorted(pack.path.glob(pure.as_posix()))
        except (ValueError, IndexError, NotImplementedError) as error:
            why = str(error) or type(error).__name__
            _manifest_problem(pack, i, f"test glob {pattern!r} is not a usable glob ({why})", sink)
            continue
        for path in matches:
            key = path.resolve()
            if path.is_file() and key not in seen:
                seen.add(key)
                found.append(path)
    return found


def _manifest_problem(pack: Pack, index: int, message: str, sink: ProblemSink) -> None:
    """A PE402 at the manifest's `tests[index]`."""
    hint = "write it like tests/*.yaml"
    manifest = _manifest_doc(pack)
    if manifest is not None:
        sink.add(manifest.problem("PE402", message, (_TESTS_KEY, index), hint=hint))
    else:  # pragma: no cover - the manifest loaded a moment ago
        sink.add(Problem("PE402", message, Location.start_of(str(pack.path / MANIFEST)), hint=hint))


def _load_file(path: Path, pack: str, sink: ProblemSink) -> TestFile | None:
    display = str(path)
    doc = load_yaml_file(path, sink, filename=display)
    if doc is None:
        return None
    problems = schema_problems(doc, doc.data, schema("tests"), (), None)
    if problems:
        sink.extend(problems)
        return None
    before = sink.error_count()
    tests: list[PolicyTest] = []
    names: dict[str, Location] = {}
    for i, raw in enumerate(doc.data[_TESTS_KEY]):
        name = raw["name"]
        at = (_TESTS_KEY, i)
        if name in names:
            sink.add(
                doc.problem(
                    "PE201",
                    f"{_TESTS_KEY}[{i}].name: test name {name!r} is already used at line {names[name].line}",
                    (*at, "name"),
                    hint="give every test of a file its own name, so reports can tell them apart",
                )
            )
        names.setdefault(name, doc.locate(at))
        location = doc.locate(at)
        if "steps" in raw:
            steps = tuple(
                _test_of(doc, step, f"{name} step {j + 1}", i, ("steps", j), display, location, sink)
                for j, step in enumerate(raw["steps"])
            )
            first = steps[0]
            tests.append(
                PolicyTest(
                    name=name,
                    description=raw.get("description", ""),
                    tool=first.tool,
                    arguments=first.arguments,
                    agent=first.agent,
                    call_id=first.call_id,
                    cwd=first.cwd,
                    result=first.result,
                    expect={},
                    file=display,
                    index=i,
                    location=location,
                    doc=doc,
                    steps=steps,
                )
            )
            continue
        test = _test_of(doc, raw, name, i, (), display, location, sink)
        tests.append(replace(test, description=raw.get("description", "")))
    if sink.error_count() > before:
        return None
    return TestFile(display, pack, tuple(tests))


def _test_of(
    doc: SourceDoc,
    raw: Mapping[str, Any],
    name: str,
    index: int,
    at: tuple[str | int, ...],
    display: str,
    location: Location,
    sink: ProblemSink,
) -> PolicyTest:
    """One call and its expectations: a test, or a step of a sequence (`at` inside its test)."""
    expect = raw["expect"]
    where = (_TESTS_KEY, index, *at)
    label = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in where[1:])  # [0] or [0].steps[1]
    if "result" not in raw:
        for key in _NEEDS_RESULT:
            if key in expect:
                sink.add(
                    doc.problem(
                        "PE203",
                        f"{_TESTS_KEY}{label}.expect.{key}: needs a recorded `result:` to compare against",
                        (*where, "expect", key),
                        key=True,
                        hint=f"add `result: {{value: ...}}` to the {'step' if at else 'test'}, or remove this "
                        "expectation",
                    )
                )
    call = raw["call"]
    return PolicyTest(
        name=name,
        description="",
        tool=call["name"],
        arguments=call.get("arguments") or {},
        agent=call.get("agent", "agent"),
        call_id=call.get("call_id", f"policytest:{name}"),
        cwd=call.get("cwd"),
        result=raw.get("result"),
        expect=expect,
        file=display,
        index=index,
        location=doc.locate(where) if at else location,
        doc=doc,
        at=at,
    )


# -- results and the report ---------------------------------------------------------------------


@dataclass(frozen=True)
class Failure:
    """Why a test (or the run) failed: a PT code, a message, and where to look."""

    code: str
    message: str
    location: Location | None
    field: str | None = None

    def __str__(self) -> str:
        where = f"{self.location}: " if self.location is not None else ""
        return f"{where}{self.code} {self.message}"

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready record."""
        return {
            "code": self.code,
            "field": self.field,
            "message": self.message,
            "location": str(self.location) if self.location is not None else None,
        }


@dataclass(frozen=True)
class TestResult:
    """The outcome of one test: passed, failed (with every failure) or not run."""

    __test__: ClassVar[bool] = False

    name: str
    file: str
    line: int
    column: int
    pack: str
    passed: bool
    failures: tuple[Failure, ...] = ()
    duration: float = 0.0
    skipped: bool = False
    exercised: frozenset[str] = frozenset()
    actual: Mapping[str, Any] | None = None

    @property
    def messages(self) -> tuple[str, ...]:
        """Every failure as `file:line:column: CODE message`."""
        return tuple(str(f) for f in self.failures)

    @property
    def status(self) -> str:
        """passed, failed or skipped."""
        return "passed" if self.passed else ("skipped" if self.skipped else "failed")

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready record."""
        return {
            "name": self.name,
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "pack": self.pack,
            "status": self.status,
            "passed": self.passed,
            "duration": self.duration,
            "failures": [f.to_json() for f in self.failures],
            "messages": list(self.messages),
            "exercised": sorted(self.exercised),
            "actual": dict(self.actual) if self.actual is not None else None,
        }


@dataclass(frozen=True)
class RuleRef:
    """A rule named in a coverage report: id, stage and where it is written."""

    id: str
    stage: str
    location: Location | None

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready record."""
        return {"id": self.id, "stage": self.stage, "location": str(self.location) if self.location else None}


@dataclass(frozen=True)
class PackSummary:
    """Per-pack totals and rule coverage."""

    name: str
    tests: int
    passed: int
    failed: int
    skipped: int
    exercised: tuple[RuleRef, ...]
    unexercised: tuple[RuleRef, ...]

    @property
    def rules(self) -> int:
        """How many rules the pack has."""
        return len(self.exercised) + len(self.unexercised)

    @property
    def coverage(self) -> float:
        """Percent of the pack's rules exercised by some test (100 for a pack without rules)."""
        return _coverage(len(self.exercised), self.rules)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready record."""
        return {
            "name": self.name,
            "tests": self.tests,
            "passed": self.passed,
            "failed": self.failed,
            "skipped": self.skipped,
            "rules": self.rules,
            "coverage": self.coverage,
            "exercised": [r.to_json() for r in self.exercised],
            "unexercised": [r.to_json() for r in self.unexercised],
        }


@dataclass(frozen=True)
class TestReport:
    """Every test result, run-level failures, and per-pack totals and coverage."""

    __test__: ClassVar[bool] = False

    results: tuple[TestResult, ...]
    packs: tuple[PackSummary, ...]
    failures: tuple[Failure, ...] = ()
    duration: float = 0.0
    ran: bool = True

    @property
    def total(self) -> int:
        """How many tests there are."""
        return len(self.results)

    @property
    def passed(self) -> int:
        """How many tests passed."""
        return sum(1 for r in self.results if r.passed)

    @property
    def failed(self) -> int:
        """How many tests failed."""
        return sum(1 for r in self.results if not r.passed and not r.skipped)

    @property
    def skipped(self) -> int:
        """How many tests were not run."""
        return sum(1 for r in self.results if r.skipped)

    @property
    def coverage(self) -> float:
        """Percent of all loaded rules exercised by some test."""
        return _coverage(sum(len(p.exercised) for p in self.packs), sum(p.rules for p in self.packs))

    def exercised(self) -> dict[str, list[str]]:
        """Exercised rule ids per pack."""
        return {p.name: [r.id for r in p.exercised] for p in self.packs}

    def unexercised(self) -> dict[str, list[str]]:
        """Rule ids per pack that no test exercised."""
        return {p.name: [r.id for r in p.unexercised] for p in self.packs}

    def below(self, threshold: float) -> list[PackSummary]:
        """The packs whose coverage is below `threshold` percent."""
        _check_threshold(threshold)
        return [p for p in self.packs if p.coverage < threshold]

    def ok(self, threshold: float | None = None) -> bool:
        """True only if every test ran and passed, no run-level failure, and every pack meets the threshold."""
        if threshold is not None and self.below(threshold):
            return False
        return self.ran and not self.failures and all(r.passed for r in self.results)


def _coverage(exercised: int, rules: int) -> float:
    """Percent of `rules` that some test exercised (100 when there are no rules)."""
    return 100.0 if not rules else 100.0 * exercised / rules


def _check_threshold(threshold: float) -> None:
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0 <= threshold <= 100:
        raise ValueError(f"coverage threshold must be a percentage from 0 to 100, got {threshold!r}")


# -- running ------------------------------------------------------------------------------------


def run_tests(
    layers: PolicyLayers, files: Sequence[TestFile], *, require_tests: bool = False, require_tool: bool = False
) -> TestReport:
    """Run every test against the installed layers (use run_tests_async inside an event loop)."""
    return asyncio.run(run_tests_async(layers, files, require_tests=require_tests, require_tool=require_tool))


async def run_tests_async(
    layers: PolicyLayers, files: Sequence[TestFile], *, require_tests: bool = False, require_tool: bool = False
) -> TestReport:
    """Check rule ids first (PT001 stops the run), then run each test through explain() (require_tool: see _run_one)."""
    started = time.perf_counter()
    rules = {rule.id: rule for pack in layers.packs for rule in pack.rules}
    run_failures = _missing_tests(layers.packs, files) if require_tests else []
    static = {id(t): _unknown_rules(t, rules) for f in files for t in f.tests}
    results: list[TestResult] = []
    exercised: set[str] = set()
    stopped = any(static.values())
    if stopped:
        count = sum(1 for v in static.values() if v)
        for test_file in files:
            for test in test_file.tests:
                failures = static[id(test)]
                if failures:
                    results.append(_result(test, test_file.pack, False, tuple(failures)))
                else:
                    note = Failure(
                        NOT_RUN,
                        f"not run: {count} test{'' if count == 1 else 's'} name a rule no loaded pack has (PT001); "
                        "fix them and run again",
                        test.location,
                    )
                    results.append(_result(test, test_file.pack, False, (note,), skipped=True))
    else:
        for test_file in files:
            for test in test_file.tests:
                result = await _run_one(layers, test, test_file.pack, require_tool)
                exercised |= result.exercised
                results.append(result)
    summaries = tuple(_summary(pack, results, exercised) for pack in layers.packs)
    return TestReport(tuple(results), summaries, tuple(run_failures), time.perf_counter() - started, not stopped)


def _result(
    test: PolicyTest,
    pack: str,
    passed: bool,
    failures: tuple[Failure, ...],
    *,
    skipped: bool = False,
    duration: float = 0.0,
    exercised: frozenset[str] = frozenset(),
    actual: Mapping[str, Any] | None = None,
) -> TestResult:
    loc = test.location
    return TestResult(
        test.name, test.file, loc.line, loc.column, pack, passed, failures, duration, skipped, exercised, actual
    )


def _unknown_rules(test: PolicyTest, rules: Mapping[str, Rule]) -> list[Failure]:
    """PT001 for every rule id in expect.rule or expect.rewrites (of every step) that no loaded pack has."""
    if test.steps:
        return [failure for step in test.steps for failure in _unknown_rules(step, rules)]
    named: list[tuple[str, tuple[str | int, ...]]] = []
    rule = test.expect.get("rule")
    if isinstance(rule, str) and rule != DEFAULT_RULE:
        named.append((rule, ("expect", "rule")))
    for i, rewrite in enumerate(test.expect.get("rewrites") or ()):
        named.append((rewrite, ("expect", "rewrites", i)))
    failures = []
    for rule_id, path in named:
        if rule_id in rules:
            continue
        close = difflib.get_close_matches(rule_id, list(rules), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        label = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
        failures.append(
            Failure(
                UNKNOWN_RULE,
                f"{label}: no loaded pack has a rule {rule_id!r}{hint} "
                "(a misspelt rule id would test nothing, so the run fails before any test runs)",
                test.where(*path),
                path[1] if len(path) > 1 and isinstance(path[1], str) else None,
            )
        )
    return failures


def _missing_tests(packs: Sequence[Pack], files: Sequence[TestFile]) -> list[Failure]:
    """PT002 for every pack that has no test in `files`."""
    failures = []
    for pack in packs:
        count = sum(len(f.tests) for f in files if f.pack == pack.name)
        if count:
            continue
        manifest = _manifest_doc(pack)
        display = str(pack.path / MANIFEST)
        if manifest is not None and isinstance(manifest.data, dict) and _TESTS_KEY in manifest.data:
            where = manifest.locate((_TESTS_KEY,))
            why = f"its `tests:` globs {list(pack.tests)} matched no test"
        else:
            where = manifest.locate(()) if manifest is not None else Location.start_of(display)
            why = "its manifest lists no `tests:`"
        failures.append(Failure(NO_TESTS, f"pack {pack.name} has no policy tests: {why}", where))
    return failures


async def _run_one(layers: PolicyLayers, test: PolicyTest, pack: str, require_tool: bool) -> TestResult:
    if test.steps:
        return await _run_sequence(layers, test, pack, require_tool)
    started = time.perf_counter()
    try:
        evaluation, exercised = await _decide(layers, test, require_tool)
    except Exception as error:
        failure = Failure(RUN_ERROR, f"the call could not be evaluated: {type(error).__name__}: {error}", test.location)
        return _result(test, pack, False, (failure,), duration=time.perf_counter() - started)
    failures = tuple(_compare(test, evaluation))
    return _result(
        test,
        pack,
        not failures,
        failures,
        duration=time.perf_counter() - started,
        exercised=exercised,
        actual=_actual(evaluation),
    )


async def _decide(
    layers: PolicyLayers, test: PolicyTest, require_tool: bool, session_id: str | None = None
) -> tuple[Evaluation, frozenset[str]]:
    """One call of a test (or of a sequence's step) decided, with the rules it exercised."""
    if require_tool and test.tool not in layers.registry.tools:
        # The registry's tools are the catalog: a tool missing from it is `invalid` at `lookup`, as a
        # registry of those tools (and a dry-run against the catalog) answers; no rule is exercised.
        return await evaluate(layers.registry, test.tool, test.arguments, require_tool=True), frozenset()
    explanation = await explain(
        layers,
        test.tool,
        test.arguments,
        agent=test.agent,
        call_id=test.call_id,
        result=test.result,
        cwd=test.cwd,
        session_id=session_id,
    )
    return explanation.evaluation, frozenset(explanation.exercised())


_SESSIONS = itertools.count(1)


async def _run_sequence(layers: PolicyLayers, test: PolicyTest, pack: str, require_tool: bool) -> TestResult:
    """A sequence: its steps decided in order in a session of their own, every step's expectations compared."""
    started = time.perf_counter()
    # Fresh for every run: a sequence never reads what another test (or an earlier run) left in the store.
    session_id = f"policytest:{secrets.token_hex(6)}:{next(_SESSIONS)}:{test.name}"
    failures: list[Failure] = []
    exercised: set[str] = set()
    steps: list[dict[str, Any]] = []
    for number, step in enumerate(test.steps, 1):
        try:
            evaluation, step_exercised = await _decide(layers, step, require_tool, session_id)
            exercised |= step_exercised
            store = layers.registry.sessions
            held = sorted(store.load(session_id).labels) if store is not None else []
        except Exception as error:
            message = f"step {number}: the call could not be evaluated: {type(error).__name__}: {error}"
            failures.append(Failure(RUN_ERROR, message, step.location))
            break
        failures.extend(_compare(step, evaluation))
        expected = step.expect.get("labels")
        if expected is not None and sorted(set(expected)) != held:
            failures.append(
                Failure(
                    MISMATCH,
                    f"labels: expected the session to hold {_show(sorted(set(expected)))} after step {number}, "
                    f"got {_show(held)}" + _context("decision", _actual(evaluation)),
                    step.where("expect", "labels"),
                    "labels",
                )
            )
        steps.append(_actual(evaluation) | {"labels": held})
    return _result(
        test,
        pack,
        not failures,
        tuple(failures),
        duration=time.perf_counter() - started,
        exercised=frozenset(exercised),
        actual={"steps": steps},
    )


def _rule_name(source: Source | None) -> str | None:
    if source is None:
        return None
    return DEFAULT_RULE if source.kind is SourceKind.DEFAULT else source.name


def _actual(evaluation: Evaluation) -> dict[str, Any]:
    """What the policy did, in the vocabulary of the expectations."""
    return {
        "decision": evaluation.decision.value,
        "rule": _rule_name(evaluation.source),
        "stage": evaluation.stage.value if evaluation.stage is not None else None,
        "reason": evaluation.reason,
        "post": evaluation.post.value if evaluation.post is not None else None,
        "value": thaw(evaluation.value),
        "content": thaw(evaluation.content),
        "feedback": evaluation.feedback,
        "rewrites": [s.name for s in evaluation.rewrites],
    }


def _compare(test: PolicyTest, evaluation: Evaluation) -> list[Failure]:
    """One PT003 failure per expectation that does not hold."""
    actual = _actual(evaluation)
    failures: list[Failure] = []
    for key in EXPECT_FIELDS:
        if key not in test.expect:
            continue
        expected = test.expect[key]
        if key in ("reason_contains", "feedback_contains"):
            subject = "reason" if key == "reason_contains" else "feedback"
            got = actual[subject]
            if isinstance(got, str) and expected in got:
                continue
            message = f"{key}: expected a {subject} containing {_show(expected)}, got {_show(got)}"
        else:
            got = actual[key]
            difference = _difference(expected, got, key)
            if difference is None:
                continue
            message = f"{key}: expected {_show_typed(expected, got)}, got {_show_typed(got, expected)}"
            path, inner_expected, inner_got = difference
            if path != key:
                message += (
                    f" (first difference at {path}: expected {_show_typed(inner_expected, inner_got)}, "
                    f"got {_show_typed(inner_got, inner_expected)})"
                )
        message += _context(key, actual)
        failures.append(Failure(MISMATCH, message, test.where("expect", key), key))
    return failures


def _context(key: str, actual: Mapping[str, Any]) -> str:
    """What else the policy did, so a mismatch can be understood without a debugger."""
    if key in ("decision", "rule", "stage"):
        reason = f": {actual['reason']}" if actual["reason"] else ""
        return f" [decided by {actual['rule'] or 'nothing'} at {actual['stage']}{reason}]"
    if key in _NEEDS_RESULT and actual["post"] is None:
        return f" [post-execute did not run: the call's decision was {actual['decision']}]"
    return ""


_KINDS: TypeNames = (
    (type(None), "null"),
    (bool, "boolean"),
    (int, "integer"),
    (float, "float"),
    (str, "string"),
    (Mapping, "object"),
    ((list, tuple), "array"),
)


def _kind(value: Any) -> str:
    """The JSON type of a value; integers and floats are told apart, as are booleans."""
    return "missing" if value is _MISSING else type_name(value, _KINDS)


def _difference(expected: Any, actual: Any, path: str) -> tuple[str, Any, Any] | None:
    """The first place where two values differ in type or value (None when they are the same)."""
    kind = _kind(expected)
    if kind != _kind(actual):
        return path, expected, actual
    if kind == "object":
        for key in [*expected, *(k for k in actual if k not in expected)]:
            inner = _difference(expected.get(key, _MISSING), actual.get(key, _MISSING), f"{path}.{key}")
            if inner is not None:
                return inner
        return None
    if kind == "array":
        if len(expected) != len(actual):
            return path, expected, actual
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            inner = _difference(e, a, f"{path}[{i}]")
            if inner is not None:
                return inner
        return None
    if kind == "float" and math.isnan(expected) and math.isnan(actual):
        return None
    return None if expected == actual else (path, expected, actual)


def _show(value: Any, limit: int = 300) -> str:
    """A value as JSON, cut to `limit` characters."""
    if value is _MISSING:
        return "nothing (no such key)"
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except ValueError:  # circular (cannot come from YAML or a frozen value, but never crash a report)
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _show_typed(value: Any, other: Any) -> str:
    """A value as JSON, with its type when the other side has another type."""
    shown = _show(value)
    kind, other_kind = _kind(value), _kind(other)
    if kind != other_kind and not {kind, other_kind} & {"missing", "null"}:
        shown += f" ({kind})"
    return shown


def _summary(pack: Pack, results: Sequence[TestResult], exercised: set[str]) -> PackSummary:
    own = [r for r in results if r.pack == pack.name]
    refs = [RuleRef(r.id, r.stage.value, r.location) for r in pack.rules]
    return PackSummary(
        name=pack.name,
        tests=len(own),
        passed=sum(1 for r in own if r.passed),
        failed=sum(1 for r in own if not r.passed and not r.skipped),
        skipped=sum(1 for r in own if r.skipped),
        exercised=tuple(r for r in refs if r.id in exercised),
        unexercised=tuple(r for r in refs if r.id not in exercised),
    )
