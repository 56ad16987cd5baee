"""The service's Prometheus metrics: plain counts on the request path, exported (summed over workers) when scraped.

prometheus-client's labelled Counter and Histogram take a lock and check the labels on every
call: 3.6 us a decision (of a budget of ~60; benchmarks/load.py), against 0.5 us for a dict.
The event loop's thread counts decisions, rejections and reloads, and answers scrapes; the log
writer's threads count log failures under a lock of their own.

With several workers (`serve --workers N`), each worker writes its counts to a file of its own
in a folder they share, once a second and when it stops; a scrape, answered by whichever worker
takes the connection, sums every file with its own live counts. The figures are the whole
service's, at most a second behind for the other workers; a worker that was replaced keeps its
file, so a counter never goes down.
"""

from __future__ import annotations

import bisect
import contextlib
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from policyengine.service.packs_state import ReloadResult

__all__ = ["LATENCY_BUCKETS", "DecisionTally", "ServiceMetrics"]

LATENCY_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)


class DecisionTally:
    """Decisions and their latency, counted in plain dicts on the event loop (no lock: one thread counts)."""

    def __init__(self) -> None:
        self.decisions: dict[tuple[str, str, str], int] = {}
        self.buckets: dict[str, list[int]] = {}  # per endpoint: count per bucket, then the overflow
        self.sums: dict[str, float] = {}

    def decided(self, endpoint: str, decision: str, rule: str, seconds: float) -> None:
        """Count one answer and its latency."""
        key = (endpoint, decision, rule)
        self.decisions[key] = self.decisions.get(key, 0) + 1
        counts = self.buckets.get(endpoint)
        if counts is None:
            counts = self.buckets[endpoint] = [0] * (len(LATENCY_BUCKETS) + 1)
            self.sums[endpoint] = 0.0
        counts[bisect.bisect_left(LATENCY_BUCKETS, seconds)] += 1
        self.sums[endpoint] += seconds

    def collect(self) -> Iterator[Metric]:
        """The two metric families, as a labelled Counter and Histogram would show them."""
        return iter(_Counts.of(self, {}, 0, 0, 0).families()[:2])


class _Counts:
    """Every count of one worker (or the sum of several): what a scrape exports and a worker's file holds."""

    def __init__(self) -> None:
        self.decisions: dict[tuple[str, str, str], int] = {}
        self.buckets: dict[str, list[int]] = {}
        self.sums: dict[str, float] = {}
        self.rejected: dict[str, int] = {}
        self.reloads = self.reload_failures = self.log_failures = 0

    @classmethod
    def of(
        cls, tally: DecisionTally, rejected: dict[str, int], reloads: int, reload_failures: int, log_failures: int
    ) -> _Counts:
        """A copy of live counts (taken on the event loop, so nothing counts meanwhile)."""
        counts = cls()
        counts.decisions = dict(tally.decisions)
        counts.buckets = {k: list(v) for k, v in tally.buckets.items()}
        counts.sums = dict(tally.sums)
        counts.rejected = dict(rejected)
        counts.reloads, counts.reload_failures, counts.log_failures = reloads, reload_failures, log_failures
        return counts

    def to_json(self) -> dict[str, Any]:
        """The counts as JSON (a worker's file)."""
        return {
            "decisions": [[*key, count] for key, count in self.decisions.items()],
            "buckets": self.buckets,
            "sums": self.sums,
            "rejected": self.rejected,
            "reloads": self.reloads,
            "reload_failures": self.reload_failures,
            "log_failures": self.log_failures,
        }

    def add(self, data: dict[str, Any]) -> None:
        """Add another worker's counts, as its file holds them."""
        for endpoint, decision, rule, count in data["decisions"]:
            key = (endpoint, decision, rule)
            self.decisions[key] = self.decisions.get(key, 0) + int(count)
        for endpoint, counts in data["buckets"].items():
            mine = self.buckets.setdefault(endpoint, [0] * (len(LATENCY_BUCKETS) + 1))
            for i, count in enumerate(counts[: len(mine)]):
                mine[i] += int(count)
            self.sums[endpoint] = self.sums.get(endpoint, 0.0) + float(data["sums"].get(endpoint, 0.0))
        for status, count in data["rejected"].items():
            self.rejected[status] = self.rejected.get(status, 0) + int(count)
        self.reloads += int(data["reloads"])
        self.reload_failures += int(data["reload_failures"])
        self.log_failures += int(data["log_failures"])

    def families(self) -> list[Metric]:
        """The metric families, as prometheus-client's labelled Counters and Histogram would show them."""
        decisions = CounterMetricFamily(
            "policyengine_decisions",
            "Decisions answered, by endpoint, decision (post outcome for reviews) and deciding rule",
            labels=["endpoint", "decision", "rule"],
        )
        for labels, count in sorted(self.decisions.items()):
            decisions.add_metric(list(labels), count)
        latency = HistogramMetricFamily(
            "policyengine_decision_seconds",
            "Time to decide, from the parsed request to the answer",
            labels=["endpoint"],
        )
        for endpoint, counts in sorted(self.buckets.items()):
            running, cumulative = 0, []
            for bound, count in zip((*map(repr, LATENCY_BUCKETS), "+Inf"), counts, strict=True):
                running += count
                cumulative.append((bound, running))
            latency.add_metric([endpoint], cumulative, self.sums[endpoint])
        rejected = CounterMetricFamily(
            "policyengine_rejected_requests", "Requests refused before deciding, by status", labels=["status"]
        )
        for status, count in sorted(self.rejected.items()):
            rejected.add_metric([status], count)
        return [
            decisions,
            latency,
            rejected,
            CounterMetricFamily("policyengine_reloads", "Pack reloads that swapped in new packs", self.reloads),
            CounterMetricFamily(
                "policyengine_reload_failures",
                "Pack reloads that failed (the last good packs kept deciding)",
                self.reload_failures,
            ),
            CounterMetricFamily(
                "policyengine_decision_log_failures", "Decisions the decision log could not write", self.log_failures
            ),
        ]


class ServiceMetrics(Collector):
    """The service's metrics, on a registry of their own (one per app); `share` is the workers' folder, if several."""

    def __init__(self, registry: CollectorRegistry | None = None, share: Path | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        self.tally = DecisionTally()
        self.refused: dict[str, int] = {}
        self.reloads = 0
        self.reload_failures = 0
        self.log_failures = 0
        self._log_lock = threading.Lock()
        self.share = share
        self.registry.register(self)

    def rejected(self, status: str) -> None:
        """Count a request refused before deciding."""
        self.refused[status] = self.refused.get(status, 0) + 1

    def reloaded(self, result: ReloadResult) -> None:
        """Count a reload (called on the reload's thread: the loop only reads the two ints)."""
        if result.swapped:
            self.reloads += 1
        else:
            self.reload_failures += 1

    def log_failed(self, count: int = 1) -> None:
        """Count decisions the decision log could not write (from any thread)."""
        with self._log_lock:
            self.log_failures += count

    def _own(self) -> _Counts:
        return _Counts.of(self.tally, self.refused, self.reloads, self.reload_failures, self.log_failures)

    def _file(self) -> Path | None:
        return None if self.share is None else self.share / f"worker-{os.getpid()}.json"

    def save(self) -> None:
        """Write this worker's counts to its file in the shared folder (atomically: a scrape never reads half)."""
        path = self._file()
        if path is None:
            return
        temporary = path.with_suffix(".tmp")
        try:
            temporary.write_text(json.dumps(self._own().to_json()), encoding="utf-8")
            os.replace(temporary, path)
        except OSError:  # the folder went away (shutting down): the next save tries again
            return

    def collect(self) -> Iterator[Metric]:
        """Every family: this worker's live counts plus, with several workers, every other worker's last file."""
        counts = self._own()
        mine = self._file()
        if self.share is not None and mine is not None:
            with contextlib.suppress(OSError):
                for path in sorted(self.share.glob("worker-*.json")):
                    if path == mine:
                        continue
                    try:
                        counts.add(json.loads(path.read_text(encoding="utf-8")))
                    except (OSError, ValueError, KeyError, TypeError):  # mid-replace or torn: skipped this scrape
                        continue
        yield from counts.families()
