"""``windags-eval review --jsonl`` as a user runs it: the console script on a JSONL file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "workers" / "samples"


def _script() -> list[str]:
    """The installed console script, as a user calls it."""
    found = shutil.which("windags-eval", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.fail("the windags-eval console script is not installed in this environment")
    return [found]


def _sample(name: str, **changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((SAMPLES / name).read_text())
    return {**body, **changes}


def _run(path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if "WINDAGS" not in k and "ANTHROPIC" not in k}
    return subprocess.run(
        [*_script(), "review", "--jsonl", str(path), *extra],
        cwd=ROOT,
        env={**env, "WINDAGS_JUDGE_BACKEND": "builtin", "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def batch(tmp_path: Path) -> Path:
    lines = [
        json.dumps({"expect": "accept", "request": _sample("good_python.json")}),
        json.dumps({"expect": "floor", "request": _sample("floor_failure_python.json")}),
        json.dumps(_sample("good_python.json", node_id="unlabelled")),
        "",
        "this line is not JSON",
        json.dumps({"expect": "accept", "request": {"dag_id": "d"}}),
        json.dumps({"expect": "maybe", "request": _sample("good_python.json")}),
    ]
    path = tmp_path / "batch.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_every_line_gets_a_result_or_a_typed_error_and_the_batch_goes_on(batch: Path) -> None:
    done = _run(batch)
    assert done.returncode == 1, done.stderr  # some lines were not requests
    out = [json.loads(line) for line in done.stdout.splitlines()]
    assert [o["line"] for o in out] == [1, 2, 3, 5, 6, 7]
    assert out[0]["result"]["decision"] == "accept"
    assert out[1]["result"]["stage1"]["floor"]["passed"] is False
    assert out[2]["result"]["node_id"] == "unlabelled" and "expect" not in out[2]
    assert out[3]["error"]["message"].startswith("not JSON")
    assert out[4]["line"] == 6 and out[4]["expect"] == "accept"
    assert out[4]["error"]["code"] == "invalid_request"
    assert (out[4]["error"]["field"], out[4]["error"]["message"]) == (
        "node_id",
        "required field is missing",
    )
    assert out[5]["error"]["field"] == "expect"
    assert {o["error"]["code"] for o in out if "error" in o} == {"invalid_request"}


def test_an_error_line_names_every_offending_field_an_unknown_one_too(tmp_path: Path) -> None:
    body = _sample("good_python.json", attempt="first", colour="red")
    huge = _sample("good_python.json", output={"kind": "text", "content": "x" * 300_000})
    path = tmp_path / "two.jsonl"
    path.write_text(json.dumps(body) + "\n" + json.dumps(huge) + "\n")
    done = _run(path)
    assert done.returncode == 1, done.stderr
    first, second = (json.loads(line)["error"] for line in done.stdout.splitlines())
    assert first["code"] == "invalid_request" and first["field"] == "attempt"
    assert {(e["field"], e["message"]) for e in first["errors"]} >= {("colour", "unknown field")}
    assert first["errors"][0]["field"] == "attempt"
    assert second["code"] == "oversized" and second["field"] == "output.content"


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_an_empty_batch_is_an_error_not_a_table_of_zeros(tmp_path: Path, content: str) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text(content)
    done = _run(path)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines == [f"error: {path}: empty (no request lines in it)"], done.stderr
    assert done.stdout == ""


def test_the_summary_shows_decisions_failure_codes_and_label_agreement(batch: Path) -> None:
    summary = _run(batch).stderr
    assert "decisions" in summary and "escalated to Stage 2" in summary
    assert "floor:SyntaxError" in summary
    assert "defect recall 1.000" in summary
    # Two accept labels: one accepted, one line that is not a request.
    assert "false-reject rate 0.500" in summary


def test_results_can_go_to_a_file(batch: Path, tmp_path: Path) -> None:
    target = tmp_path / "results.jsonl"
    done = _run(batch, "--out", str(target))
    assert done.stdout == ""
    assert len(target.read_text().splitlines()) == 6


def test_a_batch_of_good_requests_exits_0(tmp_path: Path) -> None:
    path = tmp_path / "good.jsonl"
    path.write_text(json.dumps(_sample("good_python.json")) + "\n")
    done = _run(path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"]["decision"] == "accept"
