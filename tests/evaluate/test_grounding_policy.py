"""Grounding policies (extractive, abstractive, open) and the prose readings behind them.

Each case has a clean twin, so every check is shown to pass good text and fail bad.
"""

from __future__ import annotations

from schemas.quality import Dimension
from schemas.request import GroundingPolicy, Source
from schemas.stages import Certainty, GroundingUse
from workers.evaluate.wall.grounding.checks import check_grounding, grounding_scope
from workers.evaluate.wall.grounding.lexicon import tokens
from workers.evaluate.wall.scoring import score_wall

from .builders import output

ACME = Source(
    id="acme-wiki",
    text=(
        "Acme Robotics was founded in 1998 by Maria Lopez in Lyon, France. "
        "The company employs 1,250 people and builds warehouse robots. "
        'It was profiled by the magazine "Robots Inc. Weekly" last year. '
        "Twenty-nine of its robots work in the Lyon depot."
    ),
)
EXTRACTIVE, ABSTRACTIVE, OPEN = GroundingPolicy


def grounding(content: str, policy: GroundingPolicy, task: str = "Who founded Acme?") -> float:
    scores = score_wall(output("text", content), task=task, sources=(ACME,), grounding=policy)
    return scores.scores[Dimension.GROUNDING]


def codes(content: str, policy: GroundingPolicy = ABSTRACTIVE, task: str = "") -> list[str]:
    found = check_grounding(output("text", content), task=task, sources=(ACME,), policy=policy)
    return [f.issue.code for f in found]


def test_extractive_answer_that_adds_a_word_fails_where_abstractive_tolerates_it() -> None:
    assert grounding("Maria Lopez founded it.", EXTRACTIVE) == 1.0
    assert grounding("Maria Lopez famously founded it.", ABSTRACTIVE) >= 0.8
    assert grounding("Maria Lopez famously founded it.", EXTRACTIVE) < 0.8


def test_extractive_counts_qualifiers_but_not_the_yes_or_no_of_an_answer() -> None:
    task = "Does Acme Robotics build warehouse robots?"
    assert grounding("Yes, it builds warehouse robots.", EXTRACTIVE, task) == 1.0
    assert grounding("No.", EXTRACTIVE, task) == 1.0
    assert grounding("Yes, it only builds warehouse robots.", ABSTRACTIVE, task) >= 0.8
    assert grounding("Yes, it only builds warehouse robots.", EXTRACTIVE, task) < 0.8


def test_extractive_needs_every_word_of_a_name() -> None:
    assert grounding("Maria Lopez Garcia.", ABSTRACTIVE) == 1.0  # most of the name
    assert grounding("Maria Lopez Garcia.", EXTRACTIVE) < 0.8


def test_extractive_numbers_are_the_inputs_exactly() -> None:
    source = Source(id="airport", text="The terminal handled 286,412 passengers in 2012.")
    task = "How many passengers did the terminal handle in 2012?"

    def score(content: str, policy: GroundingPolicy) -> float:
        wall = score_wall(output("text", content), task=task, sources=(source,), grounding=policy)
        return wall.scores[Dimension.GROUNDING]

    assert score("286,412 passengers.", EXTRACTIVE) == 1.0
    assert score("About 286,000 passengers.", ABSTRACTIVE) >= 0.8  # a round figure
    assert score("About 286,000 passengers.", EXTRACTIVE) < 0.8


def definite(content: str, policy: GroundingPolicy) -> list[str]:
    found = check_grounding(output("text", content), task="", sources=(ACME,), policy=policy)
    return [f.issue.code for f in found if f.issue.certainty is Certainty.DEFINITE]


def test_open_allows_outside_facts_but_not_contradictions_or_misquotes() -> None:
    outside = "Maria Lopez founded Acme Robotics; she once worked with Jean Dupont at Renault."
    wall = score_wall(output("text", outside), sources=(ACME,), grounding=OPEN)
    assert wall.definite[Dimension.GROUNDING] == 1.0  # outside facts decide nothing
    assert wall.scores[Dimension.GROUNDING] < 1.0  # but are evidence, shown
    assert definite(outside, OPEN) == []
    assert "ContradictsInput" in definite("Acme Robotics employs 1,400 people.", OPEN)
    assert codes("Acme Robotics employs 1,250 people.", OPEN) == []
    misquote = 'The wiki says the firm "builds delivery drones for hospitals".'
    assert definite(misquote, OPEN) == ["UnsupportedQuote"]
    assert definite('The wiki says the firm "builds warehouse robots".', OPEN) == []


def test_the_review_says_which_policy_it_checked_under_and_why() -> None:
    declared = GroundingUse(policy=EXTRACTIVE, declared=True, reason="declared by the request")
    assert "extractive" in grounding_scope(declared, 1)
    assert "(declared)" in grounding_scope(declared, 1)
    inferred = GroundingUse(policy=OPEN, declared=False, reason="a dialogue turn")
    assert "open" in grounding_scope(inferred, 0) and "(inferred)" in grounding_scope(inferred, 0)
    assert "the material in the task" in grounding_scope(inferred, 0)


def test_quotation_marks_pair_across_a_title_with_a_full_stop() -> None:
    # Split into sentences at "Inc.", the second pair of marks would enclose the words
    # between the two quotations and be reported as a misquote.
    prose = 'The magazine "Robots Inc. Weekly" profiled it: the company "builds warehouse robots".'
    assert codes(prose) == []


def test_hyphenated_number_words_are_one_number() -> None:
    (word,) = [t for t in tokens("Twenty-nine robots") if t.value is not None]
    assert word.value == 29
    assert codes("29 robots work in the Lyon depot.") == []
    assert "ContradictsInput" in codes("31 robots work in the Lyon depot.")


def test_a_pronoun_contraction_is_not_a_name() -> None:
    (word,) = tokens("He'll")
    assert word.stop
    assert codes("Maria Lopez founded Acme Robotics. He'll say so.") == []


RESCUE = Source(
    id="rescue",
    text=(
        "Rangers reached the stranded hikers near Boulder on Sunday. The storm had closed "
        "the pass. Snow fell for two days. Roads reopened on Tuesday. The victims were "
        "taken to a hospital and are recovering."
    ),
)


def test_a_capitalised_first_word_the_input_writes_in_lower_case_is_not_a_name() -> None:
    # Read as a name, "Victims" would need the input to mention it near Boulder; the input
    # writes it in lower case, so it is the common noun and needs no such link.
    def rescue_codes(content: str) -> list[str]:
        found = check_grounding(output("text", content), sources=(RESCUE,))
        return [f.issue.code for f in found]

    assert "UnlinkedClaim" not in rescue_codes("Victims were stranded near Boulder.")
    assert "UnlinkedClaim" in rescue_codes("Tuesday hikers were stranded near Boulder.")


REPORT = Source(
    id="report",
    text=(
        "One of the five hikers was injured in 2015. The search lasted 12 days. "
        "The park has drawn visitors since the 1930s and reopened on April 5. "
        "A population of 2,586 lives nearby."
    ),
)


def report_codes(content: str) -> list[str]:
    found = check_grounding(output("text", content), sources=(REPORT,))
    return [f.issue.code for f in found if f.issue.code == "ContradictsInput"]


def test_only_numbers_of_one_measure_contradict() -> None:
    assert report_codes("The search lasted 66 days.") == ["ContradictsInput"]  # days, days
    assert report_codes("A population of 2,580 lives nearby.") == ["ContradictsInput"]
    assert report_codes("The hikers were injured in 2014.") == ["ContradictsInput"]  # years
    # A count of injured people is not a year; a decade is not a year; a day of a month
    # is not a count of days; "One of the five" says nothing of its unit.
    assert report_codes("About 2,000 visitors were injured.") == []
    assert report_codes("The park opened in 1936.") == []
    assert report_codes("The park reopened on April 12 after the search.") == []
    assert report_codes("Three hikers were injured in 2015.") == []


def test_a_people_or_adjective_of_a_place_is_supported_by_the_place() -> None:
    source = Source(id="news", text="Gunmen attacked a college in Kenya. Canada and Iraq sent aid.")
    for content in ("A Kenyan college was attacked.", "Canadian and Iraqi aid arrived."):
        found = check_grounding(output("text", content), sources=(source,))
        assert "UnsupportedName" not in {f.issue.code for f in found}, content
    found = check_grounding(output("text", "A Nigerian college was attacked."), sources=(source,))
    assert "UnsupportedName" in {f.issue.code for f in found}


LONG_REPORT = Source(
    id="long",
    text=(
        "The council approved the new library budget on Monday. Construction starts in "
        "spring. The architect praised the design. Separately, police arrested a driver "
        "after a crash on the bridge. The driver was charged with speeding. Nobody was hurt. "
        "Later, the mayor opened a bakery downtown."
    ),
)


def test_words_spliced_from_another_passage_are_unlinked_wording() -> None:
    def long_codes(content: str) -> list[str]:
        found = check_grounding(output("text", content), sources=(LONG_REPORT,))
        return [f.issue.code for f in found]

    faithful = "The council approved the library budget; construction starts in spring."
    spliced = "The council approved the library budget after police arrested a speeding driver."
    assert long_codes(faithful) == []
    assert long_codes(spliced) == ["UnlinkedWording"]
    # A quarter of what the same words would cost if the input lacked them.
    unlinked = score_wall(output("text", spliced), sources=(LONG_REPORT,))
    assert 0.9 < unlinked.scores[Dimension.GROUNDING] < 1.0
