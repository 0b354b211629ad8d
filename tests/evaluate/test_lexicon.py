"""The lexicon's fast paths read text exactly as its plain definitions do."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from workers.evaluate.wall.grounding.lexicon import fold, tokens


def _fold_by_definition(text: str) -> str:
    """Lower case, accents (every combining mark) removed, curly apostrophes straight."""
    decomposed = unicodedata.normalize("NFKD", text.replace("’", "'"))
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


@given(st.text())
def test_fold_matches_its_definition_on_any_text(text: str) -> None:
    assert fold(text) == _fold_by_definition(text)


def test_fold_removes_accents_in_every_script() -> None:
    assert fold("Ódysséas Elýtis’ Ελύτης") == "odysseas elytis' ελυτης"
    assert fold("e\U0001d165x") == "ex"  # a combining mark outside the BMP


def test_a_compound_number_word_is_one_token_however_often_its_parts_are_read() -> None:
    for _ in range(2):
        read = tokens("twenty-nine robots, twenty people, nine depots")
        assert [(t.text, t.value) for t in read if t.value is not None] == [
            ("twenty-nine", 29.0),
            ("twenty", 20.0),
            ("nine", 9.0),
        ]
