"""The fleet's OpenTelemetry instruments, and the rolling escalation-rate watch.

Instruments are built from whatever ``Meter`` the process has: the API's no-op meter when
telemetry is off (every ``add``/``record`` is then a cheap no-op), the SDK's when on. The
escalation monitor runs either way, because an Escalation Cascade Explosion (more than 60%
of recent nodes sent to Stage 2) is worth a log line even without a metrics backend.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping

from opentelemetry.metrics import CallbackOptions, Meter, Observation
from opentelemetry.util.types import AttributeValue

log = logging.getLogger("windags.metrics")

CASCADE_THRESHOLD = 0.6
"""Rolling escalation rate above which a worker reports an Escalation Cascade Explosion."""
CASCADE_WINDOW = 50
"""Router decisions the rolling rate is computed over."""
CASCADE_MIN_SAMPLES = 10
"""Fewer decisions than this say nothing about a cascade (a lone final deliverable is 100%)."""

PRIOR_VERSION = "seed-prior"
"""The model version recorded for a decision priced by the seed's prior (no calibration)."""

QueueDepths = Callable[[], Mapping[str, int]]
"""Reads the number of waiting messages per queue (LLEN of each kombu list)."""


class EscalationMonitor:
    """The escalation rate over the last ``window`` router decisions of this process.

    Thread-safe: the router runs a threads pool.
    """

    def __init__(
        self,
        *,
        window: int = CASCADE_WINDOW,
        threshold: float = CASCADE_THRESHOLD,
        min_samples: int = CASCADE_MIN_SAMPLES,
    ) -> None:
        self.threshold = threshold
        self.min_samples = min_samples
        self._recent: deque[bool] = deque(maxlen=window)
        self._lock = threading.Lock()
        self._cascading = False

    def observe(self, escalated: bool) -> bool:
        """Count one decision; True when this decision tipped the rate over the threshold.

        The warning is logged on the transition only, so a sustained cascade writes one
        line, not one per node.
        """
        with self._lock:
            self._recent.append(escalated)
            rate, samples = self._rate_locked(), len(self._recent)
            cascading = samples >= self.min_samples and rate > self.threshold
            tipped = cascading and not self._cascading
            self._cascading = cascading
        if tipped:
            log.warning(
                "escalation cascade: %.0f%% of the last %d nodes escalated to Stage 2 "
                "(threshold %.0f%%); check skill success rates and breaker states",
                rate * 100,
                samples,
                self.threshold * 100,
            )
        return tipped

    @property
    def rate(self) -> float:
        """Escalated share of the recent decisions (0 when there are none)."""
        with self._lock:
            return self._rate_locked()

    @property
    def cascading(self) -> bool:
        """Whether the rolling rate is above the threshold right now."""
        with self._lock:
            return self._cascading

    def _rate_locked(self) -> float:
        return sum(self._recent) / len(self._recent) if self._recent else 0.0


class Instruments:
    """Every metric the fleet records, created once per meter."""

    def __init__(
        self,
        meter: Meter,
        *,
        monitor: EscalationMonitor | None = None,
        queue_depths: QueueDepths | None = None,
    ) -> None:
        self.monitor = monitor if monitor is not None else EscalationMonitor()
        self._queue_depths = queue_depths
        self.reviews = meter.create_counter(
            "windags.reviews", unit="{review}", description="Published reviews, by decision."
        )
        self.escalations = meter.create_counter(
            "windags.escalation.decisions",
            unit="{decision}",
            description="Router decisions; escalated=true / all is the escalation rate.",
        )
        self.stage_duration = meter.create_histogram(
            "windags.stage.duration", unit="s", description="Time a stage's handler took."
        )
        self.judge_calls = meter.create_counter(
            "windags.judge.calls", unit="{call}", description="Judge evaluations, by outcome."
        )
        self.judge_errors = meter.create_counter(
            "windags.judge.errors", unit="{error}", description="Failed judge evaluations."
        )
        self.judge_tokens = meter.create_counter(
            "windags.judge.tokens", unit="{token}", description="Tokens judges consumed."
        )
        self.judge_parses = meter.create_counter(
            "windags.judge.parses",
            unit="{verdict}",
            description="How model verdicts were read: form (tool/text/unusable) and repaired.",
        )
        self.failure_probability = meter.create_histogram(
            "windags.escalation.failure_probability",
            unit="1",
            description="The router's P(fail | evidence), by the calibration model that priced it.",
        )
        self.expected_value = meter.create_histogram(
            "windags.escalation.expected_value",
            unit="USD",
            description="P(fail) x P(Stage 2 catches) x downstream waste, against Stage 2's cost.",
        )
        self.review_cost = meter.create_counter(
            "windags.review.cost", unit="USD", description="Review spend, by DAG."
        )
        self.refs_lookups = meter.create_counter(
            "windags.refs.lookups",
            unit="{url}",
            description="Cited URLs looked up, by source (own, cache, none) and outcome.",
        )
        self.refs_requests = meter.create_counter(
            "windags.refs.requests",
            unit="{request}",
            description="HTTP requests sent for cited URLs, by outcome and status.",
        )
        self.refs_refusals = meter.create_counter(
            "windags.refs.refusals",
            unit="{url}",
            description="Cited URLs the address policy refused (never fetched).",
        )
        self.refs_bytes = meter.create_counter(
            "windags.refs.bytes", unit="By", description="Body bytes read for cited URLs."
        )
        meter.create_observable_gauge(
            "windags.escalation.rolling_rate",
            callbacks=[self._observe_rate],
            unit="1",
            description=f"Escalation rate over this worker's last {CASCADE_WINDOW} decisions.",
        )
        meter.create_observable_gauge(
            "windags.escalation.cascade",
            callbacks=[self._observe_cascade],
            unit="1",
            description=f"1 while the rolling escalation rate exceeds {CASCADE_THRESHOLD:.0%}.",
        )
        meter.create_observable_gauge(
            "windags.queue.depth",
            callbacks=[self._observe_queues],
            unit="{message}",
            description="Messages waiting in each queue this worker consumes (LLEN).",
        )

    def record_escalation(
        self,
        escalated: bool,
        reason: str,
        *,
        failure_probability: float | None = None,
        expected_value: float | None = None,
        model_version: str = PRIOR_VERSION,
    ) -> None:
        """One router decision: the counter, the monitor, and what priced it."""
        self.escalations.add(1, {"escalated": escalated, "reason": reason})
        self.monitor.observe(escalated)
        priced: dict[str, AttributeValue] = {"model_version": model_version, "escalated": escalated}
        if failure_probability is not None:
            self.failure_probability.record(failure_probability, priced)
        if expected_value is not None:
            self.expected_value.record(expected_value, priced)

    def _observe_rate(self, _: CallbackOptions) -> Iterable[Observation]:
        return [Observation(self.monitor.rate)]

    def _observe_cascade(self, _: CallbackOptions) -> Iterable[Observation]:
        return [Observation(1 if self.monitor.cascading else 0)]

    def _observe_queues(self, _: CallbackOptions) -> Iterable[Observation]:
        if self._queue_depths is None:
            return []
        try:
            depths = self._queue_depths()
        except Exception as exc:  # a metrics callback must never break the export thread
            log.debug("queue depth unavailable: %s", exc)
            return []
        return [Observation(depth, {"queue": queue}) for queue, depth in depths.items()]
