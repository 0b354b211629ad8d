"""Deterministic benches reproduce their committed figures (``bench.reproduce``).

A change that moves economics, recall, topology's shapes or the public evaluation's
decisions fails here, with the one command that refreshes the committed figures: the
figures then move in the same commit as the change that moved them, never silently.
"""

from __future__ import annotations

import pytest

from bench import reproduce
from bench.public.sources import load
from bench.public_short import committed as public_baseline
from tests.infrastructure import unavailable


@pytest.mark.parametrize("name", list(reproduce.CHECKS))
def test_a_fresh_short_run_gives_the_committed_figures(name: str) -> None:
    if name == "public-eval":
        baseline = public_baseline() or {}
        missing = [s for s, v in baseline.get("sources", {}).items() if "unavailable" in v]
        missing += [s for s in baseline.get("sources", {}) if load(s, 1).unavailable]
        if missing:
            unavailable(f"public data missing here or in the baseline: {sorted(set(missing))}")
    found = reproduce.check(name)
    command = reproduce.CHECKS[name].command
    assert found == [], f"{name} moved ({len(found)} differences; run {command}): {found[:8]}"


def test_the_comparison_sees_a_moved_figure() -> None:
    committed = {"policies": {"learned": {"net_usd": -1.457}}, "rows": [1, 2]}
    moved = {"policies": {"learned": {"net_usd": -1.892}}, "rows": [1, 2]}
    assert reproduce.differences(committed, committed) == []
    assert reproduce.differences(committed, moved) == [
        "policies.learned.net_usd: committed -1.457, fresh -1.892"
    ]
    assert reproduce.differences({"a": 1}, {"b": 1}) == [
        "a: only in the committed",
        "b: only in the fresh",
    ]
    assert reproduce.differences([1], [1, 2]) == [": committed [1], fresh [1, 2]"]
