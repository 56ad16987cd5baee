"""The init verb: write a working configuration for a front end, and say what it wrote.

`init claude-code` copies a pack into the project and registers the hook in `.claude/settings.json`;
`init mcp` writes an MCP client entry that runs the upstream server behind `mcp-proxy`; `init serve`
writes a token and a script that starts `policyengine serve`. Every path written is absolute
(Claude Code runs hooks in the session's directory, MCP clients start servers wherever they run),
each configuration runs this very interpreter, and nothing is written until every check passed:
an existing file is refused unless --force, a settings file that is not a JSON object is refused.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shlex
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from policyengine.cli.common import EXIT_OK, resolve_pack
from policyengine.errors import UsageError

NAME = "init"
HELP = "write a working configuration: the Claude Code hook, an MCP proxy entry, or a serve script"

DEFAULT_PACK = {"claude-code": "claude-code", "mcp": "baseline", "serve": "baseline"}
HOOK_EVENTS = ("PreToolUse", "PostToolUse")
HOOK_TIMEOUT = 30  # seconds Claude Code waits for the hook (docs/claude-code.md)
# Where init keeps what it writes. Claude Code's pack copy and cache sit under .claude: the shipped
# claude-code pack refuses agent writes there (no-policy-tampering), so the agent cannot edit its
# own policy, poison the cache or forget its session by deleting the store.
CLAUDE_HOME = (".claude", "policyengine")
PROJECT_HOME = (".policyengine",)
GITIGNORE = "# Written by `policyengine init claude-code`: the cache is this machine's.\ncache/\n"


@dataclass(frozen=True)
class Written:
    """One thing init wrote: its absolute path and what it is."""

    path: Path
    what: str


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The init verb's targets, each with --dir, --pack and --force."""
    targets = parser.add_subparsers(dest="init_target", metavar="TARGET", required=True)
    claude = targets.add_parser("claude-code", help="the hook in .claude/settings.json, over a copy of a pack")
    claude.add_argument(
        "--local",
        action="store_true",
        help="register the hook in .claude/settings.local.json (this machine only) instead of .claude/settings.json",
    )
    mcp = targets.add_parser("mcp", help="an MCP client entry running the upstream server behind mcp-proxy")
    mcp.add_argument(
        "--name", default="upstream", help="the server's name in the client's mcpServers (default upstream)"
    )
    serve = targets.add_parser("serve", help="a token and a script that start `policyengine serve` over a pack copy")
    for target in (claude, mcp, serve):
        name = target.prog.rsplit(" ", 1)[-1]
        target.add_argument("--dir", default=".", metavar="DIR", help="the project folder (default: the current one)")
        target.add_argument(
            "--pack",
            type=resolve_pack,
            metavar="PACK",
            help=f"the pack to copy: a shipped pack's name or a folder (default {DEFAULT_PACK[name]})",
        )
        target.add_argument("--force", action="store_true", help="replace what an earlier init wrote")
        # As on every verb: --color is accepted after the target too; SUPPRESS keeps the top-level default.
        target.add_argument("--color", choices=["auto", "always", "never"], default=argparse.SUPPRESS)
    # Last: everything after `--` is the upstream's command line.
    mcp.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARG...]: the upstream MCP server")


def run(args: argparse.Namespace, out: TextIO, err: TextIO, color: bool) -> int:
    """`init TARGET`: check everything, write the configuration, print each file written."""
    project = Path(args.dir).expanduser().resolve()
    if not project.is_dir():
        raise UsageError(
            f"--dir {args.dir}: {project} is not a folder", hint="give the project's folder (it must exist)"
        )
    target = args.init_target
    pack = Path(args.pack if args.pack is not None else resolve_pack(DEFAULT_PACK[target])).resolve()
    if target == "claude-code":
        written = _claude_code(project, pack, local=args.local, force=args.force)
        after = "Claude Code runs the hook from its next session; `/hooks` in Claude Code lists it."
    elif target == "mcp":
        written = _mcp(project, pack, args.name, _upstream(args.command), force=args.force)
        after = f"Put its mcpServers entry in your MCP client's configuration (for Claude Code: {project}/.mcp.json)."
    else:
        written = _serve(project, pack, force=args.force)
        after = f"Start the service with {written[-1].path} (options you add pass on to `policyengine serve`)."
    print(f"policyengine init {target}: wrote", file=out)
    for item in written:
        print(f"  {item.path}\n      {item.what}", file=out)
    print(after, file=out)
    return EXIT_OK


# -- the targets ----------------------------------------------------------------------------------


def _claude_code(project: Path, pack: Path, *, local: bool, force: bool) -> list[Written]:
    home = project.joinpath(*CLAUDE_HOME)
    copy = home / "packs" / pack.name
    cache, note = _cache_folder(home / "cache")
    settings = project / ".claude" / ("settings.local.json" if local else "settings.json")
    words = [*_python(), "hook", "claude-code", "--pack", str(copy)]
    # Claude Code runs the command in a shell: the cache folder is pinned for the hook and its helper.
    command = f"POLICYENGINE_CACHE={shlex.quote(str(cache))} {shlex.join(words)}"
    document = _settings_with_hook(settings, command, force=force)  # may refuse: before anything is written
    _check_pack_copy(copy, force=force)
    _copy_pack(pack, copy)
    _private_folder(cache)
    if not note:  # the cache is the project's: never committed
        _write_once(home / ".gitignore", GITIGNORE)
    _write_json(settings, document)
    return [
        Written(copy, f"a copy of the pack {pack.name} to edit (`policyengine test {copy}` runs its tests)"),
        Written(cache, f"the hook's cache folder (0700): compiled packs, the warm helper's socket, sessions{note}"),
        Written(settings, f"{' and '.join(HOOK_EVENTS)} run: {command}"),
    ]


def _mcp(project: Path, pack: Path, name: str, upstream: list[str], *, force: bool) -> list[Written]:
    if not name or not all(c.isalnum() or c in "-_" for c in name):
        raise UsageError(f"--name {name!r} is not a server name", hint="use letters, digits, - and _ (e.g. files)")
    home = project.joinpath(*PROJECT_HOME)
    copy = home / "packs" / pack.name
    snippet = home / f"mcp-{name}.json"
    audit = home / f"mcp-{name}.audit.jsonl"
    python = _python()
    args = [*python[1:], "mcp-proxy", "--pack", str(copy), "--audit", str(audit), "--cwd", str(project)]
    entry = {"mcpServers": {name: {"command": python[0], "args": [*args, "--", *upstream]}}}
    _refuse_existing([snippet], force=force)
    _check_pack_copy(copy, force=force)
    _copy_pack(pack, copy)
    _write_json(snippet, entry)
    return [
        Written(copy, f"a copy of the pack {pack.name} to edit (`policyengine test {copy}` runs its tests)"),
        Written(snippet, f"the MCP client entry {name!r}: {shlex.join(upstream)} behind mcp-proxy, audit in {audit}"),
    ]


def _serve(project: Path, pack: Path, *, force: bool) -> list[Written]:
    home = project.joinpath(*PROJECT_HOME)
    copy = home / "packs" / pack.name
    token = home / "serve.token"
    script = home / "serve.sh"
    log = home / "decisions.jsonl"
    words = [*_python(), "serve", "--pack", str(copy), "--token-file", str(token), "--decision-log", str(log)]
    text = (
        "#!/bin/sh\n"
        "# Written by `policyengine init serve`: the decision service over the pack copy (docs/serve.md).\n"
        "# Options given to this script are added: --port 9000, --host 0.0.0.0, ...\nexec "
        + shlex.join(words)
        + ' "$@"\n'
    )
    _refuse_existing([token, script], force=force)
    _check_pack_copy(copy, force=force)
    _copy_pack(pack, copy)
    _write_file(token, secrets.token_urlsafe(32) + "\n", 0o600)
    _write_file(script, text, 0o755)
    return [
        Written(copy, f"a copy of the pack {pack.name} to edit (`policyengine test {copy}` runs its tests)"),
        Written(token, "the bearer token every /v1/ request carries (0600)"),
        Written(script, f"starts the service (decision log {log}): {shlex.join(words)}"),
    ]


# -- helpers ----------------------------------------------------------------------------------------


def _python() -> list[str]:
    """This interpreter running the CLI: -P keeps the working directory (the agent's project) off sys.path."""
    # Not resolved: a virtual environment's python is a link, and only the link finds the venv's packages.
    return [os.path.abspath(sys.executable), "-P", "-m", "policyengine"]


def _cache_folder(inside: Path) -> tuple[Path, str]:
    """The hook's cache: inside the project's .claude when the helper's socket path fits there, else the user's."""
    # A Unix socket's path holds 104 (macOS) to 108 (Linux) bytes; the helper's is the folder + 27.
    if len(os.fsencode(inside)) + len("/hook-0123456789abcdef.sock") < 104:
        return inside, ""
    from policyengine.packs.cache import cache_dir

    users = cache_dir()
    if users is None:  # POLICYENGINE_CACHE=off: no helper anyway, the project's folder holds the sessions
        return inside, ""
    note = f" (the project's path is too long for the helper's socket under {inside.parent}, so the user's)"
    return users.expanduser().resolve(), note


def _upstream(command: list[str]) -> list[str]:
    words = command[1:] if command[:1] == ["--"] else list(command)
    if not words or not words[0]:
        raise UsageError(
            "init mcp needs the command that starts the upstream MCP server",
            hint="put it after `--`: policyengine init mcp --name files -- python my_server.py",
        )
    return words


def _settings_with_hook(path: Path, command: str, *, force: bool) -> dict[str, Any]:
    """The settings file's object with the hook registered for both events; other keys untouched."""
    document: Any = {}
    if path.exists():
        try:
            document = json.loads(path.read_text("utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as error:
            raise UsageError(
                f"cannot read {path} as JSON ({error}); nothing was written",
                hint="fix the file (or move it away), then run init again",
            ) from None
    if not isinstance(document, dict):
        raise UsageError(f"{path} is not a JSON object; nothing was written", hint="fix the file, then run init again")
    hooks = document.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise UsageError(f'{path}: "hooks" is not an object; nothing was written', hint="fix the file, then run again")
    for event in HOOK_EVENTS:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list) or not all(
            isinstance(g, dict) and isinstance(g.get("hooks"), list) for g in groups
        ):
            raise UsageError(
                f'{path}: "hooks.{event}" is not a list of matcher groups; nothing was written',
                hint="fix the file (see docs/claude-code.md), then run init again",
            )
        present = [h for g in groups for h in g.get("hooks", []) if _is_policy_hook(h)]
        if any(h.get("command") == command for h in present):
            continue  # registered already, as this init would
        if present and not force:
            raise UsageError(
                f"{path} already runs another policyengine hook for {event}: {present[0].get('command')}",
                hint="give --force to replace it with this one, or edit the file",
            )
        for group in groups:
            group["hooks"] = [h for h in group.get("hooks", []) if not _is_policy_hook(h)]
        groups[:] = [g for g in groups if g["hooks"]]
        groups.append({"matcher": "*", "hooks": [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT}]})
    return document


def _is_policy_hook(hook: Any) -> bool:
    command = hook.get("command") if isinstance(hook, dict) else None
    return isinstance(command, str) and "policyengine" in command and "hook claude-code" in command


def _refuse_existing(paths: list[Path], *, force: bool) -> None:
    there = [str(p) for p in paths if p.exists()]
    if there and not force:
        raise UsageError(
            f"{', '.join(there)} already exist(s); nothing was written",
            hint="give --force to replace what an earlier init wrote, or remove it",
        )


def _check_pack_copy(copy: Path, *, force: bool) -> None:
    if not copy.exists():
        return
    if not force:
        raise UsageError(
            f"{copy} already exists (a pack copy you may have edited); nothing was written",
            hint="keep it and edit it, or give --force to replace it with a fresh copy",
        )
    if not (copy / "pack.yaml").is_file():
        raise UsageError(f"{copy} exists and is not a pack folder (no pack.yaml); not replaced", hint="move it away")


def _copy_pack(pack: Path, copy: Path) -> None:
    if copy.exists():
        shutil.rmtree(copy)  # --force, and _check_pack_copy saw a pack there
    copy.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(pack, copy, ignore=shutil.ignore_patterns("__pycache__", "__init__.py", "*.pyc"))


def _private_folder(folder: Path) -> None:
    """A folder only this user reads (the hook's helper refuses to serve from any other)."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder.chmod(0o700)


def _write_once(path: Path, text: str) -> None:
    if not path.exists():
        _write_file(path, text, 0o644)


def _write_json(path: Path, document: Any) -> None:
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    _write_file(path, json.dumps(document, indent=2) + "\n", mode)


def _write_file(path: Path, text: str, mode: int) -> None:
    """Write whole or not at all (a temporary file renamed over the target)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
