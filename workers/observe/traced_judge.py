"""Tracing of judge calls, as a wrapper composed where the fleet builds its judge.

The judges stay free of observability: the fleet wraps whichever judge it built. Each
evaluation gets a ``windags.judge <tier>`` span with its model, tokens, cost, and how the
reply was read (tool call or JSON text, repaired or not, or unusable).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from opentelemetry.trace import Span, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from schemas.judging import JudgeTask, JudgeVerdict
from workers.errors import JudgeOutputError
from workers.judges.base import Judge
from workers.observe.spans import span
from workers.observe.telemetry import current


class TracedJudge:
    """``inner.evaluate`` inside a ``windags.judge <tier>`` span, counted in the metrics."""

    def __init__(self, inner: Judge, name: str | None = None) -> None:
        self._inner = inner
        self._name = name or type(inner).__name__

    def evaluate(self, task: JudgeTask) -> JudgeVerdict:
        """Evaluate, recording model, tokens and cost, or the error's class."""
        with judge_call(task, self._name) as call:
            verdict = self._inner.evaluate(task)
            call.done(verdict)
        return verdict


class JudgeCall:
    """What ``judge_call`` yields: report the verdict with ``done``."""

    def __init__(self, opened: Span, tier: str, model: str) -> None:
        self._span = opened
        self._tier = tier
        self.model = model

    def done(self, verdict: JudgeVerdict) -> None:
        """Record model, tokens and cost of a successful evaluation."""
        self.model = verdict.model
        usage = verdict.usage
        instruments = current().instruments
        instruments.judge_calls.add(
            1, {"model": verdict.model, "tier": self._tier, "outcome": "ok"}
        )
        for kind, count in (("input", usage.input_tokens), ("output", usage.output_tokens)):
            if count:
                instruments.judge_tokens.add(count, {"model": verdict.model, "type": kind})
        parse = verdict.parse
        if parse is not None and verdict.calls:  # a cached verdict was not read again
            instruments.judge_parses.add(
                1,
                {
                    "model": verdict.model,
                    "tier": self._tier,
                    "form": parse.form.value,
                    "repaired": parse.repaired,
                },
            )
        if self._span.is_recording():
            attributes: dict[str, AttributeValue] = {
                "gen_ai.response.model": verdict.model,
                "gen_ai.usage.input_tokens": usage.input_tokens,
                "gen_ai.usage.output_tokens": usage.output_tokens,
                "windags.judge.cache_read_tokens": usage.cache_read_input_tokens,
                "windags.judge.cost_usd": verdict.cost_usd,
                "windags.judge.calls": verdict.calls,
            }
            if parse is not None:
                attributes["windags.judge.parse.form"] = parse.form.value
                attributes["windags.judge.parse.repaired"] = parse.repaired
                if parse.first_error:
                    attributes["windags.judge.parse.first_error"] = parse.first_error[:300]
            self._span.set_attributes(attributes)


@contextmanager
def judge_call(task: JudgeTask, model: str) -> Iterator[JudgeCall]:
    """A span around one ``judge.evaluate``; a raised error is counted by its class."""
    tier = task.tier.value
    attributes: dict[str, AttributeValue] = {
        "windags.judge.tier": tier,
        "gen_ai.request.model": model,
        "windags.judge.dimensions": [d.value for d in task.dimensions],
    }
    with span(f"windags.judge {tier}", attributes=attributes) as opened:
        call = JudgeCall(opened, tier, model)
        try:
            yield call
        except Exception as exc:
            error_class = type(exc).__name__
            current().instruments.judge_calls.add(
                1, {"model": model, "tier": tier, "outcome": "error"}
            )
            current().instruments.judge_errors.add(
                1, {"model": model, "tier": tier, "error_class": error_class}
            )
            if isinstance(exc, JudgeOutputError):  # answered, twice, and neither validated
                current().instruments.judge_parses.add(
                    1, {"model": model, "tier": tier, "form": "unusable", "repaired": True}
                )
            if opened.is_recording():
                opened.set_attribute("error.type", error_class)
                if isinstance(exc, JudgeOutputError):  # what the unusable replies took
                    opened.set_attributes(
                        {
                            "windags.judge.parse.form": "unusable",
                            "windags.judge.parse.repaired": True,
                            "gen_ai.usage.input_tokens": exc.input_tokens,
                            "gen_ai.usage.output_tokens": exc.output_tokens,
                            "windags.judge.calls": exc.calls,
                        }
                    )
                opened.set_status(Status(StatusCode.ERROR, str(exc)[:200]))
            raise
