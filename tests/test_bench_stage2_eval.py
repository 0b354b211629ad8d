"""``python -m bench.stage2_eval`` (issue 23, item 3) on a tiny budget, against the local double.

The command runs as a user runs it, in its own process, with Stage 2 pointed at the
scripted Messages API server; the first Ceiling call gets two replies without a verdict,
so one parse failure (after the repair turn) must be counted where it happened.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.public.heldout import Half, half_of
from bench.public.sources import load
from bench.stage2_eval import BUILTIN_NOTE, main, sample_test_half
from tests.infrastructure import unavailable
from workers.testing.messages_api.server import Reply, ServerHandle

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("humaneval", "halueval-qa")
VERDICTS = ("stage1", "stage2", "together", "every")


def run_command(*args: str, api_key: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "WINDAGS_ANTHROPIC_API_KEY": api_key}
    return subprocess.run(
        [sys.executable, "-m", "bench.stage2_eval", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


def test_the_command_measures_stage2_per_source_and_counts_parse_failures(
    server: ServerHandle, tmp_path: Path
) -> None:
    server.script(Reply.no_tool(), Reply.no_tool())  # the first Ceiling call: unusable
    out = tmp_path / "stage2_eval.json"
    done = run_command(
        *("--endpoint", server.base_url, "--model", "smol-judge"),
        *("--budget", "2", "--sources", ",".join(SOURCES), "--out", str(out)),
        api_key=server.api_key,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(out.read_text())["runs"]["smol-judge (tool use forced)"]
    assert results["judge"]["backend"] == "messages-api"
    assert results["judge"]["model"] == "smol-judge" and results["half"] == "test"
    assert "smol-judge on http://127.0.0.1" in done.stdout
    assert "stage2_eval:" in done.stderr and "cases" in done.stderr  # progress shown

    code = results["sources"]["humaneval"]
    assert code["n"] > 0 and code["good"] > 0 and code["defects"] > 0
    for verdict in VERDICTS:
        assert {"recall", "false_reject"} <= set(code[verdict]), verdict
    stage2 = code["stage2"]
    assert stage2["sent"] > 0 and stage2["calls"] == stage2["sent"]
    assert stage2["parse_failures"] == 1 and stage2["indeterminate"] == 1
    assert stage2["forms"]["unusable"] == 1 and stage2["forms"]["tool"] == stage2["sent"] - 1
    assert stage2["input_tokens"] > 0 and stage2["p95_ms"] is not None
    assert code["swap"]["pairs"] >= 1 and code["swap"]["judged"] == code["swap"]["pairs"]
    assert code["swap"]["mean_disagreement"] is not None

    overall = results["overall"]
    assert overall["stage2"]["parse_failures"] == 1
    sent = sum(f["stage2"]["sent"] for f in results["sources"].values())
    swap_calls = sum(f["swap"]["calls"] for f in results["sources"].values())
    assert overall["stage2"]["calls"] == sent
    # One HTTP request a task, and the repair turn of the one that failed.
    assert server.calls == sent + swap_calls + 1
    qa = results["sources"]["halueval-qa"]
    if qa["unavailable"] is not None:
        unavailable(f"HaluEval data: {qa['unavailable']}")
    assert qa["n"] > 0


def test_without_an_endpoint_it_runs_the_builtin_judge_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "builtin.json"
    out.write_text(json.dumps({"runs": {"other (tool use none)": {"kept": True}}}))
    assert main(["--budget", "1", "--sources", "humaneval", "--out", str(out)]) == 0
    printed = capsys.readouterr()
    assert BUILTIN_NOTE in printed.out and BUILTIN_NOTE in printed.err
    runs = json.loads(out.read_text())["runs"]
    assert runs["other (tool use none)"] == {"kept": True}  # another judge's run stays
    results = runs["builtin"]
    assert results["judge"] == {"backend": "builtin", "note": BUILTIN_NOTE}
    stage2 = results["sources"]["humaneval"]["stage2"]
    assert stage2["forms"] == {"none": stage2["calls"]} and stage2["cost_usd"] == 0.0


def test_only_test_half_items_are_sampled() -> None:
    loaded = load("humaneval", None)
    picked = sample_test_half(loaded.cases, 3)
    assert picked and {half_of(c.benchmark, c.id) for c in picked} == {Half.TEST}
    assert len({c.id for c in picked}) == 3
