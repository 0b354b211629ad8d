"""docs/capacity.md is what ``python -m bench.capacity`` derives from the measured figures."""

from __future__ import annotations

from bench import capacity


def test_the_capacity_page_is_derived_from_the_current_figures() -> None:
    assert capacity.main(["--check"]) == 0, "run python -m bench.capacity"


def test_the_page_names_the_primaries_and_each_worker_kind() -> None:
    page = capacity.DOC.read_text(encoding="utf-8")
    for words in ("primaries", "Stage 1", "router", "Stage 2", "maxclients"):
        assert words in page
