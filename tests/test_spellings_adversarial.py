"""Every spelling of an adversarial case is decided no weaker than the case itself (issue 22).

The spelling mutator (policyengine/testing/spellings.py, docs/spellings.md) runs over each
`tests/adversarial/calls-*.yaml` case with the case's pack, cwd, inline catalog and recorded
result, as tests/test_adversarial.py decides it: a spelling's decision must not rank lower
(allow < ask < deny) and redacted output must stay redacted. One test per case file, so `-n auto`
spreads them; the draw is seeded and bounded (`K` per value, `BUDGET` per file). A weaker spelling
found in a case is a finding: that case is listed in `FINDINGS` and runs on its own as a strict
xfail, so the lead can route it and the suite notices when it is fixed.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from policyengine import PolicyLayers, Registry
from policyengine.adapters.claude_code import BUILTIN_CATALOG
from policyengine.cli.test import declared_roles
from policyengine.testing.spellings import (
    DEFAULT_MAX_PER_VALUE,
    Call,
    Finding,
    SpellingReport,
    Subject,
    check,
    layers_decider,
)
from policyengine.tools.catalog import load_catalog
from support import load_yaml

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(__file__).resolve().parent / "adversarial"
PACKS = {name: ROOT / "policies" / name for name in ("baseline", "bfcl", "claude-code")}

# Spellings drawn per value and kind (the CLI's default), the seed, and a bound per file (the
# largest file, calls-i-secrets, draws ~4,100).
K = DEFAULT_MAX_PER_VALUE
SEED = 0
BUDGET = 5_000

# Weaker spellings found, by class: each class names the cases (file stem:index) it was found in.
_FOUND: dict[str, tuple[str, ...]] = {
    "engine: a bracket glob in the word bash runs (`/bin/[r]m`, `/usr/bin/[s]udo`, `./[n]c`, `sudo /bin/[r]m`) "
    "runs that program, but the program is read as written, not as any program the glob may match": (
        "calls-commands:22",
        "calls-commands:23",
        "calls-program-operands:0",
        "calls-program-operands:6",
        "calls-program-operands:7",
        "calls-program-operands:12",
        "calls-program-operands:67",
        "calls-classes-b:6",
        "calls-e-p3-cc:39",
    ),
    "engine: commands(@) gives a word as written, so a pack's regex over a command reads a flag, subcommand "
    "or config key spelled as a brace (`/{MIR,x}`, which bash expands to it) or a bracket glob (`[r]ails`) as "
    "written; its path spellings (`/./MIR`, `x/../bearer.repo`, `manage.py.`) are other words, no bypass": (
        "calls-e-p3-cc:28",
        "calls-e-p3-cc:29",
        "calls-e-p3-cc:124",
        "calls-e-p3-cc:126",
        "calls-e-p3-cc:136",
        "calls-e-p3-cc:137",
        "calls-e-p3-cc:139",
    ),
    "engine: a path inside a command substitution (`$(echo x/../.env)`, `$(printf x/../.env)`, "
    "`$(cat x/../list.txt)`) is matched as written: its climb is not resolved": (
        "calls-allow-rules:71",
        "calls-shell-expansion:22",
        "calls-shell-expansion:23",
    ),
    "engine: a secret whose halves are sent in two arguments (`data`, `data_2`) is not joined: "
    "grouped card numbers and encoded AWS keys pass no-secrets-to-network": (
        "calls-d-baseline-bfcl:108",
        "calls-secrets:35",
        "calls-secrets:40",
        "calls-secrets:57",
        "calls-secrets:58",
        "calls-secrets-b:27",
        "calls-secrets-b:28",
        "calls-d-secrets:11",
        "calls-d-secrets:18",
        "calls-d-secrets:37",
        # Round six: a Caesar-shifted or Atbash token, or letters apart by a two-mark separator, in two halves.
        "calls-e-x3a-secrets:28",
        "calls-e-x3a-secrets:30",
    ),
    "engine: quoted-printable, '+'-joined character codes and lower-case base32 cut in two values are "
    "two runs that each decode to half a token (round seven): the halves are not glued before decoding": (
        *(f"calls-g-secrets:{n}" for n in (19, 20, 21, 65, 66, 67, 111, 112, 113)),
    ),
    "engine: a hex run glued to hex letters of the words around it ('...com2f70...2fbackups') decodes "
    "misaligned: the OCI pre-authenticated path inside passes no-credentials-in-posts": ("calls-d-secrets:6",),
    "engine: a bare 64-hex value is a wallet key only beside its wallet word (alone it reads as a "
    "SHA-256); the mutator encodes the value without the word, so the encoded value alone passes "
    "redact-secret-strings": ("calls-e-x3b-redact:26",),
    "engine, a known limit (docs/security.md: two levels of encoding are decoded): a third base64 "
    "layer over a token encoded twice passes no-secrets-to-network": ("calls-secrets:59",),
    "engine: a token split across the JSON values of a command is found only as written: the same "
    "text base64- or hex-encoded once passes no-secrets-to-network": ("calls-secrets:64",),
    "pack: ask-git-writes-outside-project reads git's output option as written (a regex over the "
    "command), so `cd /tmp && git format-patch -o patches` is not asked": ("calls-classes:143",),
    "engine: letters written apart (`A-K-I-A-...`, `g.h.p._...`) and then split across two arguments are not "
    "glued: the spaced-run view reads one value, the cross-value view wants a strong prefix whole": (
        "calls-secrets-round4:1",
        "calls-secrets-round4:2",
    ),
    'spellings, not a bypass: JSON text in a string (`{"path": ".env"}`) is spelled as a path (`./{...}`, '
    "`%7b...`, full-width braces, `::$DATA`): no JSON reader parses those as the object, and roles read only "
    "JSON text as written": (
        "calls-classes-a:11",
        "calls-classes-a:30",
        # Round twelve: the two request-body cases of round ten (calls-j-mcp:14, 15) hold - the spelled
        # body's words are read as mentioned places.
    ),
    "engine (round ten): a tool's own folder argument is the base of its relative paths as written: a base "
    'spelled inside a list (`["/"]`) is no folder, and an operand spelled absolute from the session\'s cwd is '
    "read against that cwd (asked, not denied)": (
        "calls-j-mcp:18",
        "calls-j-mcp:19",
        # Round eleven: a folder named by its key's last word (mount, mountpoint, chroot), spelled in a list,
        # one object down or from the cwd.
        *(f"calls-k-shell:{n}" for n in (41, 42, 44, 86)),
    ),
    "spellings, not a bypass (round eleven): a filter key's glob with full-width wildcards (U+FF1F, U+FF0A) "
    "is no glob: no glob library reads them as wildcards, so it names no secret file (a GLOB key reads it so "
    "too)": ("calls-k-shell:32", "calls-q-secrets:35"),
    "pack (round ten): bfcl's ask-before-overwrite reads a file named by convention without an extension "
    "(LICENSE, Makefile) by its letters as written; a case swap, an invisible character or an escape makes it "
    "a folder-like name": tuple(f"calls-j-mcp:{n}" for n in (34, 35, 36, 37)),
    "engine (round eleven): a value found by its custom header's name alone (x-vendor-team: 32 hex, which "
    "alone reads as an MD5) is read as written: encoded, spelled apart or split across values, the hex alone "
    "has no credential's shape (as the label findings of round eight)": ("calls-k-secrets:70", "calls-k-secrets:78"),
    "engine: a private key's body without armor split across two arguments is not glued: the split view "
    "glues literal strong prefixes, and a PKCS#8 body's prefix holds a length that varies": ("calls-secrets-a:12",),
    "engine: a uuencoded body is read after its `begin` line; the body base64-encoded in place is read "
    "without that line (its context stops at the line start), so its uuencode is not recognised": (
        "calls-secrets-a:42",
        "calls-shell-a:131",
    ),
    "a value found by its label (a PIN, a combination, a password in prose or after a short label, an openssl dump's "
    "private number) is encoded by the mutator without its label: the encoded value alone has no shape of a credential "
    "(round eight)": (
        "calls-h-labels:9",
        "calls-h-labels:10",
        "calls-h-labels:11",
        "calls-h-labels:69",
        "calls-h-labels:70",
        "calls-h-labels:71",
        "calls-h-labels:81",
        "calls-h-labels:82",
        "calls-h-labels:83",
        "calls-h-labels:84",
        "calls-h-labels:85",
        "calls-h-labels:86",
        "calls-h-encodings:22",
        "calls-h-encodings:23",
        # Round nine: a key-store dump's value found by the key path printed before it.
        *(f"calls-i-secrets:{n}" for n in (127, 128, 130, 131, 132, 133, 135, 136)),
        # Round ten: a password found by its protocol's context (AUTHENTICATE, a Password prompt) or a CVV by its
        # label in another script's digits.
        *(f"calls-j-secrets:{n}" for n in (31, 32, 43, 44, 55, 56, 92)),
    ),
    "engine: a delimited table whose whole text is encoded (base64, hex, URL escapes, full-width) is decoded "
    "and scanned as text, not read again as a table: a CVV found by its column passes (round nine)": (
        "calls-i-secrets:261",
    ),
    "engine: a prefixless key cut across list items is glued only when the items are plain values; a path spelling "
    "of the call's path argument changes the call the pieces are read in (round eight)": ("calls-h-encodings:11",),
    "engine (round nine, f9-shell): a stdin redirection's /dev/null is read as written, so a quoted piece "
    '(`< /dev/"null"`) is no empty source; a git output named relative to a `cd` outside the project is read '
    "as relative (git_output_outside reads the option's text)": ("calls-i-shell:56", "calls-i-shell:63"),
    "engine (round twelve): a URL mentioned inside a sentence is read by its own spelling: backslashed or "
    "percent-encoded separators (`fetch http:\\\\169.254.169.254\\latest first`) make the token a path, not a "
    "URL, so the metadata red line leaves it to the unplaced-argument ask": ("calls-m-mentions:30",),
    "engine (round thirteen): a text in Unicode carriers (base100 emoji, regional indicators, invisible bits) "
    "encoded whole in base64 is not decoded: the base64 gate wants 12 ASCII bytes in a row, and carriers are "
    "3-4 UTF-8 bytes each (hex, URL escapes and base64 of mixed text are read)": tuple(
        f"calls-n-carriers:{n}" for n in (11, 22, 23, 24, 27, 32)
    ),
    "packs (round eleven, set J): a path spelling applied to a whole YAML/TOML document (full-width letters, a stray "
    "trailing line or ::$DATA after it) breaks its syntax or joins its lines; the line reader recovers `key: value` "
    "lines but not a flow sequence's item or a full-width separator": (
        "calls-l-places:41",
        "calls-l-places:42",
    ),
    "packs (round eleven, set J): a place inside an option string or a bare host is read by its own shape: "
    "`file=//var//log` is a UNC host's share, an encoded or stream-suffixed extension segment is joined as written "
    "(prod.auto + tfvar%73), and a backslashed or cwd-prefixed bare host/path is no host": (
        "calls-l-places:63",
        "calls-l-places:64",
        "calls-l-places:97",
    ),
    "packs (round eleven, set J): root-level system files, software prefixes, list-file options and credential "
    "parent folders are matched by regex over a path or a command as written: a glob, brace, quote, ANSI-C or "
    "climb spelling of the operand, or a backslashed root file (read as relative), is another word": (
        "calls-l-places:73",
        "calls-l-places:82",
        "calls-l-places:115",
        "calls-l-places:138",
        "calls-l-places:139",
        "calls-l-places:141",
        "calls-l-places:143",
    ),
    "engine (round thirteen, set K): a credential file or dump is read by its layout, and a password that no label "
    "names must look like one there: the secret re-spelled alone (hex, base64, URL escapes, full-width, a zero-width "
    "space inside) is no password-like word or hex hash in that layout any more, so the line is left; a spelled "
    "kubectl kind is another word for the printer list": tuple(
        f"calls-n-redact:{i}" for i in (0, 1, 2, 3, 4, 10, 11, 12, 13, 15, 16, 18, 29)
    ),
    "engine (round fourteen, set L): a framing is read as its program prints it: a dump or trace re-spelled "
    "whole (od -c's cells or od -x's words in base64, hex, URL escapes, full-width or with a zero-width space, "
    "a strace line's JSON pieces encoded) is no dump or trace line any more, and a netstring whose value is "
    "re-spelled alone no longer has the length its prefix says": tuple(
        f"calls-o-redact:{i}" for i in (25, 33, 34, 36, 40)
    ),
    "engine (round thirteen): a key cut into punctuation groups, or an xz/bzip2 blob, split across two "
    "arguments is two halves: each half glues to fewer than 32 characters (a grouped run is read within one "
    "value) and half a compressed stream does not decompress to the credential lines": (
        "calls-n-cloaks:38",
        "calls-n-cloaks:43",
        "calls-n-cloaks:58",
    ),
    "a wide-charset payload (hex or base64 of UTF-32 or EBCDIC) cut in two arguments: each half decodes to "
    "no text of its charset alone, and the halves are rejoined only for ASCII encodings (round fourteen)": (
        "calls-p-secrets:12",
        "calls-p-secrets:13",
        "calls-p-secrets:14",
    ),
    "a card written as a base-36 word is read only beside its name in plain text: base64 of the word and its "
    "name decodes to text whose base-36 word is past the name's reach (round fourteen)": ("calls-p-secrets:32",),
    "a card written as a bare base-36 word is read beside its expiry (round fifteen): the mutator encodes the "
    "word alone, without the expiry its string held, and an expiry's month and year spelled as a path "
    "(`12\\30`, `12/./30`, `12//30`) is no month and year to any reader": tuple(
        f"calls-q-secrets:{n}" for n in (0, 2, 3, 5, 6, 10, 12)
    ),
    "a key cut at a search operator (`AKIA... | ...`) in two arguments: the halves of a search pattern are "
    "not glued across arguments (round fourteen)": ("calls-p-secrets:49",),
    "a one-case token in the other case cut in two values: each half is shorter than its provider's body and "
    "the case-folded reader does not glue halves across arguments (round fifteen)": (
        "calls-r-posts:8",
        "calls-r-posts:9",
    ),
    "upside-down text inside an encoding (base64, hex, URL escapes) or full-width: the flipped view reads "
    "the string as written, not the decoded or folded one (round fifteen)": (
        "calls-r-posts:13",
        "calls-r-posts:15",
    ),
    "an 8.3 short name is read as an unknown long name in a path on a drive, not inside a glob pattern "
    "(`[C]REDEN~1.JSO`: a pattern's names are not classified) nor in a root-relative path written with "
    "backslashes (`\\d\\src\\ENV~1`: its drive is unknown, its names are read as written) (round fifteen)": (
        "calls-r-names:19",
        "calls-r-names:20",
        "calls-r-names:21",
    ),
    "a card whose digit groups sit in separate values, each group encoded on its own (base64, hex, URL "
    "escapes, full-width digits, a zero-width space inside): the groups are joined only as digits, so a "
    "group the mutator encoded is no group to the card reader (round fifteen)": (
        "calls-r-cards:7",
        "calls-r-cards:20",
    ),
    "a glob operand (`ops/db-password.tx?`, `[c]reds.json~`) is not read against "
    "the credential names' shapes (secret_name_shapes: RE2 over a name, which a pattern's expansions would need "
    "as globs) (round fifteen)": (
        "calls-r-names:2",
        "calls-r-names:4",
        "calls-r-names:6",
        "calls-r-names:11",
        "calls-r-names:14",
        "calls-r-names:17",
        "calls-r-credprint:12",
    ),
}
# Cases (file stem:index) with a weaker spelling and the finding: strict xfails routed to the lead.
FINDINGS: dict[str, str] = {case: finding for finding, cases in _FOUND.items() for case in cases}


def _files() -> list[Path]:
    files = sorted(CORPUS.glob("calls-*.yaml"))
    assert files, f"no adversarial case files under {CORPUS}: missing test data fails, it never skips"
    return files


def _cases(file: Path) -> list[dict[str, Any]]:
    data = load_yaml(file)
    assert isinstance(data, dict) and isinstance(data.get("cases"), list), f"{file.name}: needs a `cases:` list"
    cases: list[dict[str, Any]] = data["cases"]
    return cases


@cache
def _layers(packs: tuple[tuple[str, Path], ...], pack: str, tools: str) -> PolicyLayers:
    """A pack installed as tests/test_adversarial.py installs it: Claude Code's tools, the case's catalog."""
    registry = Registry()
    if pack == "claude-code":
        for definition in load_catalog(BUILTIN_CATALOG).values():
            registry.register(definition)
    if tools:
        for definition in load_catalog(json.loads(tools)).values():
            registry.register(definition)
    return PolicyLayers.install(registry, [dict(packs)[pack]])


def spell_cases(
    file: Path,
    *,
    packs: Mapping[str, Path] = PACKS,
    only: frozenset[int] | None = None,
    skip: frozenset[int] = frozenset(),
    first_weaker: bool = False,
) -> SpellingReport:
    """Spell every comparable case of one file (`only` those indexes, none in `skip`), each with its pack.

    `first_weaker`: a case's spellings stop at its first weaker one (a strict xfail needs one to fail).
    """
    findings: list[Finding] = []
    not_compared: list[Finding] = []
    subjects = spellings = 0
    exhausted = False
    for index, case in enumerate(_cases(file)):
        if index in skip or (only is not None and index not in only) or case["expect"] == "invalid":
            continue
        tools = json.dumps(case["tools"]) if case.get("tools") else ""
        layers = _layers(tuple(packs.items()), case.get("pack", "baseline"), tools)
        call = case["call"]
        subject = Subject(
            f"{file.stem}:{index}:{case.get('name')}",
            Call(call["name"], call.get("arguments", {}), call.get("cwd"), case.get("result"), "agent", "adversarial"),
        )
        report = check(
            [subject],
            layers_decider(layers, require_tool=bool(tools)),
            roles=declared_roles(layers.registry.tools),
            seed=SEED,
            max_per_value=K,
            budget=max(1, BUDGET - spellings),
            first_weaker=first_weaker,
        )
        subjects += 1
        spellings += report.spellings
        findings += report.weaker
        not_compared += report.not_compared
        exhausted |= report.exhausted
    return SpellingReport(tuple(findings), tuple(not_compared), subjects, spellings, SEED, K, BUDGET, exhausted)


def _shown(findings: tuple[Finding, ...]) -> list[str]:
    return [
        f"{f.subject.label}: {f.spelling.kind}/{f.spelling.mutator} {f.spelling.where}={f.spelling.spelled!r} "
        f"{f.original.decision}/{f.original.post} by {f.original.rule} -> {f.spelled.decision}/{f.spelled.post} "
        f"by {f.spelled.rule}"
        for f in findings
    ]


def _findings_of(stem: str) -> frozenset[int]:
    return frozenset(int(key.split(":")[1]) for key in FINDINGS if key.split(":")[0] == stem)


def _params() -> Iterator[Any]:
    for file in _files():
        yield pytest.param(file, None, id=file.stem)
        for index in sorted(_findings_of(file.stem)):
            key = f"{file.stem}:{index}"
            yield pytest.param(file, index, id=key, marks=pytest.mark.xfail(strict=True, reason=FINDINGS[key]))


@pytest.mark.parametrize(("file", "index"), list(_params()))
def test_no_spelling_of_an_adversarial_case_is_decided_weaker_than_the_case(file: Path, index: int | None) -> None:
    if index is None:
        report = spell_cases(file, skip=_findings_of(file.stem))
    else:
        # A known finding fails on its first weaker spelling; one without any is decided whole and XPASSes (strict).
        report = spell_cases(file, only=frozenset({index}), first_weaker=True)
    assert report.subjects > 0 and report.spellings > 0, f"{file.name}: nothing was spelled"
    assert not report.exhausted, f"{file.name}: the budget of {BUDGET} spellings ran out"
    assert report.ok, "\n".join(_shown(report.weaker))


def test_every_finding_names_a_case_that_exists_and_is_compared() -> None:
    for key in FINDINGS:
        stem, index = key.split(":")
        cases = _cases(CORPUS / f"{stem}.yaml")
        assert int(index) < len(cases) and cases[int(index)]["expect"] != "invalid", key


PLANTED_CASES = """\
category: planted
cases:
  - name: reading .env is refused
    call: {name: read_file, arguments: {path: .env}, cwd: /home/dev/project}
    expect: deny
    rule: deny-env-files
  - name: reading notes is allowed
    call: {name: read_file, arguments: {path: notes.txt}, cwd: /home/dev/project}
    expect: allow
"""


def test_a_pack_copy_whose_rule_compares_the_raw_path_is_reported(tmp_path: Path) -> None:
    """The planted weakness: baseline with deny-env-files comparing the argument's text with `.env`."""
    pack = tmp_path / "baseline"
    shutil.copytree(PACKS["baseline"], pack)
    gate = pack / "gate.yaml"
    by_role = (
        'when: "paths(@)[?path_matches(@, lists.env_files) && !regex_match(@, lists.env_file_templates)]'
        ' | length(@) > `0`"'
    )
    assert by_role in gate.read_text("utf-8"), "the planted rule no longer reads as it did"
    planted_text = gate.read_text("utf-8").replace(by_role, "when: \"arguments.path == '.env'\"")
    # deny-env-files-unplaced reads every string too (a second defence): the planted copy drops it.
    start = planted_text.index("  - id: deny-env-files-unplaced")
    planted_text = planted_text[:start] + planted_text[planted_text.index("  - id: ", start + 1) :]
    gate.write_text(planted_text, "utf-8")
    cases = tmp_path / "calls-planted.yaml"
    cases.write_text(PLANTED_CASES, "utf-8")

    planted = spell_cases(cases, packs={"baseline": pack})
    shipped = spell_cases(cases)

    assert shipped.ok and shipped.spellings == planted.spellings > 0, "\n".join(_shown(shipped.weaker))
    assert {f.subject.label for f in planted.weaker} == {"calls-planted:0:reading .env is refused"}
    spelled = {f.spelling.spelled for f in planted.weaker}
    assert {"./.env", ".ENV", "%2eenv"} & spelled, spelled
    assert all(f.original.rule == "deny-env-files" and f.spelled.decision == "allow" for f in planted.weaker)
