"""The synchronous Decider decides exactly as the packs installed on a registry do."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from policyengine import PolicyLayers, Registry, evaluate, load_packs
from policyengine.enforce.decider import Decider
from policyengine.values.decisions import Allow, Ask, Deny

ROOT = Path(__file__).resolve().parents[1]
CALLS = ROOT / "examples" / "bfcl-calls.jsonl"
LAYERINGS = [
    ["policies/bfcl"],
    ["policies/baseline"],
    ["policies/baseline", "policies/bfcl"],
    ["policies/bfcl", "policies/baseline"],
]

KIND = {Allow: "allow", Deny: "deny", Ask: "ask"}


def _calls() -> list[dict[str, Any]]:
    calls = [json.loads(line) for line in CALLS.read_text().splitlines()]
    # Calls that the red lines and path rules see, which the benchmark corpus never exercises.
    calls += [
        {"name": "cat", "arguments": {"file_name": "/etc/passwd"}},
        {"name": "fs_read", "arguments": {"path": "a/../.ENV"}},
        {"name": "fs_write", "arguments": {"path": "x"}},
        {"name": "post_tweet", "arguments": {"content": "my password is hunter2"}},
        {"name": "shell", "arguments": {"command": "ls"}},
        {"name": "send_message", "arguments": {"receiver_id": "u", "message": "key AKIAABCDEFGHIJKLMNOP"}},
        {"name": "place_order", "arguments": {"price": "x", "amount": 3}},
    ]
    return calls


@pytest.mark.parametrize("folders", LAYERINGS, ids=lambda f: "+".join(Path(p).name for p in f))
def test_decider_matches_the_registry_on_every_call(folders: list[str]) -> None:
    folders = [str(ROOT / f) for f in folders]
    registry = Registry()
    PolicyLayers.install(registry, folders)
    decider = Decider(load_packs(folders))

    async def both() -> list[tuple[tuple[str, str | None, str | None], tuple[str, str | None, str | None]]]:
        pairs = []
        for call in _calls():
            ev = await evaluate(registry, call["name"], call["arguments"], call_id=call.get("call_id", ""))
            mine = decider.decide(call["name"], call["arguments"], call_id=call.get("call_id", ""))
            reason = mine.reason if isinstance(mine, (Deny, Ask)) else None
            pairs.append(
                (
                    (ev.decision.value, ev.rule, ev.reason),
                    (KIND[type(mine)], mine.source.name if mine.source else None, reason),
                )
            )
        return pairs

    pairs = asyncio.run(both())
    mismatches = [(i, a, b) for i, (a, b) in enumerate(pairs) if a != b]
    assert not mismatches, mismatches[:5]
    assert {a[0] for a, _b in pairs} >= {"allow", "deny"}


@pytest.mark.parametrize("folders", LAYERINGS, ids=lambda f: "+".join(Path(p).name for p in f))
def test_pack_fast_path_matches_the_waterfall_path(folders: list[str]) -> None:
    """evaluate() on packs alone (synchronous) answers as the waterfall does with a listener beside them."""
    folders = [str(ROOT / f) for f in folders]
    fast = Registry()
    PolicyLayers.install(fast, folders)
    slow = Registry()

    @slow.on_pre_execute(name="pass-through")
    async def pass_through(call, next):  # type: ignore[no-untyped-def]
        return await next()

    @slow.on_post_execute(name="pass-through-post")
    async def pass_through_post(call, result, next):  # type: ignore[no-untyped-def]
        return await next()

    PolicyLayers.install(slow, folders)
    card = {"credit_card_list": {"card_number": "4111 1111 1111 1111", "card_verification_value": 123}}
    results = [None, {"value": card}, {"value": {"note": "x" * 30_000}}, {"value": {"api_token": "s3cr3t-value"}}]

    async def both() -> list[tuple[object, object]]:
        pairs: list[tuple[object, object]] = []
        for i, call in enumerate(_calls()):
            result = results[i % len(results)]
            a = await evaluate(fast, call["name"], call["arguments"], call_id="c", result=result)
            b = await evaluate(slow, call["name"], call["arguments"], call_id="c", result=result)
            pairs.append(
                (
                    (a.decision, a.rule, a.reason, a.post, a.value, [s.name for s in a.rewrites], a.feedback),
                    (b.decision, b.rule, b.reason, b.post, b.value, [s.name for s in b.rewrites], b.feedback),
                )
            )
        return pairs

    pairs = asyncio.run(both())
    assert pairs, "no calls"
    mismatches = [(i, a, b) for i, (a, b) in enumerate(pairs) if a != b]
    assert not mismatches, mismatches[:3]
