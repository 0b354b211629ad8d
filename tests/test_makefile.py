"""``make demo`` installs once, with progress, and skips pip while nothing changed.

Dry runs (``make -n``) against a stand-in virtual environment: nothing is installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _planned(venv: Path) -> str:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    done = subprocess.run(
        ["make", "-n", "demo", f"VENV={venv}"],
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
    stamp = venv / ".installed"
    stamp.touch()
    assert "pip install" not in _planned(venv)
    older = (ROOT / "pyproject.toml").stat().st_mtime - 60
    os.utime(stamp, (older, older))
    assert "pip install" in _planned(venv)
