"""The synchronous Decider decides exactly as the packs installed on a registry do."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from policyengine import PolicyLayers, Registry, evaluate, load_packs
from policyengine.decider import Decider
from policyengine.decisions import Allow, Ask, Deny

ROOT = Path(__file__).resolve().parents[1]
CALLS = ROOT / "examples" / "bfcl-calls.jsonl"
LAYERINGS = [
    ["policies/bfcl"],
    ["policies/baseline"],
    ["policies/baseline", "policies/bfcl"],
    ["policies/bfcl", "policies/baseline"],
]

KIND = {Allow: "allow", Deny: "deny", Ask: "ask"}


def _calls() -> list[dict]:
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
