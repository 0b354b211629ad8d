"""Grounding against the node's input: hand-made source/answer pairs, each with a clean twin."""

from __future__ import annotations

import json

from schemas.hops import Stage1Report
from schemas.quality import Dimension
from schemas.request import GroundingPolicy, Source
from workers.evaluate.stage1 import run_stage1
from workers.evaluate.wall.grounding.checks import NO_SOURCES, check_grounding, grounding_scope
from workers.evaluate.wall.scoring import score_wall

from .builders import output, request

ACME = Source(
    id="acme-wiki",
    text=(
        "Acme Robotics was founded in 1998 by Maria Lopez in Lyon, France. "
        "The company employs 1,250 people and builds warehouse robots. "
        "Its flagship model, the Carrier X2, lifts up to 400 kilograms."
    ),
    url="https://wiki.example/acme",
)
TASK = "When was Acme Robotics founded, and who founded it?"
ABSTRACTIVE = GroundingPolicy.ABSTRACTIVE


def codes(kind: str, content: str, *sources: Source, task: str | None = TASK) -> list[str]:
    """The codes found under the abstractive policy, declared (these tests' subject)."""
    found = check_grounding(output(kind, content), task=task, sources=sources, policy=ABSTRACTIVE)
    return [f.issue.code for f in found]


def grounding(content: str, *sources: Source, task: str | None = TASK) -> float:
    """The grounding score shown (suspect findings included), under abstractive, declared."""
    wall = score_wall(output("text", content), task=task, sources=sources, grounding=ABSTRACTIVE)
    return wall.scores[Dimension.GROUNDING]


def test_grounded_answer_passes() -> None:
    answer = "Acme Robotics was founded in 1998 by Maria Lopez, in Lyon."
    assert codes("text", answer, ACME) == []
    assert grounding(answer, ACME) == 1.0


def test_short_answer_with_an_unsupported_key_name_fails() -> None:
    assert grounding("Maria Lopez.", ACME) == 1.0
    score = grounding("Jean Dupont.", ACME)
    assert score < 0.6
    assert "UnsupportedName" in codes("text", "Jean Dupont.", ACME)


def test_one_stray_word_does_not_fail_a_long_grounded_answer() -> None:
    answer = (
        "Acme Robotics was founded in 1998 by Maria Lopez in Lyon, France. "
        "The company employs 1,250 people and builds warehouse robots. "
        "Its flagship model, the Carrier X2, lifts up to 400 kilograms, impressively."
    )
    assert grounding(answer, ACME) >= 0.8


def test_a_number_the_source_states_differently_is_a_contradiction() -> None:
    wall = score_wall(
        output("text", "Acme Robotics was founded in 2001 by Maria Lopez."),
        task=TASK,
        sources=[ACME],
    )
    issues = {str(f.issue.code): f.issue for f in wall.findings}
    clash = issues["ContradictsInput"]
    assert clash.dimension is Dimension.CONSISTENCY
    assert "2001" in clash.message and "1998" in clash.message and "acme-wiki" in clash.message
    assert wall.scores[Dimension.CONSISTENCY] < 1.0


def test_unsupported_spans_name_the_source_they_were_checked_against() -> None:
    found = check_grounding(
        output("text", "Acme Robotics was founded by Jean Dupont in Lyon."),
        task=TASK,
        sources=[ACME],
    )
    (name,) = [f.issue for f in found if f.issue.code == "UnsupportedName"]
    assert name.field == "Jean Dupont"
    assert "acme-wiki" in name.message and name.fix


def test_round_figures_and_acronyms_are_supported() -> None:
    source = Source(id="s", text="The Robert Downey Jr. film earned 722,664 dollars.")
    assert codes("text", "The RDJ film earned about 720,000 dollars.", source, task=None) == []


def test_citations_resolve_by_index_id_or_url() -> None:
    other = Source(id="doc-7", text="Lyon is in France.")
    fine = "Acme was founded in 1998 [1]. Lyon is in France [doc-7] (https://wiki.example/acme)."
    assert "UnresolvedCitation" not in codes("text", fine, ACME, other)
    assert (
        codes("text", "Acme was founded in 1998 [3].", ACME, other).count("UnresolvedCitation") == 1
    )
    assert "UnresolvedCitation" in codes("text", "Founded in 1998 [doc-9].", ACME, other)


def test_quotations_must_occur_in_the_cited_source() -> None:
    quoted = 'The wiki says it "employs 1,250   PEOPLE and builds warehouse robots" [1].'
    assert "UnsupportedQuote" not in codes("text", quoted, ACME)
    made_up = 'The wiki says it "employs two thousand engineers in Paris" [1].'
    assert "UnsupportedQuote" in codes("text", made_up, ACME)


def test_without_sources_nothing_is_checked_against_the_input_and_the_review_says_so() -> None:
    assert codes("text", "Jean Dupont founded Acme in 2001.", task=TASK) == []
    assert grounding_scope(None, 0) == NO_SOURCES
    report = run_stage1(request(task=TASK, output={"kind": "text", "content": "Jean Dupont."}))
    assert NO_SOURCES in report.quality.grounding.justification


def test_a_declared_extractive_policy_fails_an_unsupported_short_answer() -> None:
    source = json.loads(ACME.model_dump_json())
    critical = [{"node_id": "next", "cost_usd": 0.1, "critical": True}]

    def review(answer: str) -> Stage1Report:
        return run_stage1(
            request(
                task=TASK,
                sources=[source],
                downstream=critical,
                output={"kind": "text", "content": answer},
                grounding="extractive",
            )
        )

    bad, good = review("Jean Dupont."), review("Maria Lopez.")
    assert not bad.stage1.wall.passed
    assert good.stage1.wall.passed
    assert "1 given source" in good.quality.grounding.justification
    assert "(declared)" in good.quality.grounding.justification


def test_json_outputs_are_checked_on_their_string_values_only() -> None:
    document = json.dumps({"founded": 1998, "founder": "Maria Lopez", "ids": [[1], 2]})
    assert codes("json", document, ACME) == []
    wrong = json.dumps({"founded": 1998, "founder": "Jean Dupont"})
    assert "UnsupportedName" in codes("json", wrong, ACME)


def test_json_arrays_are_not_citation_markers_but_markers_in_strings_are() -> None:
    assert codes("json", json.dumps({"rows": [0], "nested": [[1], 2]}), task=None) == []
    cited = json.dumps({"summary": "Caching halves latency [1]."})
    assert codes("json", cited, task=None) == ["DanglingCitation"]


def test_the_citation_year_bound_is_read_when_the_check_runs() -> None:
    text = output("text", "Latency fell sharply after the change (Smith, 2030) in our runs.")
    assert [f.issue.code for f in check_grounding(text, year=2026)] == ["FabricatedCitation"]
    assert check_grounding(text, year=2031) == []
