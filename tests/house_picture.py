"""The house as a picture, drawn from the imports the code really makes.

Run: ``python -m tests.house_picture [--check]``: writes ``docs/house.md`` (Mermaid
diagrams GitHub renders, and the counts under them); ``--check`` exits 1 when it is stale
(a test runs it). Each room is drawn on the floor its imports put it on (one above the
highest room it imports); an arrow is a run-time import from one room into another
(TYPE_CHECKING imports never run and are left out). An arrow "back up" is one its room's
contract in ``tests/test_imports.py`` forbids; a circle is an import cycle between modules
(``tests/test_import_cycles.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from bench.generated import write_or_check
from tests.test_import_cycles import cycles, house_graph
from tests.test_imports import (
    ALLOWED,
    ENGINE,
    ENGINE_ALLOWED,
    ROOT,
    WORKERS,
    _rooms,
    imported,
    room,
)

PICTURE = ROOT / "docs" / "house.md"
#: The seed's layers, in the order a review meets them.
LAYERS = ("floor", "wall", "ceiling", "escalation", "verdict")


def room_edges(folder: Path, under: str) -> dict[str, set[str]]:
    """Room -> the other rooms of ``under`` its modules import at run time."""
    edges: dict[str, set[str]] = {}
    for own, paths in _rooms(folder).items():
        if own == "__init__" and under == "workers":
            continue
        targets = {room(name, under) for p in paths for name in imported(p.read_text())}
        edges[own] = {t for t in targets if t is not None and t != own and t != "__init__"}
    return edges


def floors(edges: Mapping[str, set[str]]) -> dict[str, int]:
    """Each room's floor: 0 for a room that imports no other, else one above its highest."""
    level: dict[str, int] = {}

    def of(node: str, seen: frozenset[str]) -> int:
        if node not in level:
            below = [of(t, seen | {node}) for t in edges.get(node, ()) if t not in seen]
            level[node] = 1 + max(below, default=-1)
        return level[node]

    for node in edges:
        of(node, frozenset())
    return level


def back_up(edges: Mapping[str, set[str]], allowed: Mapping[str, frozenset[str]]) -> list[str]:
    """The arrows a contract forbids."""
    return sorted(f"{a} -> {b}" for a, targets in edges.items() for b in targets
                  if b in allowed and b not in allowed.get(a, frozenset()))  # fmt: skip


def mermaid(edges: Mapping[str, set[str]], rooms: Sequence[str]) -> list[str]:
    """A top-down flowchart of ``rooms``: every arrow an import, pointing to a lower floor."""
    level = floors(edges)
    lines = ["```mermaid", "flowchart TD"]
    for floor in sorted({level[r] for r in rooms}):
        members = " & ".join(sorted(r for r in rooms if level[r] == floor))
        lines.append(f"  %% floor {floor}: {members}")
    lines += [f"  {a} --> {b}" for a in sorted(rooms) for b in sorted(edges[a]) if b in rooms]
    lines.append("```")
    return lines


def render() -> str:
    """The page: the rooms of ``workers``, the engine's layers, and the counts."""
    rooms = room_edges(WORKERS, "workers")
    engine = room_edges(ENGINE, "workers.evaluate")
    layers = {name: engine[name] & set(LAYERS) for name in LAYERS}
    up = back_up(rooms, ALLOWED) + back_up(engine, ENGINE_ALLOWED)
    circles = cycles(house_graph())
    level = floors(rooms)
    table = ["| floor | rooms |", "|---|---|"] + [
        f"| {f} | {', '.join(sorted(r for r in rooms if level[r] == f))} |"
        for f in sorted(set(level.values()))
    ]
    return "\n".join(
        [
            "# The house, drawn from its imports",
            "",
            "Written by `python -m tests.house_picture` from the run-time imports of every",
            "module (a test fails when it is stale). An arrow is an import from one room into",
            "another; every room may also import `schemas`, which imports nothing of `workers`.",
            "The rules behind it are in [architecture.md](architecture.md).",
            "",
            "## The rooms of `workers`, floor by floor",
            "",
            *table,
            "",
            *mermaid(rooms, sorted(rooms)),
            "",
            "## The engine: the seed's five layers",
            "",
            "`workers/evaluate/`'s layers in the order a review meets them; each imports only",
            "layers before it (and the shared `findings`, `parsed`, `thresholds`, not drawn).",
            "",
            *mermaid(layers, list(LAYERS)),
            "",
            "## Counts",
            "",
            f"- Arrows back up (imports a room's contract forbids): {len(up)}"
            + (f" ({', '.join(up)})" if up else ""),
            f"- Circles (import cycles between modules, TYPE_CHECKING aside): {len(circles)}",
            f"- Rooms: {len(rooms)}; floors: {max(level.values()) + 1}; engine layers:"
            f" {len(LAYERS)}",
            "",
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Write the picture, or with ``--check`` report whether it is current."""
    return write_or_check(PICTURE, lambda _: render(), "python -m tests.house_picture", argv)


if __name__ == "__main__":
    raise SystemExit(main())
