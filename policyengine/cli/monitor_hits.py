"""Monitor hits for people: what rules in monitor mode would have done, per rule ("would have denied 12 calls")."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from policyengine.cli.report import table

# A monitor hit's `would` (values/results.Would), as a verb in the past.
_PAST = {
    "allow": "allowed",
    "deny": "denied",
    "ask": "asked about",
    "block": "blocked the result of",
    "rewrite": "rewritten the result of",
    "label": "labelled the session of",
    "wrap": "wrapped",
}

Key = tuple[str, str, str]  # rule, stage, would


def would_have(would: str, calls: int) -> str:
    """`would have denied 12 calls`."""
    return f"would have {_PAST.get(would, would)} {calls:,} call{'' if calls == 1 else 's'}"


def count_hits(records: Iterable[Mapping[str, Any]]) -> Counter[Key]:
    """Calls per (rule, stage, would) in decision-log or audit records.

    A record of a review (it holds `post`, and its call was decided and recorded on its own: serve's
    /v1/review, the hook's PostToolUse) counts only its post-execute hits, so no call counts twice.
    """
    counts: Counter[Key] = Counter()
    for record in records:
        hits = record.get("monitored")
        if not isinstance(hits, list):
            continue
        review = record.get("post") is not None
        seen: set[Key] = set()
        for hit in hits:
            if not isinstance(hit, Mapping):
                continue
            key = (str(hit.get("rule")), str(hit.get("stage")), str(hit.get("would")))
            if key in seen or (review and key[1] != "post-execute"):
                continue
            seen.add(key)
            counts[key] += 1
    return counts


def hits_table(counts: Counter[Key] | list[dict[str, Any]], color: bool) -> str:
    """One row per rule in monitor mode that matched: `rule  stage  would have denied 12 calls`."""
    rows = (
        [[h["rule"], h["stage"], would_have(h["would"], h["calls"])] for h in counts]
        if isinstance(counts, list)
        else [[rule, stage, would_have(would, n)] for (rule, stage, would), n in counts.most_common()]
    )
    return table(rows, ["rules in monitor mode (nothing enforced)", "stage", "what they would have done"], color)
