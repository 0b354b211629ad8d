"""Stage 1 decides what it knows; what it suspects is evidence for the router.

Suspect findings never send an output back on their own: they lower the grounding score
shown, the decision reads the definite score, and on a fresh deployment their fitted
likelihood ratios move P(fail), so the router escalates where the formula says it pays.
"""

from __future__ import annotations

import math

from schemas.quality import Dimension
from schemas.request import GroundingPolicy, Source
from schemas.stages import Certainty, GroundingUse, IssueCode, WallIssue, WallResult
from workers.evaluate import decide_escalation, run_stage1
from workers.evaluate.escalation.suspicion import (
    BASELINE,
    CodeWeights,
    PolicyWeights,
    suspicion_terms,
)
from workers.evaluate.wall.certainty import LACKED_BY_INPUT, certainty_of
from workers.evaluate.wall.grounding.number_clash import keeps_to, qualifier
from workers.evaluate.wall.scoring import score_wall
from workers.judges.builtin import BuiltinJudge
from workers.review import review

from .builders import PRICE, output, request

ACME = Source(
    id="acme",
    text=(
        "Acme Robotics was founded in 1998 by Maria Lopez in Lyon, France. "
        "The company employs 1,250 people and builds warehouse robots."
    ),
)
DECLARED = GroundingUse(policy=GroundingPolicy.EXTRACTIVE, declared=True, reason="declared")
INFERRED = GroundingUse(policy=GroundingPolicy.EXTRACTIVE, declared=False, reason="a question")
OPEN = GroundingUse(policy=GroundingPolicy.OPEN, declared=False, reason="a dialogue turn")


def test_what_the_input_lacks_is_definite_only_under_a_declared_extractive_policy() -> None:
    for code in LACKED_BY_INPUT:
        assert certainty_of(code, DECLARED) is Certainty.DEFINITE
        assert certainty_of(code, INFERRED) is Certainty.SUSPECT
        assert certainty_of(code, OPEN) is Certainty.SUSPECT
    for code in (
        IssueCode.CONTRADICTS_INPUT,
        IssueCode.UNSUPPORTED_QUOTE,
        IssueCode.UNRESOLVED_CITATION,
        IssueCode.CONTRADICTION,
        IssueCode.HALLUCINATED_API,
        IssueCode.FILLER,
    ):
        assert certainty_of(code, OPEN) is Certainty.DEFINITE
        assert certainty_of(code, None) is Certainty.DEFINITE
    assert certainty_of(IssueCode.UNSUPPORTED_CLAIM, None) is Certainty.SUSPECT


def test_suspect_findings_lower_the_score_shown_but_not_the_grade() -> None:
    reply = "Maria Lopez founded Acme Robotics; she later worked with Jean Dupont at Renault."
    wall = score_wall(output("text", reply), sources=(ACME,), grounding=GroundingPolicy.OPEN)
    assert wall.scores[Dimension.GROUNDING] < 0.8
    assert wall.definite[Dimension.GROUNDING] == 1.0
    assert wall.grade == 1.0
    suspects = {f.issue.code for f in wall.findings if f.issue.certainty is Certainty.SUSPECT}
    assert IssueCode.UNSUPPORTED_NAME in suspects


def test_an_output_with_only_suspect_findings_is_not_sent_back() -> None:
    reply = "Maria Lopez founded Acme Robotics; she later worked with Jean Dupont at Renault."
    result = review(
        request(
            task="Tell me about Acme.",
            sources=[ACME.model_dump(exclude_none=True)],
            output={"kind": "text", "content": reply},
            grounding="open",
        ),
        BuiltinJudge(),
        stage2_price=PRICE,
    )
    grounding = result.quality.grounding
    assert grounding.value is not None and grounding.value < 0.8
    assert grounding.definite == 1.0 and grounding.gate == 1.0
    assert result.decision.value == "accept"
    assert any(i.certainty is Certainty.SUSPECT for i in result.stage1.wall.issues)
    assert "suspect:" in grounding.justification


def _wall(*issues: WallIssue, use: GroundingUse | None = INFERRED) -> WallResult:
    return WallResult(passed=True, grade=1.0, issues=issues, grounding=use)


def _suspect(code: IssueCode, penalty: float) -> WallIssue:
    return WallIssue(
        dimension=Dimension.GROUNDING,
        code=code,
        message="m",
        certainty=Certainty.SUSPECT,
        penalty=penalty,
    )


def test_suspicion_terms_add_each_codes_likelihood_ratio_to_the_baseline() -> None:
    table = {
        GroundingPolicy.EXTRACTIVE: PolicyWeights(
            baseline=-1.0, codes={IssueCode.UNSUPPORTED_NAME: CodeWeights(count=2.0, penalty=1.0)}
        )
    }
    name = _suspect(IssueCode.UNSUPPORTED_NAME, 0.25)
    terms = suspicion_terms(_wall(name, name), table)
    assert terms[BASELINE] == -1.0
    assert math.isclose(terms["suspect:UnsupportedName"], 2.0 * math.log(3) + 0.5, abs_tol=1e-6)
    definite = name.model_copy(update={"certainty": Certainty.DEFINITE})
    assert suspicion_terms(_wall(definite), table) == {BASELINE: -1.0}  # definite: the Wall's
    assert suspicion_terms(_wall(name, use=None), table) == {}  # nothing was checked
    assert suspicion_terms(_wall(name, use=OPEN), table) == {}  # no weights for the policy


def test_a_fresh_deployment_without_sources_prices_the_seed_prior_exactly() -> None:
    report = run_stage1(request(downstream=[{"node_id": "n", "cost_usd": 0.12}]))
    decision = decide_escalation(request(), stage2_price=PRICE, stage1=report.stage1)
    assert decision.evidence_terms == {}
    assert decision.failure_probability == decision.prior_failure_probability


def test_suspicions_raise_p_fail_on_a_fresh_deployment_and_can_escalate() -> None:
    fields = {
        "task": "Who founded Acme Robotics?",
        "sources": [ACME.model_dump(exclude_none=True)],
        "node_cost_usd": 0.03,
        "downstream": [{"node_id": f"c{n}", "cost_usd": 0.2} for n in range(3)],
    }
    right = request(**fields, output={"kind": "text", "content": "Maria Lopez."})
    wrong = request(**fields, output={"kind": "text", "content": "Jean-Pierre Dubois."})
    priced = {}
    for name, req in (("right", right), ("wrong", wrong)):
        stage1 = run_stage1(req).stage1
        priced[name] = decide_escalation(req, stage2_price=PRICE, stage1=stage1)
    assert priced["wrong"].failure_probability > priced["right"].failure_probability
    assert any(k.startswith("suspect:Unsupported") for k in priced["wrong"].evidence_terms)
    assert priced["wrong"].escalate and not priced["right"].escalate
    total = sum(priced["wrong"].evidence_terms.values())
    assert math.isclose(
        priced["wrong"].raw_failure_probability, 1 / (1 + math.exp(-total)), abs_tol=1e-4
    )


def test_an_approximation_that_keeps_to_the_input_is_no_contradiction() -> None:
    text = "Acme Robotics employs more than 1,000 people."
    assert qualifier(text, "1,000") == "least"
    assert keeps_to("least", 1000, 1250) and not keeps_to("least", 2000, 1250)
    assert keeps_to("about", 1200, 1250) and not keeps_to("about", 3000, 1250)

    def codes(content: str) -> set[IssueCode]:
        wall = score_wall(output("text", content), sources=(ACME,), grounding=None)
        return {f.issue.code for f in wall.findings}

    assert IssueCode.CONTRADICTS_INPUT not in codes(text)
    assert IssueCode.CONTRADICTS_INPUT not in codes("Acme Robotics employs about 1,200 people.")
    assert IssueCode.CONTRADICTS_INPUT in codes("Acme Robotics employs more than 2,000 people.")
    assert IssueCode.CONTRADICTS_INPUT in codes("Acme Robotics employs 3,000 people.")


def test_a_weak_link_in_a_long_input_contradicts_nothing() -> None:
    filler = " ".join(f"On day {n} the team met again in the hall." for n in range(3, 20))
    long = Source(id="long", text=f"The museum opened on April 1. {filler}")
    short = Source(id="short", text="The museum opened on April 1.")
    content = "Visitors came on April 5."
    for source, clashes in ((short, True), (long, False)):
        wall = score_wall(output("text", content), sources=(source,), grounding=None)
        found = {f.issue.code for f in wall.findings}
        assert (IssueCode.CONTRADICTS_INPUT in found) is clashes, source.id
