"""The explain verb: stage by stage, every rule considered for one call and what decided.

A call that carries a `session_id` is explained in that session: read from `--session-store`
(the store a front end writes, never written to by explain: the call is decided on a copy), else
an empty one. `--trace` then shows the session document the rules saw and the labels the call's
label rules set.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from policyengine.cli.common import EXIT_OK, PACK_HELP, install_layers, resolve_pack
from policyengine.cli.report import paint, table
from policyengine.errors import UsageError

if TYPE_CHECKING:  # the verb imports explain when it runs (start-up time)
    from policyengine.enforce.explain import Considered

NAME = "explain"
HELP = "explain the decision for one call"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The explain verb's options."""
    parser.add_argument("--pack", action="append", required=True, type=resolve_pack, metavar="PACK", help=PACK_HELP)
    parser.add_argument("call", metavar="CALL", help="a JSON file or inline JSON: {name, arguments, result?}")
    parser.add_argument("--tools", metavar="FILE", help="tool catalog, to validate arguments (default: the packs')")
    parser.add_argument("--format", choices=["text", "json"], default="text")
    parser.add_argument(
        "--trace",
        action="store_true",
        help="show every sub-expression's value of each condition, and why it failed; the session the rules saw",
    )
    parser.add_argument(
        "--session-store",
        metavar="STORE",
        help="where the call's session (its `session_id`) is read: sqlite:PATH or redis://...; never written to "
        "(default: a new, empty session)",
    )


def run(args: argparse.Namespace, out: TextIO, err: TextIO, color: bool) -> int:
    """`explain`: stage by stage, every rule considered and what decided."""
    from policyengine.enforce.explain import explain

    call = _read_call(args.call)
    layers, catalog = _layers(args)
    result = call.get("result")
    explanation = asyncio.run(
        explain(
            layers,
            call["name"],
            call.get("arguments", {}),
            agent=call.get("agent", "agent"),
            call_id=call.get("call_id"),
            result=result if isinstance(result, dict) else None,
            cwd=call["cwd"] if isinstance(call.get("cwd"), str) else None,
            trace=args.trace,
            # With a catalog, a tool it lacks is invalid at lookup, as in test and dry-run.
            require_tool=catalog is not None,
            session_id=call.get("session_id"),
            now=call.get("time"),
        )
    )
    ev = explanation.evaluation
    if args.format == "json":
        print(
            json.dumps(
                {
                    "call": {"name": call["name"], "arguments": call.get("arguments", {})},
                    "decision": ev.decision.value,
                    "stage": ev.stage.value if ev.stage else None,
                    "rule": ev.source.rule_id if ev.source else None,
                    "default": bool(ev.source and not ev.source.rule_id),
                    "pack": ev.source.pack if ev.source else None,
                    "digest": ev.source.digest if ev.source else None,
                    "reason": ev.reason,
                    "considered": [c.to_json() for c in explanation.considered],
                    "post": ev.post.value if ev.post else None,
                    "value": ev.value,
                    "rewrites": [s.name for s in ev.rewrites],
                    "feedback": ev.feedback,
                    "session_id": call.get("session_id"),
                    "session": _session_json(explanation.session),
                    "labelled": [{"label": label, "rule": rule} for label, rule in explanation.labelled()],
                    "monitored": [hit.to_json() for hit in ev.monitored],
                },
                indent=2,
                default=str,
            ),
            file=out,
        )
        return EXIT_OK
    rows = [
        [
            c.stage.value,
            c.rule,
            c.pack or "",
            ("error: " + c.error if c.error else ("matched" if c.matched else "no"))
            + (" (monitor)" if c.mode.value == "monitor" else ""),
            c.location or "",
        ]
        for c in explanation.considered
    ]
    print(f"call {call['name']} {json.dumps(call.get('arguments', {}))}", file=out)
    print(
        table(rows, ["stage", "rule", "pack", "condition", "where"], color) if rows else "no rule applies to this tool",
        file=out,
    )
    who = "-" if ev.source is None else ev.source.name if ev.source.kind.value == "default" else f"{ev.source}"
    colour = {"allow": "32;1", "ask": "33;1"}.get(ev.decision.value, "31;1")
    print(
        f"\ndecision: {paint(ev.decision.value, colour, color)} by {who}"
        + (f" at {ev.stage.value}" if ev.stage else "")
        + (f"\nreason: {ev.reason}" if ev.reason else ""),
        file=out,
    )
    if ev.post is not None:
        print(
            f"post-execute: {ev.post.value}"
            + (f" by {', '.join(s.name for s in ev.rewrites)}" if ev.rewrites else "")
            + (f"\nfeedback: {ev.feedback}" if ev.feedback else ""),
            file=out,
        )
        if ev.value is not None:
            print(f"value: {json.dumps(ev.value, default=str)}", file=out)
    if ev.monitored:
        print(paint("monitor mode (nothing enforced):", "33", color), file=out)
        for hit in ev.monitored:
            print(
                f"  {hit.rule} ({hit.stage.value}) would {hit.would.value}" + (f": {hit.reason}" if hit.reason else ""),
                file=out,
            )
    labelled = explanation.labelled()
    if labelled:
        print("labels set: " + ", ".join(f"{label} (by {rule})" for label, rule in labelled), file=out)
    if args.trace and explanation.session is not None and call.get("session_id"):
        print(f"\nsession {call['session_id']} as the rules saw it:", file=out)
        print(json.dumps(_session_json(explanation.session), indent=2, default=str), file=out)
    if args.trace and explanation.considered:
        _print_traces(explanation.considered, out, color)
    return EXIT_OK


def _session_json(session: Any) -> Any:
    """The session document for a report: its fingerprints counted, never shown, and no key id."""
    if session is None:
        return None
    out = {k: v for k, v in session.items() if k not in ("secrets", "key")}
    out["secrets"] = f"{len(session.get('secrets') or ())} fingerprint(s)"
    return out


def _layers(args: argparse.Namespace) -> tuple[Any, Any]:
    """The packs on a registry (as install_layers builds it) whose sessions are read from --session-store, if any."""
    if not args.session_store:
        return install_layers(args.pack, args.tools)
    from policyengine.enforce.install import PolicyLayers
    from policyengine.packs.loader import catalog_for
    from policyengine.runtime.registry import Registry
    from policyengine.sessions.stores import open_store

    layers = PolicyLayers.install(Registry(sessions=_ReadOnly(open_store(args.session_store))), args.pack)
    catalog = catalog_for(layers.packs, args.tools)
    for definition in (catalog or {}).values():
        layers.registry.register(definition)
    return layers, catalog


class _ReadOnly:
    """A store read once per session and written never: the explained call is decided on a copy."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.copies: dict[str, Any] = {}

    @property
    def key(self) -> bytes:
        """The store's fingerprint key (so the secrets it holds are found again)."""
        return self.store.key  # type: ignore[no-any-return]

    def load(self, session_id: str) -> Any:
        """A copy of the session as the store holds it."""
        import copy

        if session_id not in self.copies:
            self.copies[session_id] = copy.deepcopy(self.store.load(session_id))
        return self.copies[session_id]

    def append(self, session_id: str, entry: Any) -> None:
        """Fold the entry into the copy only."""
        self.load(session_id).add(entry)


def _print_traces(considered: Sequence[Considered], out: TextIO, color: bool) -> None:
    """Under `--trace`: each rule's condition as a tree of sub-expression values, and why it did not match."""
    print("\ntrace:", file=out)
    for c in considered:
        status = f"error: {c.error}" if c.error else "matched" if c.matched else "no match"
        painted = paint(status, "32" if c.matched else "31", color)
        if c.trace is None:
            missing = "not traced: its document could not be rebuilt" if c.condition else "no condition"
            print(f"{c.stage.value} {c.rule}: {painted} ({missing})", file=out)
            continue
        print(f"{c.stage.value} {c.rule}: {painted}", file=out)
        for line in c.trace.lines():
            print(f"  {line}", file=out)
        why = c.trace.why()
        if why:
            print(f"  {paint('why:', '1', color)} {why}", file=out)
        if not c.trace_agrees:
            print("  (the trace ran on a document rebuilt for it and ended differently from the evaluation)", file=out)


def _read_call(text: str) -> dict[str, Any]:
    """The call given on the command line: inline JSON, or the path of a file holding it."""
    source = text
    if not text.lstrip().startswith("{"):
        try:
            source = Path(text).read_text("utf-8")
        except UnicodeDecodeError as error:
            raise UsageError(f"call file {text} is not UTF-8 (byte {error.start})") from None
        except OSError as error:
            raise UsageError(
                f"cannot read call file {text}: {error.strerror or error}",
                hint='pass a JSON file or inline JSON such as \'{"name": "greet", "arguments": {}}\'',
            ) from None
    try:
        call = json.loads(source)
    except json.JSONDecodeError as error:
        raise UsageError(f"call is not valid JSON: {error.msg} at line {error.lineno} column {error.colno}") from None
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        raise UsageError("a call is a JSON object with a string `name` and an object `arguments`")
    if not isinstance(call.get("arguments", {}), dict):
        raise UsageError("`arguments` must be a JSON object")
    if "session_id" in call and not (isinstance(call["session_id"], str) and call["session_id"]):
        raise UsageError("`session_id` must be a non-empty string (the session the call belongs to)")
    moment = call.get("time")
    if moment is not None and (isinstance(moment, bool) or not isinstance(moment, int | float)):
        raise UsageError("`time` must be a number: when the call is decided, in seconds since the epoch")
    return call
