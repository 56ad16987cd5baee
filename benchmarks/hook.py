"""Per-call time of `policyengine hook claude-code`, cold and warm, beside a bare interpreter (printed, never asserted).

    python benchmarks/hook.py [--runs N] [--pack DIR] [--as-is]

Claude Code starts the hook once per tool call, so the time that matters is a fresh process's,
from start to exit: each figure is the median wall time of N fresh processes, the commands
interleaved so that a busy machine slows them alike. The hook runs three ways:

- cold: an empty cache folder, no helper: the packs are read from YAML and the entry written;
- warm, in-process: the compiled-pack cache is filled, no helper (POLICYENGINE_HOOK_HELPER=off);
- warm, helper: the warm helper holds the packs and answers (what every call after the first costs).

By default the processes run with bytecode, as an installed package does (pip compiles it at
install time): PYTHONDONTWRITEBYTECODE is dropped and PYTHONPYCACHEPREFIX points at a private
folder, warmed once. `--as-is` keeps this environment's own setting instead (a checkout with
PYTHONDONTWRITEBYTECODE=1 compiles every module from source in every process, ~2-3x slower).
The helper this script starts is stopped at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EVENTS = {
    "Read": {"tool_name": "Read", "tool_input": {"file_path": "/home/dev/project/src/app.py"}},
    "Bash": {"tool_name": "Bash", "tool_input": {"command": "git status && ls -la src", "description": "status"}},
}


def event(tool: str) -> bytes:
    """A PreToolUse event as Claude Code sends it."""
    body = {
        "session_id": "2f0c1ab4-8d3e-4b52-9a77-3f1d6c0e9b21",
        "transcript_path": "/home/dev/.claude/projects/-home-dev-project/2f0c1ab4.jsonl",
        "cwd": "/home/dev/project",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        **EVENTS[tool],
        "tool_use_id": "toolu_01ABCDEF",
    }
    return json.dumps(body).encode("utf-8")


def hook_command(pack: str) -> list[str]:
    """The console script beside this interpreter, as Claude Code's settings name it; else `python -m`."""
    script = Path(sys.executable).with_name("policyengine")
    base = [str(script)] if script.exists() else [sys.executable, "-m", "policyengine"]
    return [*base, "hook", "claude-code", "--pack", pack]


def main() -> None:
    """Time the commands and print the medians."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=31)
    parser.add_argument("--pack", default=str(ROOT / "policies" / "claude-code"))
    parser.add_argument("--as-is", action="store_true", help="keep this environment's bytecode setting")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="policyengine-bench-"))
    env = dict(os.environ)
    if not args.as_is:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(scratch / "pycache")
    warm = {**env, "POLICYENGINE_CACHE": str(scratch / "warm"), "POLICYENGINE_HOOK_HELPER": "off"}
    helper = {**env, "POLICYENGINE_CACHE": str(scratch / "helper")}
    hook = hook_command(args.pack)
    bare = [sys.executable, "-c", "pass"]
    commands: dict[str, tuple[list[str], bytes, dict[str, str]]] = {
        "python -c pass": (bare, b"", env),
        "python -c 'import policyengine'": ([sys.executable, "-c", "import policyengine"], b"", env),
    }
    for tool in EVENTS:
        commands[f"hook {tool}: cold (empty cache, no helper)"] = (hook, event(tool), env)
        commands[f"hook {tool}: warm cache, in-process"] = (hook, event(tool), warm)
        commands[f"hook {tool}: warm helper"] = (hook, event(tool), helper)
    try:
        for argv, stdin, here in commands.values():  # bytecode for every module, the cache entries
            run(argv, stdin, {**here, "POLICYENGINE_HOOK_HELPER": "off"}, check=True)
        run(hook, event("Read"), helper, check=True)  # starts the helper ...
        wait_for_helper(scratch / "helper")  # ... which loads the packs, then serves
        for tool in EVENTS:
            run(hook, event(tool), helper, check=True)  # the helper loads what each tool needs
        times: dict[str, list[float]] = {name: [] for name in commands}
        for i in range(args.runs):
            for j, (name, (argv, stdin, here)) in enumerate(commands.items()):
                if "cold" in name:  # a new, empty cache folder every time
                    cold = str(scratch / f"cold-{i}-{j}")
                    here = {**here, "POLICYENGINE_CACHE": cold, "POLICYENGINE_HOOK_HELPER": "off"}
                times[name].append(run(argv, stdin, here, check=False))
    finally:
        stop_helpers(scratch)
        shutil.rmtree(scratch, ignore_errors=True)
    mode = "this environment's bytecode setting" if args.as_is else "bytecode, as installed"
    print(f"{args.runs} fresh processes each, median wall time ({mode}; pack {args.pack}):")
    base = statistics.median(times["python -c pass"])
    for name, values in times.items():
        median = statistics.median(values)
        print(f"  {median * 1e3:7.1f} ms  (+{(median - base) * 1e3:6.1f} over bare)  {name}")


def run(argv: list[str], stdin: bytes, env: dict[str, str], *, check: bool) -> float:
    """Seconds from start to exit of one process."""
    start = time.perf_counter()
    done = subprocess.run(argv, input=stdin, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if check and done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.decode(errors='replace')}")
    return elapsed


def wait_for_helper(folder: Path, timeout: float = 30.0) -> None:
    """Until the helper's socket exists."""
    deadline = time.monotonic() + timeout
    while not list(folder.glob("hook-*.sock")):
        if time.monotonic() > deadline:
            raise SystemExit(f"no helper started in {folder} within {timeout:g}s")
        time.sleep(0.05)


def stop_helpers(scratch: Path) -> None:
    """SIGTERM the helpers this run started (their pids are in their lock files)."""
    for lock in scratch.glob("*/hook-*.lock"):
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(lock.read_text().strip()), signal.SIGTERM)


if __name__ == "__main__":
    main()
