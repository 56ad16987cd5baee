"""A decision-log record need not scan arguments the decision's secret reader found nothing in.

secret_reader.found_secrets remembers the last few frozen arguments it found clean; decision_record
marks a record whose arguments have the very same content, and redact_record then skips them. The
contract: a marked record is redacted exactly as an unmarked copy is, on every corpus call, and
only content equal leaf for leaf (types, key order) is ever taken for clean.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from policyengine import freeze
from policyengine.arguments import secret_reader
from policyengine.enforce.evaluate import Evaluation, Verdict
from policyengine.service.decision_log import decision_record, redact_record
from support import load_yaml

ROOT = Path(__file__).resolve().parent.parent


def _corpus() -> list[dict[str, Any]]:
    """The arguments of every ninth adversarial case, red-team call and BFCL call (~1,800: 3 s)."""
    found: list[Any] = []
    for file in sorted((ROOT / "tests" / "adversarial").glob("*.yaml")):
        data = load_yaml(file)
        for case in data.get("cases", []) if isinstance(data, dict) else []:
            found.append((case.get("call") or {}).get("arguments"))
    for file in [*sorted((ROOT / "benchmarks" / "redteam").glob("*.jsonl")), ROOT / "examples" / "bfcl-calls.jsonl"]:
        lines = [line for line in file.read_text(encoding="utf-8").split("\n") if line.strip()]
        for line in lines:
            row = json.loads(line)
            found.append(row.get("call", row).get("arguments"))
    return [arguments for arguments in found if isinstance(arguments, dict) and arguments][::9]


ALLOW = Evaluation(Verdict.ALLOW, None, None, None)


def test_a_record_of_arguments_read_clean_is_redacted_as_a_scanned_copy() -> None:
    corpus = _corpus()
    assert len(corpus) > 1_500
    marked = 0
    for arguments in corpus:
        secret_reader.found_secrets(freeze(arguments), path="arguments")  # the decision's secrets(@)
        record = decision_record(ALLOW, name="tool", arguments=arguments, timestamp=0.0)
        marked += type(record) is not dict
        assert redact_record(record) == redact_record(dict(record)), arguments
    # Both kinds are met: arguments with credentials (never marked) and clean ones (marked).
    assert 1_000 < marked < len(corpus) - 200, (marked, len(corpus))


def test_arguments_with_a_credential_are_never_taken_for_clean() -> None:
    secret_reader.found_secrets(freeze({"note": "hello"}))
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    assert secret_reader.found_secrets(freeze({"note": token}))
    assert not secret_reader.known_clean({"note": token})
    assert secret_reader.known_clean({"note": "hello"})
    record = decision_record(ALLOW, name="tool", arguments={"note": token}, timestamp=0.0)
    assert type(record) is dict and redact_record(record)["redacted"] is True


def test_only_the_same_content_is_clean_types_and_key_order_included() -> None:
    held = {"a": 1, "b": [True, "x", 2.5], "c": {"d": None}}
    secret_reader.found_secrets(freeze(held))
    assert secret_reader.known_clean(json.loads(json.dumps(held)))
    for other in (
        {"a": True, "b": [True, "x", 2.5], "c": {"d": None}},  # 1 and true are equal in Python, not in JSON
        {"a": 1.0, "b": [True, "x", 2.5], "c": {"d": None}},
        {"b": [True, "x", 2.5], "a": 1, "c": {"d": None}},  # key order: the reader reads neighbours
        {"a": 1, "b": [1, "x", 2.5], "c": {"d": None}},
        {"a": 1, "b": [True, "x", 2.5], "c": {"d": None}, "e": 0},
        {"a": 1, "b": [True, "x"], "c": {"d": None}},
        {"a": 1, "b": (True, "x", 2.5), "c": {"d": None}},
        {"a": 1, "b": [True, "x", 2.5], "c": {"d": "None"}},
    ):
        assert not secret_reader.known_clean(other), other


def test_only_frozen_arguments_are_remembered() -> None:
    plain = {"unique-key-4411": "hello"}
    secret_reader.found_secrets(plain)  # a plain dict may change after it was read
    assert not secret_reader.known_clean({"unique-key-4411": "hello"})


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.text(max_size=6),
        st.recursive(
            st.none()
            | st.booleans()
            | st.integers()
            | st.floats(allow_nan=False, allow_infinity=False)
            | st.text(max_size=12),
            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
            max_leaves=8,
        ),
        min_size=1,
        max_size=4,
    )
)
def test_known_clean_is_found_secrets_finding_nothing(arguments: dict[str, Any]) -> None:
    clean = not secret_reader.found_secrets(freeze(arguments))
    # Just read: remembered when clean; never taken for clean otherwise (the same content reads the same).
    assert secret_reader.known_clean(arguments) is clean
    if clean:
        assert redact_record({"arguments": arguments}) == {"arguments": arguments}


def test_arguments_put_in_a_marked_record_afterwards_are_scanned() -> None:
    secret_reader.found_secrets(freeze({"note": "hello"}))
    record = decision_record(ALLOW, name="tool", arguments={"note": "hello"}, timestamp=0.0)
    assert type(record) is not dict
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    record["arguments"] = {"note": token}
    assert redact_record(record)["arguments"] == {"note": "[REDACTED]"}
