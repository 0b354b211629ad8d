"""Import boundaries: the pure engine and the wire models load no queue, broker or network SDK."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = ("celery", "redis", "anthropic", "kombu", "httpx", "h11", "ssl")


def _loaded_after(statement: str) -> set[str]:
    probe = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return {name.split(".")[0] for name in json.loads(done.stdout)}


@pytest.mark.parametrize(
    "statement",
    [
        "import workers.evaluate",
        "import schemas",
        "import schemas.export",
        "from workers.evaluate import *",
        "import workers.evaluate.stage1, workers.evaluate.verdict.final, workers.intake",
        "import workers.topology, workers.topology.progress",
        "import workers.evaluate.references",
    ],
)
def test_importing_the_pure_engine_loads_no_queue_broker_or_network_client(
    statement: str,
) -> None:
    loaded = _loaded_after(statement)
    assert not loaded & set(FORBIDDEN), sorted(loaded & set(FORBIDDEN))


def test_the_probe_would_notice_a_forbidden_import() -> None:
    assert "json" in _loaded_after("import json")
    assert "xml" in _loaded_after("import xml.dom")


def test_importing_schemas_loads_nothing_from_workers() -> None:
    loaded = _loaded_after("import schemas, schemas.export, schemas.hops")
    assert "workers" not in loaded


def test_schemas_source_imports_nothing_from_workers() -> None:
    for path in sorted((ROOT / "schemas").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                assert name.split(".")[0] != "workers", f"{path.name} imports {name}"


def test_engine_source_imports_no_forbidden_package() -> None:
    for path in sorted((ROOT / "workers" / "evaluate").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                roots = {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                roots = {node.module.split(".")[0]}
            else:
                continue
            assert not roots & set(FORBIDDEN), f"{path.name}: {roots}"
