"""docs/house.md is the picture of the house as its imports are today."""

from __future__ import annotations

from tests import house_picture


def test_the_house_picture_is_current() -> None:
    assert house_picture.main(["--check"]) == 0, "run: python -m tests.house_picture"


def test_floors_put_each_room_above_what_it_imports() -> None:
    edges = {"top": {"mid", "base"}, "mid": {"base"}, "base": set()}
    assert house_picture.floors(edges) == {"base": 0, "mid": 1, "top": 2}
    allowed = {"top": frozenset({"mid", "base"}), "mid": frozenset(), "base": frozenset()}
    assert house_picture.back_up(edges, allowed) == ["mid -> base"]
