"""Position bias: both orders combined; disagreement above 0.3 is flagged as a tie."""

from __future__ import annotations

import pytest

from workers.evaluate.ceiling.bias import BIAS_LIMIT, position_check


@pytest.mark.parametrize(
    ("forward", "reverse", "disagreement", "flagged", "preference"),
    [
        (0.9, 0.1, 0.8, True, 0.5),
        (0.7, 0.6, 0.1, False, 0.65),
        (0.8, 0.5, 0.3, False, 0.65),
        (0.81, 0.5, 0.31, True, 0.5),
        (0.5, 0.5, 0.0, False, 0.5),
        (0.2, 0.9, 0.7, True, 0.5),
        (0.3, 0.25, 0.05, False, 0.275),
    ],
)
def test_both_orders_combine_into_a_preference_or_a_flagged_tie(
    forward: float, reverse: float, disagreement: float, flagged: bool, preference: float
) -> None:
    check = position_check(forward, reverse)
    assert check.disagreement == pytest.approx(disagreement)
    assert check.flagged is flagged
    assert check.preference == pytest.approx(preference)
    assert (check.forward, check.reverse) == (forward, reverse)


def test_flag_agrees_with_the_recorded_disagreement() -> None:
    for a in range(0, 101, 1):
        for b in range(0, 101, 7):
            check = position_check(a / 100, b / 100)
            assert check.flagged is (check.disagreement > BIAS_LIMIT)


def test_retry_is_recorded() -> None:
    assert position_check(0.9, 0.1, retried=True).retried is True
    assert position_check(0.9, 0.1).retried is False
