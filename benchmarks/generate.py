"""Generate a benchmark pack of N rules and a JSONL of M recorded calls.

    python benchmarks/generate.py --rules 1000 --calls 100000 --out /tmp/policyengine-bench

writes `OUT/pack-1000/` (pack.yaml + rule files) and `OUT/calls-100000.jsonl`.

The pack looks like a real one, only bigger: deny rules on a path argument
(`path_within`, `path_matches`, `starts_with`) and on an `owner` name (equality), ten rules per
tool (eight denies, one ask, one guard), spread over many tools, plus two rules that apply to
every tool (a guard on system directories, a deny on `.env` files). Tool `i` always gets the
same ten rules whatever N is, so a bigger pack only ADDS rules aimed at other tools: the
100-rule pack is a prefix of the 10,000-rule one (goal 2 of issue 6).

Calls go to the first `HOT_TOOLS` tools (each has its ten rules in every pack size): mostly
allowed, about 14% denied, 3% asked, a few stopped by a guard.

Each rule is also kept as a structured spec (`Spec`) so compare.py can write the equivalent
Cedar and casbin policies from exactly the same data.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

RULES_PER_TOOL = 10
HOT_TOOLS = 8  # calls go to these tools; every pack of >= 100 rules has their ten rules
GLOBAL_RULES = 2
RULES_PER_FILE = 250  # keeps each YAML file far below the loader's size and node limits
VERBS = ("read", "write", "delete", "list", "upload", "download", "copy", "move")
SYSTEM_DIRS = ("/etc", "/usr", "/bin", "/sbin", "/boot", "/dev", "/proc", "/sys")
ENV_FILES = (".env", ".env.*")
USERS = ("alice", "bob", "carol", "dave", "erin", "ci-bot")


def default_out() -> Path:
    """Where generated data goes unless --out says otherwise."""
    return Path(tempfile.gettempdir()) / "policyengine-bench"


def tool_name(i: int) -> str:
    """The name of tool i (svc0003_list, ...)."""
    return f"svc{i:04d}_{VERBS[i % len(VERBS)]}"


@dataclass(frozen=True)
class Spec:
    """One rule, engine-neutral: a condition of `kind` over `values`, for `tools`.

    kind: path_within (the path is one of the dirs or below one), path_matches (gitignore-like
    globs, here only `*.ext`, `name*` and `.env`-style component patterns), starts_with (string
    prefix of the path), owner_eq (arguments.owner equals the value).
    """

    id: str
    stage: str  # pre-execute | guard
    decision: str  # deny | ask
    tools: tuple[str, ...]  # exact names, or ("*",) for every tool
    kind: str
    values: tuple[str, ...]
    reason: str
    list_name: str | None = None  # the condition reads lists.<list_name> (= values)

    def when(self) -> str:
        """The JMESPath condition of the YAML rule."""
        arg = f"lists.{self.list_name}" if self.list_name else "[" + ", ".join(_jp(v) for v in self.values) + "]"
        if self.kind == "path_within":
            return f"path_within(arguments.path, {arg})"
        if self.kind == "path_matches":
            return f"path_matches(arguments.path, {arg})"
        if self.kind == "starts_with":
            return f"starts_with(arguments.path, {_jp(self.values[0])})"
        if self.kind == "owner_eq":
            return f"arguments.owner == {_jp(self.values[0])}"
        raise ValueError(self.kind)


def _jp(text: str) -> str:
    """A JMESPath raw string literal."""
    assert "'" not in text and "\\" not in text
    return f"'{text}'"


def global_specs() -> list[Spec]:
    """The rules that apply to every tool (first file of the pack)."""
    return [
        Spec(
            "global-no-system-dirs",
            "guard",
            "deny",
            ("*",),
            "path_within",
            SYSTEM_DIRS,
            "Red line: {name} may not touch system directories ({arguments.path}).",
            "system_dirs",
        ),
        Spec(
            "global-no-env-files",
            "pre-execute",
            "deny",
            ("*",),
            "path_matches",
            ENV_FILES,
            "Denied: {name} may not touch .env files ({arguments.path}).",
            "env_files",
        ),
    ]


def tool_specs(i: int) -> list[Spec]:
    """The ten rules of tool i: eight denies, one ask, one guard."""
    t = tool_name(i)
    svc = f"svc{i:04d}"
    deny = "Denied: {name} may not use {arguments.path} (owner {arguments.owner})."
    return [
        Spec(f"{t}-private", "pre-execute", "deny", (t,), "path_within", (f"/srv/{svc}/private", "/root"), deny),
        Spec(f"{t}-keys", "pre-execute", "deny", (t,), "path_matches", ("*.pem", "*.key", "id_rsa*"), deny),
        Spec(f"{t}-state", "pre-execute", "deny", (t,), "starts_with", (f"/var/lib/{svc}/",), deny),
        Spec(f"{t}-contractor", "pre-execute", "deny", (t,), "owner_eq", (f"contractor-{i}",), deny),
        Spec(f"{t}-secrets", "pre-execute", "deny", (t,), "path_within", (f"/srv/{svc}/secrets", "/home/admin"), deny),
        Spec(f"{t}-databases", "pre-execute", "deny", (t,), "path_matches", ("*.sqlite", "*.kdbx"), deny),
        Spec(f"{t}-backups", "pre-execute", "deny", (t,), "starts_with", (f"/mnt/backup/{svc}/",), deny),
        Spec(f"{t}-suspended", "pre-execute", "deny", (t,), "owner_eq", (f"suspended-{i}",), deny),
        Spec(
            f"{t}-shared", "pre-execute", "ask", (t,), "path_within", (f"/srv/shared/{svc}",), "Use {arguments.path}?"
        ),
        Spec(
            f"{t}-audit",
            "guard",
            "deny",
            (t,),
            "path_within",
            (f"/srv/{svc}/audit",),
            "Red line: the audit log of {name} is append-only.",
        ),
    ]


def specs(n_rules: int) -> list[Spec]:
    """Exactly n_rules rules: the two global rules, then ten per tool (the last tool may get fewer)."""
    if n_rules < GLOBAL_RULES + RULES_PER_TOOL * HOT_TOOLS:
        raise ValueError(f"need at least {GLOBAL_RULES + RULES_PER_TOOL * HOT_TOOLS} rules")
    out = global_specs()
    i = 0
    while len(out) < n_rules:
        out.extend(tool_specs(i)[: n_rules - len(out)])
        i += 1
    return out


def tool_count(n_rules: int) -> int:
    """How many tools the pack of n_rules rules names."""
    return -(-(n_rules - GLOBAL_RULES) // RULES_PER_TOOL)


def _q(text: str) -> str:
    # JSON strings are valid YAML double-quoted scalars (no backslashes here).
    return json.dumps(text, ensure_ascii=False)


def _rule_yaml(spec: Spec) -> str:
    lines = [
        f"  - id: {spec.id}",
        f"    stage: {spec.stage}",
        f"    tools: [{', '.join(_q(t) for t in spec.tools)}]",
        f"    when: {_q(spec.when())}",
    ]
    if spec.stage == "pre-execute":
        lines.append(f"    decision: {spec.decision}")
    lines.append(f"    reason: {_q(spec.reason)}")
    return "\n".join(lines) + "\n"


def write_pack(folder: str | Path, n_rules: int) -> Path:
    """Write a pack of n_rules rules into folder (created); returns the folder."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("rules-*.yaml"):
        old.unlink()
    all_specs = specs(n_rules)
    files = []
    lists = {s.list_name: s.values for s in all_specs if s.list_name}
    for start in range(0, len(all_specs), RULES_PER_FILE):
        name = f"rules-{start // RULES_PER_FILE:03d}.yaml"
        parts = []
        if start == 0:
            parts.append("lists:\n")
            parts.extend(f"  {k}: [{', '.join(_q(v) for v in vs)}]\n" for k, vs in lists.items())
        parts.append("rules:\n")
        parts.extend(_rule_yaml(s) for s in all_specs[start : start + RULES_PER_FILE])
        (folder / name).write_text("".join(parts), encoding="utf-8")
        files.append(name)
    manifest = (
        f"name: bench-{n_rules}\n"
        "version: 1.0.0\n"
        f"description: Generated benchmark pack of {n_rules} rules over {tool_count(n_rules)} tools.\n"
        "default: allow\n"
        f"files: [{', '.join(files)}]\n"
    )
    (folder / "pack.yaml").write_text(manifest, encoding="utf-8")
    return folder


# -- calls ------------------------------------------------------------------------------------


def _path(rng: random.Random, i: int, owner: str) -> tuple[str, str]:
    """(path, what the pack should decide for it)."""
    svc = f"svc{i:04d}"
    r = rng.random()
    n = rng.randrange(1000)
    if r < 0.80:  # ordinary work: allowed
        return rng.choice(
            (
                f"/home/{owner}/projects/app{n % 40}/src/module_{n}.py",
                f"/home/{owner}/projects/app{n % 40}/README.md",
                f"/tmp/build-{n}/output.log",
                f"docs/guide/chapter_{n % 30}.md",
                f"/srv/{svc}/data/2024/report_{n}.csv",
                f"/srv/shared/other/notes_{n}.txt",
                f"/var/lib/{svc}-cache/entry_{n}",  # looks close to a deny, is not one
            )
        ), "allow"
    if r < 0.94:  # denied by a pre-execute rule
        return rng.choice(
            (
                f"/srv/{svc}/private/customers_{n}.json",
                "/root/.bash_history",
                f"/home/{owner}/keys/server_{n}.pem",
                f"/home/{owner}/.ssh/id_rsa",
                f"/var/lib/{svc}/state.db",
                f"/srv/{svc}/secrets/token_{n}",
                f"/home/{owner}/vault/passwords.kdbx",
                f"/mnt/backup/{svc}/snapshot_{n}.tar",
                f"/home/{owner}/projects/app{n % 40}/.env",
            )
        ), "deny"
    if r < 0.97:
        return f"/srv/shared/{svc}/plan_{n}.md", "ask"
    return rng.choice((f"/srv/{svc}/audit/2024-{n % 12 + 1:02d}.log", "/etc/passwd", "/proc/self/environ")), "deny"


def calls(m: int, seed: int = 6) -> Iterator[dict[str, object]]:
    """M recorded calls to the hot tools (deterministic for a seed)."""
    rng = random.Random(seed)
    for k in range(m):
        i = rng.randrange(HOT_TOOLS)
        owner = rng.choice(USERS)
        if rng.random() < 0.01:
            owner = rng.choice((f"contractor-{i}", f"suspended-{i}"))
        path, _expected = _path(rng, i, owner)
        arguments: dict[str, object] = {"path": path, "owner": owner}
        if VERBS[i % len(VERBS)] in ("write", "upload"):
            arguments["content"] = f"line {k}\n" * 3
        yield {"call_id": f"c{k:07d}", "agent": "agent", "name": tool_name(i), "arguments": arguments}


def write_calls(path: str | Path, m: int, seed: int = 6) -> Path:
    """Write M calls as JSONL."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for call in calls(m, seed):
            out.write(json.dumps(call, separators=(",", ":")) + "\n")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rules", type=int, action="append", help="pack size (repeat); default 1000")
    parser.add_argument("--calls", type=int, default=10_000, help="number of recorded calls (0: none)")
    parser.add_argument("--seed", type=int, default=6)
    parser.add_argument("--out", type=Path, default=default_out(), help="output folder (default: %(default)s)")
    args = parser.parse_args()
    for n in args.rules or [1000]:
        folder = write_pack(args.out / f"pack-{n}", n)
        print(f"{folder}: {n:,} rules over {tool_count(n):,} tools")
    if args.calls:
        path = write_calls(args.out / f"calls-{args.calls}.jsonl", args.calls, args.seed)
        print(f"{path}: {args.calls:,} calls to {HOT_TOOLS} tools")


if __name__ == "__main__":
    main()
