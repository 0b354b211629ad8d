"""Position bias: a pairwise verdict counts only if it survives swapping the order."""

from __future__ import annotations

from schemas.result import BiasCheck

BIAS_LIMIT = 0.3


def position_check(
    candidate_first: float, candidate_second: float, *, retried: bool = False
) -> BiasCheck:
    """Combine both orders of one comparison (BC-EVAL-004).

    Args:
        candidate_first: P(candidate better) when the candidate was shown first.
        candidate_second: P(candidate better) when it was shown second (already flipped
            from the judge's P(first better)).
        retried: whether this is the second run of a pair that was flagged.

    When the two orders disagree by more than 0.3 the preference is a tie (0.5), as
    MT-Bench recommends, and the check is flagged.
    """
    # Decide on the recorded (rounded) value: |0.8 - 0.5| is 0.30000000000000004 in floats.
    disagreement = round(abs(candidate_first - candidate_second), 6)
    flagged = disagreement > BIAS_LIMIT
    preference = 0.5 if flagged else (candidate_first + candidate_second) / 2
    return BiasCheck(
        forward=round(candidate_first, 6),
        reverse=round(candidate_second, 6),
        disagreement=disagreement,
        flagged=flagged,
        retried=retried,
        preference=round(preference, 6),
    )
