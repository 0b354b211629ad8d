"""``make demo`` installs once, with progress, no test tools, and skips pip while nothing changed.

Dry runs (``make -n``) against a stand-in virtual environment: nothing is installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _planned(venv: Path, target: str = "demo") -> str:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    done = subprocess.run(
        ["make", "-n", target, f"VENV={venv}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return done.stdout


@pytest.fixture
def venv(tmp_path: Path) -> Path:
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "python").touch()
    return tmp_path


def test_a_first_demo_installs_with_progress_shown(venv: Path) -> None:
    plan = _planned(venv)
    install = next(line for line in plan.splitlines() if "pip install" in line)
    assert "--quiet" not in install and "-q " not in install
    assert "workers.local.cli demo" in plan


def test_a_second_demo_skips_pip_until_pyproject_changes(venv: Path) -> None:
    stamp = venv / ".installed-run"
    stamp.touch()
    assert "pip install" not in _planned(venv)
    older = (ROOT / "pyproject.toml").stat().st_mtime - 60
    os.utime(stamp, (older, older))
    assert "pip install" in _planned(venv)


def test_the_demo_installs_the_package_alone_and_the_tests_add_their_tools(venv: Path) -> None:
    install = next(line for line in _planned(venv).splitlines() if "pip install" in line)
    assert install.rstrip().endswith("-e .")
    test_plan = _planned(venv, "test")
    assert "-e '.[dev,docs]'" in test_plan
    assert "sphinx -W" in test_plan  # the docs site is built, strictly, before pytest runs
    assert test_plan.index("sphinx -W") < test_plan.index("-m pytest")


def test_no_test_tool_is_a_runtime_dependency() -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = " ".join(project["dependencies"]).lower()
    for tool in ("pytest", "hypothesis", "mypy", "ruff", "matplotlib", "selenium", "sphinx"):
        assert tool not in runtime
