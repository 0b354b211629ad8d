"""The learned router's model: what Stage 1 saw, what happened, and the fitted map.

The model is data, not code: it is fitted offline from outcomes, stored, versioned and
read by the router, so a decision can name the model that priced it (issue 15).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from schemas.base import Unit, WireModel

Count = Annotated[int, Field(ge=0)]


class Evidence(WireModel):
    """What Stage 1 observed of one node: the calibration map's inputs."""

    wall_grade: Unit | None = None
    """The Wall's grade; null when the Wall did not run."""
    wall_issues: Count = 0
    """How many issues the Wall found, definite or suspect: a suspect finding no cold-start
    weight covers (an unsupported claim in an output with no input to check it against)
    is evidence only through this count."""
    suspicion: float = 0.0
    """The log-odds Stage 1's suspect findings add to P(fail) (``evaluate.suspicion``)."""
    floor_violations: Count = 0
    """How many Floor violations (a failing Floor short-circuits; kept for completeness)."""
    disagreement: Unit | None = None
    """|peer - downstream| when the caller sent both signals."""
    kind: str = "text"
    """The output kind."""
    attempt: Annotated[int, Field(ge=1)] = 1
    """The attempt number: a retry is evidence that the first try failed."""


class TrainingOutcome(WireModel):
    """One labelled node: the prior the router had, Stage 1's evidence, and the truth."""

    skill_id: str
    """The skill that produced the output."""
    claimed_success_rate: Unit
    """The success rate the caller claimed for the skill."""
    prior: Unit
    """The seed formula's P(fail) for the node (claimed rate x stage x breaker)."""
    evidence: Evidence
    """What Stage 1 saw."""
    failed: bool
    """Whether the output turned out bad (human, downstream or Stage 2 label)."""
    stage2_caught: bool | None = None
    """For a bad output Stage 2 reviewed: whether it caught it; else null."""
    prior_scale: Annotated[float, Field(gt=0.0)] | None = None
    """Stage factor x breaker penalty, so a fit can price the prior with the skill's
    posterior success rate as the router does; null on records older than it (then
    ``prior`` is used as is)."""


class SkillRecord(WireModel):
    """A skill's observed record: the Beta posterior's counts."""

    successes: Count = 0
    """Outcomes labelled good."""
    failures: Count = 0
    """Outcomes labelled bad."""
    claimed: Unit | None = None
    """The mean success rate callers claimed for the skill over those outcomes."""


class EvaluatorRecord(WireModel):
    """How often one evaluator's label agreed with the truth another source gave."""

    agreed: Count = 0
    """Labels on the same side of the pass bar as the truth."""
    graded: Count = 0
    """Labels that had a truth from someone else to be graded against."""


class CalibrationModel(WireModel):
    """A fitted calibration: per-skill records, evidence weights and Stage 2's catch rate."""

    version: str
    """Names the fit (``v<seq>-n<outcomes>``); recorded in every decision it priced."""
    outcomes: Count = 0
    """How many outcomes it was fitted on."""
    min_outcomes: Count = 200
    """Below this many outcomes the evidence map is not used (prior only)."""
    pseudo_count: Annotated[float, Field(gt=0.0)] = 20.0
    """Weight of the claimed success rate, in outcomes, in each skill's Beta prior."""
    skills: dict[str, SkillRecord] = Field(default_factory=dict)
    """Observed record per skill."""
    bias: float = 0.0
    """The logistic map's intercept."""
    weights: dict[str, float] = Field(default_factory=dict)
    """The logistic map's weight per evidence feature (see ``features``)."""
    catches: Count = 0
    """Bad outputs Stage 2 reviewed and caught."""
    misses: Count = 0
    """Bad outputs Stage 2 reviewed and passed."""
    catch_bias: float = 0.0
    """Intercept of the map from evidence to P(Stage 2 catches | fail)."""
    catch_weights: dict[str, float] = Field(default_factory=dict)
    """Weights of that map; empty until Stage 2 has ``min_outcomes // 10`` graded reviews."""
    evaluators: dict[str, EvaluatorRecord] = Field(default_factory=dict)
    """Each evaluator's agreement with the truth: the historical reliability the conflict
    rules read when a request does not carry one (``peer:<skill>`` for peer signals)."""
