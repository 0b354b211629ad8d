"""Outputs whose every name is in the input, related the other way: choices, denials, makers.

Each check is shown failing the swapped statement and passing its faithful twin, under
the ``open`` policy too (a contradiction is one whatever the node may add), and on the
dev half of HaluEval's tunable lines, where no right answer may be flagged.
"""

from __future__ import annotations

import itertools

import pytest

from bench.public import halueval
from bench.public.archives import DataUnavailable
from bench.public.heldout import Half, half_of
from schemas.request import GroundingPolicy, Source
from tests.infrastructure import unavailable
from workers.evaluate.findings import sentences
from workers.evaluate.wall.grounding.attributions import check_attributions
from workers.evaluate.wall.grounding.checks import check_grounding
from workers.evaluate.wall.grounding.choices import Order, check_choice, choice_question
from workers.evaluate.wall.grounding.denials import check_denials
from workers.evaluate.wall.grounding.lexicon import unjoin
from workers.evaluate.wall.grounding.sources import node_input

from .builders import output

BANDS = Source(
    id="bands",
    text=(
        "The Wolfhounds are an indie pop band formed in Romford, UK in 1985 by Dave Callahan. "
        "Courtney Love rose to prominence as the frontwoman of the rock band Hole, which she "
        "formed in 1989. Hole released four albums."
    ),
)
FILMS = Source(
    id="films",
    text=(
        "The Saimaa Gesture is a 1981 documentary of three Finnish rock groups on tour. "
        "Adam Clayton Powell is a 1989 American documentary film about the civil rights leader. "
        "Beowulf is a 2007 film directed by Robert Zemeckis and written by Neil Gaiman. "
        "Vin Diesel starred in Riddick. A Wind in the Door is written by Madeleine L'Engle."
    ),
)
FOUNDED_FIRST = "Which band was founded first, Hole or The Wolfhounds?"


def contradictions(content: str, task: str = "", source: Source = FILMS) -> list[str]:
    found = check_grounding(
        output("text", content), task=task, sources=(source,), policy=GroundingPolicy.OPEN
    )
    return [f.issue.message for f in found if f.issue.code == "ContradictsInput"]


def test_a_choice_question_names_its_two_alternatives_and_what_it_asks() -> None:
    choice = choice_question("Who is older Glenn Hughes or Ross Lynch?")
    assert choice is not None
    assert (choice.first.text, choice.second.text, choice.order) == (
        "Glenn Hughes",
        "Ross Lynch",
        Order.EARLIER,
    )
    comma = choice_question(FOUNDED_FIRST)
    assert comma is not None and (comma.first.text, comma.second.text) == ("Hole", "The Wolfhounds")
    assert choice_question("Who founded Hole?") is None


def test_the_choice_the_input_dates_the_other_way_is_a_contradiction() -> None:
    (message,) = contradictions("Hole was founded first.", FOUNDED_FIRST, BANDS)
    assert "Hole: 1989, The Wolfhounds: 1985" in message
    assert contradictions("The Wolfhounds.", FOUNDED_FIRST, BANDS) == []
    assert contradictions("The Wolfhounds were founded before Hole.", FOUNDED_FIRST, BANDS) == []
    # Answered in the other direction, or hedged: the output does not plainly choose.
    assert contradictions("Hole was founded later.", FOUNDED_FIRST, BANDS) == []
    assert contradictions("Hole was not founded first.", FOUNDED_FIRST, BANDS) == []


def test_a_property_one_passage_states_decides_the_choice() -> None:
    task = (
        "Which documentary is about Finnish rock groups, Adam Clayton Powell or The Saimaa Gesture?"
    )
    assert contradictions("Adam Clayton Powell is about rock groups.", task)
    assert contradictions("The Saimaa Gesture.", task) == []


def test_comparing_an_amount_or_an_undated_alternative_decides_nothing() -> None:
    more = "Which band released more albums, Hole or The Wolfhounds?"
    assert contradictions("The Wolfhounds released more albums.", more, BANDS) == []
    undated = Source(id="u", text="Hole formed in 1989. The Wolfhounds are from Romford.")
    assert contradictions("Hole was founded first.", FOUNDED_FIRST, undated) == []


def test_an_alternative_is_matched_as_the_input_names_it() -> None:
    task = "Which university is located in Chestnut Hill, Massachusetts Boston College or Yale?"
    source = Source(
        id="u",
        text="Boston College is a university located in Chestnut Hill. Yale is in New Haven.",
    )
    assert contradictions("Yale is located in Chestnut Hill.", task, source)
    assert contradictions("Boston College", task, source) == []


def test_denying_a_link_the_input_states_is_a_contradiction() -> None:
    (message,) = contradictions("Vin Diesel was not in Riddick.")
    assert "Vin Diesel starred in Riddick" in message
    assert contradictions("Vin Diesel was in Riddick.") == []
    assert contradictions("Vin Diesel did not direct Riddick.") == []  # another relation
    assert contradictions("Critics say Vin Diesel was not in Riddick.") == []  # reported
    disputed = Source(id="d", text="Vin Diesel did not star in Riddick, the studio said.")
    assert contradictions("Vin Diesel was not in Riddick.", source=disputed) == []


def test_another_maker_for_a_work_the_input_attributes_is_a_contradiction() -> None:
    (message,) = contradictions("A Wind in the Door was written by J.K. Rowling.")
    assert "Madeleine L'Engle" in message
    assert contradictions("A Wind in the Door was written by Madeleine L'Engle.") == []
    assert contradictions("Neil Gaiman directed Beowulf.")
    assert contradictions("Neil Gaiman wrote Beowulf.") == []
    # An author writes many works: a work the input does not attribute is no swap.
    assert contradictions("Madeleine L'Engle also wrote Many Waters.") == []


#: Dev-half lines read per file (a choice question is about one line in forty).
HALUEVAL_LINES = 3000


def _halueval(benchmark: str) -> list[tuple[int, dict[str, str]]]:
    try:
        dev = (
            (i, line)
            for i, line in halueval.lines(benchmark)
            if half_of(benchmark, str(i)) is Half.DEV
        )
        return list(itertools.islice(dev, HALUEVAL_LINES))
    except DataUnavailable as exc:
        unavailable(f"HaluEval data: {exc}")
        raise


#: Dev-half lines whose "right" answer the knowledge contradicts (read by hand): line 761
#: asks who is younger, Del Lord (born 1894) or Wang Xiaoshuai (born 1966), and labels
#: "Del Lord" right.
MISLABELLED_QA = frozenset({761})


def test_on_halueval_qa_choices_no_right_answer_is_flagged() -> None:
    flagged = {"right": 0, "hallucinated": 0}
    for index, line in _halueval("halueval-qa"):
        if choice_question(line["question"]) is None or index in MISLABELLED_QA:
            continue
        given = node_input(line["question"], (Source(id="k", text=line["knowledge"]),))
        for label, field in (("right", "right_answer"), ("hallucinated", "hallucinated_answer")):
            flagged[label] += bool(check_choice(line[field], line["question"], given))
    assert flagged["right"] == 0
    assert flagged["hallucinated"] >= 8  # e.g. lines 22, 50, 181, 246


@pytest.mark.parametrize("benchmark", ["halueval-dialogue", "halueval-summarization"])
def test_on_halueval_no_right_output_denies_or_swaps_what_its_input_states(benchmark: str) -> None:
    layout = halueval.LAYOUTS[benchmark]
    flagged = {"right": 0, "hallucinated": 0}
    for _, line in _halueval(benchmark):
        given = node_input(None, (Source(id="k", text=line[layout.source]),))
        for label, field in (("right", layout.right), ("hallucinated", layout.wrong)):
            found = check_denials(line[field], given) + check_attributions(line[field], given)
            flagged[label] += bool(found)
    if benchmark == "halueval-dialogue":
        assert flagged["right"] == 0
        assert flagged["hallucinated"] >= 100  # e.g. lines 1, 132, 354 (denials), 100
    else:
        # Two of 3,000 right summaries are still read as denials: the cricket idiom
        # "182 not out" (line 3613), and a song's line the input reports with "sang"
        # (5363). A denial is definite, so this is the share of right summaries it sends
        # back: it must stay below one in a thousand.
        assert flagged["right"] <= 3


def test_sentences_end_after_a_closing_quote_but_not_at_an_initial() -> None:
    scraped = 'It is ranked by "U.S. News & World Report."MedStar is the largest hospital.'
    assert sentences(unjoin(scraped)) == [
        'It is ranked by "U.S. News & World Report."',
        "MedStar is the largest hospital.",
    ]
    assert sentences("It was written by J.K. Rowling. George E. Marshall directed it.") == [
        "It was written by J.K. Rowling.",
        "George E. Marshall directed it.",
    ]
    assert sentences("It is based in Washington, D.C. A member of MedStar runs it.") == [
        "It is based in Washington, D.C.",
        "A member of MedStar runs it.",
    ]
