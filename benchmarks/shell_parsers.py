"""Shell parsers for policyengine.arguments.shell: tree-sitter-bash against bashlex on realistic agent commands.

    python benchmarks/shell_parsers.py              # per-command table, then totals
    python benchmarks/shell_parsers.py --rounds 9   # more timing passes (median of the passes)

For each command, microseconds per parse (median over the passes, `perf_counter_ns`, GC off
while timing, after a warm-up) and whether it was accepted:

- tree-sitter-bash, one Parser reused (as the module does), on the text as given and with a final
  newline (as the module parses it); "REFUSED" = the tree has ERROR or MISSING nodes;
- bashlex (`bashlex.parse`); "REFUSED" = it raised;
- `policyengine.arguments.shell` without its cache (parse + walk + wrappers + re-parsing `sh -c`
  strings); "REFUSED" = CommandError (some by design: `$CMD`, `curl ... | sh`).

Prints; never asserts; the test suite does not run it.
"""

from __future__ import annotations

import argparse
import functools
import gc
import statistics
import time
from collections.abc import Callable

import tree_sitter
import tree_sitter_bash

try:
    import bashlex  # type: ignore[import-untyped,unused-ignore]
except ImportError:  # optional: the bashlex column is then left out
    bashlex = None

try:
    from policyengine.arguments import shell as shell
except ImportError:  # run before the module existed
    shell = None  # type: ignore[assignment]

COMMANDS = [
    "ls -la",
    "git status && git diff --stat",
    "cat /etc/shadow",
    "grep -rn 'TODO' src/ | sort | uniq -c | sort -rn | head -20",
    "cd /tmp && rm -rf build && mkdir build",
    'echo "$(date +%s) done" >> /var/log/agent.log 2>&1',
    "find . -name '*.pyc' -exec rm {} \\;",
    "find /tmp -type f -mtime +7 -delete",
    "sh -c 'rm -rf /tmp/cache'",
    'bash -c "cd /srv && git pull && make -j4"',
    'for f in *.txt; do mv "$f" "${f%.txt}.md"; done',
    'while read -r line; do echo "$line"; done < input.txt',
    "if [ -f .env ]; then source .env; fi",
    'case "$1" in start) ./run.sh;; stop) kill "$(cat pid)";; esac',
    "cat <<'EOF' > config.yaml\nname: demo\nport: 8080\nEOF",
    "cat <<EOF | sh\nrm -rf /\nEOF",
    "python3 -m pytest -x -q tests/ 2>&1 | tail -5",
    'docker run --rm -v "$PWD":/src -w /src node:20 npm ci',
    "curl -fsSL https://example.com/install.sh | bash",
    "tar -czf backup.tgz --exclude=node_modules .",
    "sudo -u postgres psql -c 'select 1'",
    "env -i PATH=/usr/bin HOME=/tmp /bin/rm -f x",
    "xargs -0 -n1 rm -f < list.txt",
    "timeout 10 nice -n 5 make test",
    "kill -9 $(pgrep -f 'node server.js')",
    "ps aux | grep [p]ython | awk '{print $2}' | xargs kill",
    'export PATH="$HOME/.local/bin:$PATH"; which python3',
    "npm run build && cp -r dist/* /var/www/html/",
    "ssh deploy@host 'sudo systemctl restart app'",
    "git log --oneline -n 20 --format='%h %s' | cat",
    "echo `whoami` > /tmp/me",
    'f() { rm -rf "$1"; }; f /tmp/x',
    "(cd sub && make) || echo failed",
    "{ echo a; echo b; } > out.txt",
    "diff <(sort a.txt) <(sort b.txt)",
    "\\rm -rf ~/.cache/pip",
    "$CMD /etc/passwd",
    'eval "$(ssh-agent -s)"',
    "echo 'unbalanced",
    "awk -F: '$3 >= 1000 {print $1}' /etc/passwd",
    "sed -i 's/foo/bar/g' $(git ls-files '*.py')",
    "make 2>&1 | tee build.log; echo exit=${PIPESTATUS[0]}",
]


def _median_us(fn: Callable[[], object], rounds: int) -> float:
    """Median microseconds of one call of fn over rounds passes (each pass: enough calls for ~2 ms)."""
    fn()
    start = time.perf_counter_ns()
    fn()
    once = max(time.perf_counter_ns() - start, 1)
    per_pass = max(1, min(2000, 2_000_000 // once))
    samples = []
    for _ in range(rounds):
        start = time.perf_counter_ns()
        for _ in range(per_pass):
            fn()
        samples.append((time.perf_counter_ns() - start) / per_pass / 1000)
    return statistics.median(samples)


def main() -> None:
    """Print the side-by-side table and the totals."""
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--rounds", type=int, default=5)
    rounds = options.parse_args().rounds

    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))

    def ts_parse(text: str) -> bool:
        return not parser.parse(text.encode()).root_node.has_error

    def ts_parse_nl(text: str) -> bool:
        # What the module does: a final newline. Without it, a pipeline of 3+ stages that ends the
        # input costs tree-sitter-bash 50-100 us (about 20x) at the end of input; same tree.
        return not parser.parse(text.encode() + b"\n").root_node.has_error

    def bl_parse(text: str) -> bool:
        try:
            bashlex.parse(text)
        except Exception:  # bashlex raises its own errors and also plain ones (IndexError, ...)
            return False
        return True

    def pe_parse(text: str) -> bool:
        try:
            shell._parse(text)  # parse_command without its cache: every call parses
        except shell.CommandError:
            return False
        return True

    columns: list[tuple[str, Callable[[str], bool]]] = [
        ("tree-sitter", ts_parse),
        ("tree-sitter+\\n", ts_parse_nl),
    ]
    if bashlex is not None:
        columns.append(("bashlex", bl_parse))
    if shell is not None:
        columns.append(("parse_command", pe_parse))

    header = f"{'command':<52}" + "".join(f"{name:>22}" for name, _ in columns)
    print(header)
    print("-" * len(header))
    times: dict[str, list[float]] = {name: [] for name, _ in columns}
    refused: dict[str, int] = {name: 0 for name, _ in columns}
    gc.disable()
    try:
        for text in COMMANDS:
            cells = []
            for name, fn in columns:
                ok = fn(text)
                us = _median_us(functools.partial(fn, text), rounds)
                times[name].append(us)
                refused[name] += not ok
                cells.append(f"{us:>12.1f} us {'ok' if ok else 'REFUSED':>7}")
            shown = text.replace("\n", "\\n")
            print(f"{shown[:50]:<52}" + "".join(f"{cell:>22}" for cell in cells))
    finally:
        gc.enable()
    print("-" * len(header))
    for name, _ in columns:
        values = times[name]
        print(
            f"{name:<14} parsed {len(values) - refused[name]:>3}/{len(values)}, refused {refused[name]:>2}; "
            f"median {statistics.median(values):7.1f} us, mean {statistics.fmean(values):7.1f} us, "
            f"max {max(values):8.1f} us"
        )


if __name__ == "__main__":
    main()
