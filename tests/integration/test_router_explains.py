"""Every routing decision explains itself (issue 15): the router's span and metrics carry the
prior, the skill posterior, each evidence term, the posterior, the catch rate, the model
version and the expected value, for a review routed through the real handler and Redis."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from schemas.result import ReviewResult
from tests.evaluate.test_calibration import _outcomes
from tests.integration.support import sample
from tests.integration.test_handlers import results, run_router, scratch_deps, through_stage1
from workers.evaluate.escalation.calibration import fit
from workers.fleet.deps import Deps
from workers.observe import spans, telemetry
from workers.records.calibration import CalibrationStore

pytestmark = pytest.mark.integration


@pytest.fixture
def deps(redis_url: str) -> Iterator[Deps]:
    with scratch_deps(redis_url, "explain") as built:
        yield built


@pytest.fixture
def exported(deps: Deps) -> Iterator[tuple[InMemorySpanExporter, InMemoryMetricReader]]:
    exporter, reader = InMemorySpanExporter(), InMemoryMetricReader()
    telemetry.setup(deps.settings, span_exporter=exporter, metric_reader=reader,
                    install_global=False, instrument_celery=False)  # fmt: skip
    yield exporter, reader
    telemetry.shutdown()


def _points(reader: InMemoryMetricReader, name: str) -> list[Any]:
    data = reader.get_metrics_data()
    assert data is not None
    return [p for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics
            if m.name == name for p in m.data.data_points]  # fmt: skip


def test_a_routed_review_carries_its_whole_breakdown_on_the_span_and_in_metrics(
    deps: Deps, exported: tuple[InMemorySpanExporter, InMemoryMetricReader]
) -> None:
    exporter, reader = exported
    model = fit(_outcomes(600), version="v3-n600", min_outcomes=200)
    CalibrationStore(deps.redis, deps.keys, refresh_s=0.0).save(model)
    hop = through_stage1(deps, sample("good_python.json", dag_id="explain"))
    with spans.stage_span("router"):
        assert run_router(hop, deps) is None

    [result] = results(deps, "explain")
    assert isinstance(result, ReviewResult)
    decision = result.escalation
    [router] = [s for s in exporter.get_finished_spans() if s.name == "windags.router"]
    attrs = dict(router.attributes or {})
    esc = "windags.escalation."
    assert attrs[esc + "model_version"] == "v3-n600" == decision.model_version
    for name in ("prior_failure_probability", "skill_success_rate", "catch_rate",
                 "expected_value", "raw_failure_probability", "failure_probability"):  # fmt: skip
        assert attrs[esc + name] == getattr(decision, name), name
    terms = {k.removeprefix(esc + "evidence."): v for k, v in attrs.items()
             if k.startswith(esc + "evidence.")}  # fmt: skip
    assert terms == decision.evidence_terms and {"bias", "prior_logit", "wall_gap"} <= set(terms)
    # The terms re-derive the posterior, and the value is P(fail) x catch rate x waste.
    logit = sum(decision.evidence_terms.values())
    assert 1.0 / (1.0 + math.exp(-logit)) == pytest.approx(
        decision.raw_failure_probability, abs=1e-4
    )
    assert decision.catch_rate is not None and decision.expected_value is not None
    assert decision.expected_value == pytest.approx(
        decision.failure_probability * decision.downstream_waste * decision.catch_rate, abs=1e-6
    )
    [point] = _points(reader, "windags.escalation.failure_probability")
    assert dict(point.attributes) == {"model_version": "v3-n600", "escalated": False}
    assert point.count == 1 and point.sum == pytest.approx(decision.failure_probability)
    [value] = _points(reader, "windags.escalation.expected_value")
    assert value.sum == pytest.approx(decision.expected_value)


def test_a_decision_on_the_prior_is_labelled_as_such(
    deps: Deps, exported: tuple[InMemorySpanExporter, InMemoryMetricReader]
) -> None:
    exporter, reader = exported
    hop = through_stage1(deps, sample("good_python.json", dag_id="explain-prior"))
    with spans.stage_span("router"):
        assert run_router(hop, deps) is None
    [router] = [s for s in exporter.get_finished_spans() if s.name == "windags.router"]
    attrs = dict(router.attributes or {})
    assert attrs["windags.escalation.model_version"] == "seed-prior"
    assert not any(k.startswith("windags.escalation.evidence.") for k in attrs)
    assert attrs["windags.escalation.catch_rate"] == 1.0
    [point] = _points(reader, "windags.escalation.failure_probability")
    assert dict(point.attributes)["model_version"] == "seed-prior"
