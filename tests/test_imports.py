"""The house's import rules, as contracts: which room of ``workers`` may import which.

Every package and top-level module of ``workers`` has a row (a new one fails until it
gets one), ``schemas`` may be imported by all, and imports under ``if TYPE_CHECKING:``
do not count (they never run). The rules in words are in docs/architecture.md.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WORKERS = ROOT / "workers"
ENGINE = WORKERS / "evaluate"

#: What each room of ``workers`` may import besides ``schemas`` and itself.
ALLOWED: dict[str, frozenset[str]] = {
    "errors": frozenset(),
    "keys": frozenset(),
    "intake": frozenset({"errors"}),
    "endpoint": frozenset({"errors"}),
    "redis_urls": frozenset({"errors"}),
    "settings": frozenset({"endpoint", "errors", "keys", "package_settings", "redis_urls"}),
    "connections": frozenset({"redis_urls", "settings"}),
    "evaluate": frozenset(),
    "judges": frozenset({"evaluate", "endpoint", "errors", "keys", "settings"}),
    "testing": frozenset({"errors", "lookups"}),
    "topology": frozenset({"errors", "evaluate", "intake"}),
    "results": frozenset({"errors", "keys", "topology"}),
    "observe": frozenset({"errors", "judges", "settings"}),
    "records": frozenset({"evaluate", "keys", "results"}),
    "human": frozenset(
        {"connections", "errors", "evaluate", "keys", "records", "results", "settings"}
    ),
    "learning": frozenset({"connections", "evaluate", "records", "settings"}),
    "lookups": frozenset({"evaluate", "keys", "observe", "package_index", "settings"}),
    "package_index": frozenset({"errors", "evaluate", "keys", "settings"}),
    "package_settings": frozenset(),
    "review": frozenset({"evaluate", "judges", "lookups", "package_index", "settings"}),
    "fleet": frozenset(
        {
            "connections",
            "endpoint",
            "errors",
            "evaluate",
            "human",
            "intake",
            "judges",
            "keys",
            "learning",
            "lookups",
            "observe",
            "package_index",
            "records",
            "redis_urls",
            "results",
            "settings",
            "topology",
        }
    ),
    "client": frozenset(
        {
            "connections",
            "errors",
            "fleet",
            "human",
            "intake",
            "observe",
            "results",
            "runtime",
            "settings",
            "topology",
        }
    ),
    "runtime": frozenset(
        {"connections", "errors", "intake", "keys", "redis_urls", "results", "settings"}
    ),
    "local": frozenset(
        {
            "client",
            "connections",
            "errors",
            "evaluate",
            "fleet",
            "human",
            "intake",
            "judges",
            "learning",
            "redis_urls",
            "results",
            "review",
            "settings",
            "topology",
        }
    ),
}

_SHARED = frozenset({"findings", "parsed", "thresholds"})
#: Inside the engine: the seed's layers, each importing only the layers below it.
ENGINE_ALLOWED: dict[str, frozenset[str]] = {
    "findings": frozenset(),
    "parsed": frozenset(),
    "thresholds": frozenset(),
    "code": _SHARED,
    "floor": _SHARED | {"code"},
    "wall": _SHARED | {"floor", "code"},
    "judge_task": _SHARED | {"wall"},
    "ceiling": _SHARED | {"floor", "wall", "judge_task"},
    "escalation": _SHARED | {"floor", "wall"},
    "verdict": _SHARED | {"floor", "wall", "ceiling"},
    "references": _SHARED | {"wall"},
    "stage1": _SHARED | {"code", "floor", "wall", "verdict"},
    "__init__": _SHARED | {"floor", "wall", "ceiling", "escalation", "verdict", "stage1"},
}


def typing_only_nodes(tree: ast.AST) -> set[int]:
    """The ids of the nodes under ``if TYPE_CHECKING:``: imports there never run."""
    return {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING")
        for inner in ast.walk(node)
    }


def run_time_imports(source: str) -> Iterator[tuple[str, tuple[str, ...]]]:
    """(module, names) of each import ``source`` makes at run time.

    ``import a.b`` gives ``("a.b", ())``; ``from a import b, c`` gives ``("a", ("b", "c"))``.
    """
    tree = ast.parse(source)
    typing_only = typing_only_nodes(tree)
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            yield from ((alias.name, ()) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module, tuple(alias.name for alias in node.names)


def imported(source: str) -> set[str]:
    """Modules ``source`` imports at run time (``from a import b`` counts ``a.b`` too)."""
    found: set[str] = set()
    for module, names in run_time_imports(source):
        found.add(module)
        found.update(f"{module}.{name}" for name in names)
    return found


def room(module: str, under: str) -> str | None:
    """The room of ``under`` (``workers`` or ``workers.evaluate``) that ``module`` is in."""
    prefix = f"{under}."
    if not module.startswith(prefix):
        return None
    return module[len(prefix) :].split(".")[0]


def violations(source: str, own: str, allowed: dict[str, frozenset[str]], under: str) -> set[str]:
    """The imports of ``source``, in room ``own`` of ``under``, that its row forbids."""
    bad = set()
    for name in imported(source):
        target = room(name, under)
        if target is None or target == own or target not in allowed:
            continue
        if target not in allowed[own]:
            bad.add(name)
    return bad


def _rooms(folder: Path) -> dict[str, list[Path]]:
    rooms: dict[str, list[Path]] = {}
    for path in folder.rglob("*.py"):
        name = path.relative_to(folder).parts[0].removesuffix(".py")
        rooms.setdefault(name, []).append(path)
    return rooms


def test_every_room_of_workers_has_a_contract() -> None:
    rooms = {name for name in _rooms(WORKERS) if name != "__init__"}
    assert rooms == set(ALLOWED)


def test_every_room_of_the_engine_has_a_contract() -> None:
    assert set(_rooms(ENGINE)) == set(ENGINE_ALLOWED)


@pytest.mark.parametrize("own", sorted(ALLOWED))
def test_imports_point_one_way(own: str) -> None:
    bad = {
        f"{path.relative_to(ROOT)} imports {name}"
        for path in _rooms(WORKERS)[own]
        for name in violations(path.read_text(), own, ALLOWED, "workers")
    }
    assert bad == set()


@pytest.mark.parametrize("own", sorted(ENGINE_ALLOWED))
def test_each_engine_layer_imports_only_the_layers_below(own: str) -> None:
    bad = {
        f"{path.relative_to(ROOT)} imports {name}"
        for path in _rooms(ENGINE)[own]
        for name in violations(path.read_text(), own, ENGINE_ALLOWED, "workers.evaluate")
    }
    assert bad == set()


def test_the_contracts_notice_a_forbidden_import_and_ignore_a_typing_one() -> None:
    engine_to_fleet = "from workers.fleet.deps import Deps\n"
    assert violations(engine_to_fleet, "evaluate", ALLOWED, "workers") == {
        "workers.fleet.deps",
        "workers.fleet.deps.Deps",
    }
    judges_to_local = "import workers.local.cli\n"
    assert violations(judges_to_local, "judges", ALLOWED, "workers") == {"workers.local.cli"}
    floor_to_verdict = "from workers.evaluate.verdict import final\n"
    assert violations(floor_to_verdict, "floor", ENGINE_ALLOWED, "workers.evaluate")
    typing_only = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from workers.fleet.deps import Deps\n"
    )
    assert violations(typing_only, "evaluate", ALLOWED, "workers") == set()


def test_nothing_but_the_local_tools_may_import_them() -> None:
    assert [own for own, allowed in ALLOWED.items() if "local" in allowed] == []
