"""The core install stays free of LangGraph: only the ``langgraph`` extra brings it."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

from bench import client_async

ROOT = Path(__file__).resolve().parent.parent
LANGGRAPH = re.compile(r"^(langgraph|langchain)")


def closure(name: str, extras: frozenset[str] = frozenset()) -> set[str]:
    """Every distribution ``pip install name[extras]`` pulls, from the installed metadata."""
    seen: set[str] = set()
    todo = [(name, extras)]
    while todo:
        current, wanted = todo.pop()
        key = current.lower().replace("_", "-")
        if key in seen and not wanted:
            continue
        seen.add(key)
        for line in metadata.requires(current) or []:
            requirement = Requirement(line)
            marker = requirement.marker
            if marker is None or any(marker.evaluate({"extra": e}) for e in wanted | {""}):
                todo.append((requirement.name, frozenset(requirement.extras)))
    return seen


def test_the_core_install_pulls_no_langgraph_and_the_extra_does() -> None:
    core = closure("windags-evaluator")
    assert {"celery", "redis", "pydantic"} <= core
    assert sorted(d for d in core if LANGGRAPH.match(d)) == []
    extra = closure("windags-evaluator", frozenset({"langgraph"}))
    assert {"langgraph", "langchain-core", "langgraph-checkpoint-sqlite"} <= extra


def test_the_clients_load_no_langgraph() -> None:
    probe = "import sys, workers.client, workers.runtime.loop; print(sorted(sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "langgraph" not in done.stdout and "langchain_core" not in done.stdout


def test_the_runtime_page_shows_the_last_measured_figures() -> None:
    assert client_async.main(["--figures", "--check"]) == 0
