"""``windags-eval review`` as a user runs it: a subprocess on the shipped samples."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "workers" / "samples"
#: Equivalent to the ``windags-eval`` console script, independent of how it is installed.
CLI = [sys.executable, "-c", "import sys; from workers.local.cli import main; sys.exit(main())"]


def _run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if "ANTHROPIC" not in k and "WINDAGS" not in k}
    env["WINDAGS_JUDGE_BACKEND"] = "builtin"
    return subprocess.run(
        [*CLI, *args],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        timeout=60,
        check=False,
        env=env,
    )


def _review(sample: str) -> dict[str, Any]:
    done = _run("review", str(SAMPLES / sample))
    assert done.returncode == 0, done.stderr.decode()
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_broken_python_exits_0_with_floor_failed_violations_and_an_envelope() -> None:
    result = _review("floor_failure_python.json")
    floor = result["stage1"]["floor"]
    assert result["stage1"]["passed"] is False
    assert floor["passed"] is False
    assert [v["code"] for v in floor["violations"]] == ["SyntaxError", "IncompleteFunction"]
    assert result["stage1"]["wall"]["resolution"] == "not_run"
    assert result["stage2"] is None
    assert result["envelope"]["stages_run"] == ["floor"]
    assert result["decision"] == "iterate"


def test_good_python_is_accepted() -> None:
    result = _review("good_python.json")
    assert result["decision"] == "accept"
    assert result["stage1"]["passed"] is True
    assert result["feedback"] is None
    assert result["envelope"] is not None


def test_final_deliverable_is_escalated_for_that_reason() -> None:
    result = _review("final_deliverable.json")
    assert result["escalation"]["escalate"] is True
    assert result["escalation"]["reason"] == "final_deliverable"
    assert result["stage2"]["status"] == "scored"
    assert result["envelope"]["stages_run"] == ["floor", "wall", "ceiling"]


def test_worked_example_2_sample_prints_the_seeds_breakdown() -> None:
    escalation = _review("example2_no_escalation.json")["escalation"]
    assert escalation["failure_probability"] == pytest.approx(0.225)
    assert escalation["downstream_waste"] == pytest.approx(0.072)
    assert escalation["expected_waste"] == pytest.approx(0.0162)
    assert escalation["stage2_cost"] == pytest.approx(0.045)
    assert escalation["escalate"] is False


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda v: v["skill"].update(success_rate="0.9"), "skill.success_rate"),
        (lambda v: v.update(colour="blue"), "colour"),
        (lambda v: v["output"].update(kind="yml"), "output.kind"),
    ],
)
def test_invalid_request_exits_2_with_one_line_naming_the_field(
    mutate: Any, field: str, tmp_path: Path
) -> None:
    value = json.loads((SAMPLES / "good_python.json").read_text(encoding="utf-8"))
    mutate(value)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(value), encoding="utf-8")
    done = _run("review", str(path))
    assert done.returncode == 2
    assert done.stdout == b""
    lines = done.stderr.decode().strip().splitlines()
    assert len(lines) == 1, lines
    assert field in lines[0]


def test_unparseable_request_exits_2() -> None:
    done = _run("review", "-", stdin=b"{not json")
    assert done.returncode == 2
    assert len(done.stderr.decode().strip().splitlines()) == 1


def test_stdin_dash_reads_the_request_from_standard_input() -> None:
    raw = (SAMPLES / "good_python.json").read_bytes()
    done = _run("review", "-", stdin=raw)
    assert done.returncode == 0, done.stderr.decode()
    result = json.loads(done.stdout)
    assert (result["node_id"], result["decision"]) == ("slugify", "accept")
