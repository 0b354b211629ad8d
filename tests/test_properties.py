"""Properties of the formulas and the pipeline, checked with hypothesis."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.judging import ModelPrice
from schemas.quality import Dimension
from schemas.request import ReviewRequest, Signals
from schemas.result import FloorResult, Stage1Result, WallResolution, WallResult
from workers.evaluate.escalation.formula import (
    decide_escalation,
    downstream_waste,
    failure_probability,
)
from workers.evaluate.verdict.confidence import aggregate_confidence
from workers.evaluate.verdict.convergence import monitor_convergence
from workers.evaluate.wall.scoring import resolve_wall
from workers.intake import decode_request
from workers.judges.builtin import BuiltinJudge
from workers.review import review

PRICE = ModelPrice(
    input_per_mtok=3.0, output_per_mtok=15.0, cache_read_per_mtok=0.3, cache_write_per_mtok=3.75
)
PASSED = Stage1Result(
    passed=True, floor=FloorResult(passed=True), wall=WallResult(passed=True, grade=1.0)
)
STAGES = ["expert", "journeyman", "novice"]
BREAKERS = ["closed", "half_open", "open"]
FAST = settings(max_examples=60, deadline=None)

unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
usd = st.floats(min_value=0.0, max_value=10.0, allow_nan=False)


def _request(**fields: Any) -> ReviewRequest:
    base: dict[str, Any] = {
        "dag_id": "dag-1",
        "node_id": "node-1",
        "skill": {"id": "s", "success_rate": 0.9},
        "output": {"kind": "text", "content": "The export job streams rows in batches."},
        "node_cost_usd": 0.02,
    }
    base.update(fields)
    return decode_request(
        json.dumps(base).encode(), max_request_bytes=5_000_000, max_output_chars=1_000_000
    )


def _p_fail(rate: float, stage: int, breaker: int) -> float:
    skill = {"id": "s", "success_rate": rate, "stage": STAGES[stage], "breaker": BREAKERS[breaker]}
    return failure_probability(_request(skill=skill))[0]


@FAST
@given(
    a=unit,
    b=unit,
    stage=st.integers(0, 2),
    breaker=st.integers(0, 2),
)
def test_failure_probability_is_monotone_in_failure_rate(
    a: float, b: float, stage: int, breaker: int
) -> None:
    low, high = sorted((a, b))
    assert _p_fail(high, stage, breaker) <= _p_fail(low, stage, breaker)


@FAST
@given(
    rate=unit,
    s1=st.integers(0, 2),
    s2=st.integers(0, 2),
    b1=st.integers(0, 2),
    b2=st.integers(0, 2),
)
def test_failure_probability_is_monotone_in_stage_factor_and_breaker_penalty(
    rate: float, s1: int, s2: int, b1: int, b2: int
) -> None:
    (sl, sh), (bl, bh) = sorted((s1, s2)), sorted((b1, b2))
    assert _p_fail(rate, sl, bl) <= _p_fail(rate, sh, bl)
    assert _p_fail(rate, sl, bl) <= _p_fail(rate, sl, bh)
    assert 0.01 <= _p_fail(rate, sh, bh) <= 1.0


@FAST
@given(
    node=usd,
    costs=st.lists(usd, max_size=6),
    extra=usd,
    c1=unit,
    c2=unit,
)
def test_downstream_waste_is_capped_and_monotone_in_costs_and_cascade(
    node: float, costs: list[float], extra: float, c1: float, c2: float
) -> None:
    lo, hi = sorted((c1, c2))

    def waste(costs: list[float], cascade: float) -> float:
        down = [{"node_id": f"d{i}", "cost_usd": c} for i, c in enumerate(costs)]
        req = _request(node_cost_usd=node, downstream=down, cascade_probability=cascade)
        return downstream_waste(req)[0]

    base = waste(costs, lo)
    assert 0.0 <= base <= 5 * node + 1e-12
    assert base <= waste([*costs, extra], lo) + 1e-12
    assert base <= waste(costs, hi) + 1e-12


@FAST
@given(rate=unit, node=usd, costs=st.lists(usd, max_size=4), s2a=usd, s2b=usd)
def test_escalation_is_monotone_in_stage2_cost_and_explained_by_its_breakdown(
    rate: float, node: float, costs: list[float], s2a: float, s2b: float
) -> None:
    cheap, dear = sorted((s2a, s2b))

    def decide(cost: float) -> bool:
        down = [{"node_id": f"d{i}", "cost_usd": c} for i, c in enumerate(costs)]
        req = _request(
            skill={"id": "s", "success_rate": rate, "stage": "novice"},
            node_cost_usd=node,
            downstream=down,
            stage2_cost_usd=cost,
        )
        decision = decide_escalation(req, stage2_price=PRICE, stage1=PASSED)
        assert decision.escalate is (decision.expected_waste > decision.stage2_cost)
        return decision.escalate

    if decide(dear):
        assert decide(cheap)


@FAST
@given(rate_a=unit, rate_b=unit)
def test_escalation_is_monotone_in_expected_waste(rate_a: float, rate_b: float) -> None:
    def decide(rate: float) -> bool:
        req = _request(
            skill={"id": "s", "success_rate": rate},
            node_cost_usd=0.05,
            downstream=[{"node_id": "d", "cost_usd": 0.2}],
            stage2_cost_usd=0.02,
        )
        return decide_escalation(req, stage2_price=PRICE, stage1=PASSED).escalate

    safer, riskier = sorted((rate_a, rate_b), reverse=True)
    if decide(safer):
        assert decide(riskier)


signal = st.one_of(st.none(), unit)


@FAST
@given(
    self_=signal,
    peer=signal,
    downstream=signal,
    human=signal,
    expertise=st.booleans(),
    reliability=signal,
    critical=st.booleans(),
)
def test_confidence_weights_renormalise_and_score_stays_within_the_signals(
    self_: float | None,
    peer: float | None,
    downstream: float | None,
    human: float | None,
    expertise: bool,
    reliability: float | None,
    critical: bool,
) -> None:
    raw = {
        "self": self_,
        "peer": peer,
        "downstream": downstream,
        "human": human,
        "peer_has_expertise": expertise,
        "peer_reliability": reliability,
    }
    signals = Signals.model_validate_json(json.dumps(raw))
    confidence = aggregate_confidence(signals, downstream_critical=critical)
    present = {
        k: v
        for k, v in (("peer", peer), ("downstream", downstream), ("human", human))
        if v is not None
    }
    assert set(confidence.weights) == set(present)
    if not present:
        assert confidence.score is None
        return
    assert confidence.score is not None
    total = sum(confidence.weights.values())
    assert abs(sum(w / total for w in confidence.weights.values()) - 1.0) < 1e-9
    recomputed = sum(present[k] * w for k, w in confidence.weights.items()) / total
    assert abs(confidence.score - recomputed) < 1e-5
    assert min(present.values()) - 1e-6 <= confidence.score <= max(present.values()) + 1e-6
    without_self = aggregate_confidence(
        Signals.model_validate_json(json.dumps({**raw, "self": None})), downstream_critical=critical
    )
    assert without_self.score == confidence.score


ORDER = {WallResolution.FAIL: 0, WallResolution.PASS_WITH_WARNING: 1, WallResolution.PASS: 2}


@FAST
@given(a=unit, b=unit, critical=st.booleans())
def test_wall_resolution_is_monotone_in_grade(a: float, b: float, critical: bool) -> None:
    low, high = sorted((a, b))
    lo = resolve_wall(low, feeds_critical_path=critical)
    hi = resolve_wall(high, feeds_critical_path=critical)
    assert ORDER[lo] <= ORDER[hi]
    assert resolve_wall(low, feeds_critical_path=True) is not WallResolution.PASS_WITH_WARNING


@settings(max_examples=150, deadline=None)
@given(history=st.lists(unit, max_size=30), current=unit)
def test_convergence_never_crashes_and_names_a_real_best_attempt(
    history: list[float], current: float
) -> None:
    convergence = monitor_convergence(history, current)
    scores = convergence.scores
    assert len(scores) == len(history) + 1
    assert 1 <= convergence.best_attempt <= len(scores)
    assert scores[convergence.best_attempt - 1] == max(scores)


KINDS = ["text", "json", "python", "sql", "markdown"]


@settings(max_examples=80, deadline=None)
@given(
    kind=st.sampled_from(KINDS),
    content=st.text(max_size=3000),
    flags=st.fixed_dictionaries(
        {"final_deliverable": st.booleans(), "irreversible": st.booleans()}
    ),
    with_baseline=st.booleans(),
)
def test_pipeline_never_raises_on_arbitrary_content_and_always_has_an_envelope(
    kind: str, content: str, flags: dict[str, bool], with_baseline: bool
) -> None:
    fields: dict[str, Any] = {"output": {"kind": kind, "content": content}, "flags": flags}
    if with_baseline:
        fields["baseline"] = {"kind": kind, "content": content[::-1]}
    req = _request(**fields)
    result = review(req, BuiltinJudge(), stage2_price=PRICE)
    assert result.envelope is not None
    assert result.envelope.output_chars == len(content)
    if not result.stage1.floor.passed:
        assert result.stage2 is None
        assert result.stage1.wall.resolution is WallResolution.NOT_RUN


@settings(max_examples=40, deadline=None)
@given(
    kind=st.sampled_from(["python", "sql", "json"]),
    content=st.text(alphabet=st.characters(codec="utf-8"), max_size=2000).map(
        lambda s: "(" * 50 + s + "[" * 50
    ),
)
def test_pipeline_survives_deeply_nested_and_unbalanced_code(kind: str, content: str) -> None:
    result = review(
        _request(output={"kind": kind, "content": content}), BuiltinJudge(), stage2_price=PRICE
    )
    assert result.envelope is not None
    assert result.stage1.floor.passed is False


_PROSE_PIECES = st.sampled_from(
    [
        "Acme",
        "Robotics",
        "was",
        "founded",
        "in",
        "1998",
        "by",
        "Maria",
        "Lopez",
        "2,586",
        "twenty-nine",
        "Kenyan",
        '"quoted words here"',
        "[1]",
        "[doc-2]",
        "http://x.y/z",
        "https://[::1",
        "http://%s",
        "(RFC 7692)",
        "(Smith, 2150)",
        ".",
        ",",
        "\n",
        "not",
        "He'll",
        "One",
        "of",
        "April",
        "5",
        "1930s",
        "20th",
        "L.A.",
        "`code`",
        "é",
        "∑",
        # How outputs relate names (choices, denials, makers): choices.py, denials.py and
        # attributions.py in workers/evaluate/wall/grounding/.
        "or",
        "?",
        "Which",
        "first",
        "older",
        "more",
        "written",
        "wrote",
        "directed",
        "author",
        "wasn't",
        "J.K.",
        'Report."Next',
    ]
)
_PROSE = st.lists(_PROSE_PIECES, max_size=60).map(" ".join)


@settings(max_examples=80, deadline=None)
@given(
    content=st.one_of(_PROSE, st.text(max_size=1500)),
    source=st.one_of(_PROSE, st.text(max_size=1500)),
    policy=st.sampled_from(["extractive", "abstractive", "open"]),
    kind=st.sampled_from(["text", "markdown", "json"]),
    task=st.one_of(st.just("Answer from the sources."), _PROSE.map(lambda q: f"{q} or {q}?")),
)
def test_grounding_against_sources_never_raises_and_scores_stay_in_range(
    content: str, source: str, policy: str, kind: str, task: str
) -> None:
    req = _request(
        output={"kind": kind, "content": content or "x"},
        sources=[{"id": "s1", "text": source}, {"id": "s2", "text": content[::-1]}],
        grounding=policy,
        task=task,
    )
    result = review(req, BuiltinJudge(), stage2_price=PRICE)
    for dimension in Dimension:
        score = result.quality.get(dimension)
        assert score.value is None or 0.0 <= score.value <= 1.0
