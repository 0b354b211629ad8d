"""Near misses and margins: values that passed or failed by less than the band."""

from __future__ import annotations

from schemas.result import NearMiss, NearMissKind

QUALITY_BAND = 0.10
TIMEOUT_BAND = 0.20


def relative_margin(value: float, threshold: float) -> float:
    """Distance from ``threshold`` as a fraction of it (signed: negative is below)."""
    return (value - threshold) / threshold if threshold else value


def nearest_threshold(value: float, thresholds: tuple[float, ...]) -> tuple[float, float]:
    """(threshold, margin) of the threshold ``value`` is relatively closest to."""
    pairs = [(t, relative_margin(value, t)) for t in thresholds]
    return min(pairs, key=lambda pair: abs(pair[1]))


def timeout_margin(elapsed_s: float | None, timeout_s: float | None) -> float | None:
    """1 - elapsed/timeout; None when either is unknown."""
    if elapsed_s is None or timeout_s is None:
        return None
    return 1.0 - elapsed_s / timeout_s


def detect_near_misses(
    *,
    quality: tuple[str, float, tuple[float, ...]] | None,
    wall_grade: float | None,
    wall_thresholds: tuple[float, ...],
    escalation: tuple[float, float],
    timeout: float | None,
) -> tuple[NearMiss, ...]:
    """Every value within its band of a line: quality 10%, timeout 20%."""
    found: list[NearMiss] = []
    if quality is not None:
        name, value, thresholds = quality
        found.extend(_band(NearMissKind.QUALITY, name, value, thresholds))
    if wall_grade is not None:
        found.extend(_band(NearMissKind.WALL, "wall_grade", wall_grade, wall_thresholds))
    expected, cost = escalation
    if cost > 0:
        found.extend(_band(NearMissKind.ESCALATION, "expected_waste", expected, (cost,)))
    # Compare the recorded (rounded) values: 1 - 80/100 is 0.19999999999999996 in floats.
    timeout = None if timeout is None else round(timeout, 6)
    if timeout is not None and timeout < TIMEOUT_BAND:
        found.append(
            NearMiss(
                kind=NearMissKind.TIMEOUT,
                metric="timeout_margin",
                value=timeout,
                threshold=TIMEOUT_BAND,
                margin=timeout,
            )
        )
    return tuple(found)


def _band(
    kind: NearMissKind, metric: str, value: float, thresholds: tuple[float, ...]
) -> list[NearMiss]:
    threshold, margin = nearest_threshold(value, thresholds)
    margin = round(margin, 6)
    if abs(margin) >= QUALITY_BAND:
        return []
    return [
        NearMiss(
            kind=kind,
            metric=metric,
            value=round(value, 6),
            threshold=threshold,
            margin=margin,
        )
    ]
