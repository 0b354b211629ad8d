"""No circles in the house: the modules of ``workers`` and ``schemas`` import without a cycle.

An import cycle works until someone moves a line; then a module is half-built when
another reads it. Imports under ``if TYPE_CHECKING:`` do not count (they never run), and
``from package import submodule`` is an edge to the submodule, as Python resolves it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from tests.test_imports import ROOT, run_time_imports

PACKAGES = ("workers", "schemas")


def module_name(path: Path) -> str:
    """``workers/fleet/app.py`` -> ``workers.fleet.app``; a package is its folder's name."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def edges(source: str, known: Iterable[str]) -> set[str]:
    """The known modules ``source`` imports at run time."""
    modules = set(known)
    found: set[str] = set()
    for module, names in run_time_imports(source):
        subs = [f"{module}.{name}" for name in names]
        targets = [s for s in subs if s in modules]
        if len(targets) < len(subs) or not subs:
            targets.append(module)  # the module itself, or a name it defines
        for name in targets:
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
    return found


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def house_graph() -> dict[str, set[str]]:
    """Every module of the packages with the modules it imports."""
    paths = {module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}
    return {
        name: edges(path.read_text(encoding="utf-8"), paths) - {name}
        for name, path in paths.items()
    }


def test_no_module_of_the_house_imports_itself_in_a_circle() -> None:
    assert cycles(house_graph()) == []


def test_the_checker_finds_a_circle_and_ignores_typing_imports_and_submodule_edges() -> None:
    known = {"p", "p.a", "p.b", "p.c"}
    graph = {
        "p": edges("from p.a import thing\n", known),
        "p.a": edges("from p import b\n", known),  # the submodule, not the package
        "p.b": edges("from p.c import x\n", known),
        "p.c": edges(
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from p.b import y\n",
            known,
        ),
    }
    assert graph["p.a"] == {"p.b"}
    assert cycles(graph) == []
    graph["p.c"] = edges("import p.b\n", known)
    assert cycles(graph) == [["p.b", "p.c"]]
