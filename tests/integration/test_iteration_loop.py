"""The iteration loop closed, end to end on a real fleet: attempts remembered, humans heard.

The DAG runtime here does what a real one would: it reads each attempt's decision from
the stream and sends the next attempt without ``history``; the fleet supplies it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import redis

from schemas.decisions import Decision, Trend
from schemas.human import HumanDecision, VerdictAction
from schemas.result import ReviewResult
from tests.infrastructure import wait_until
from tests.integration.support import fresh_dag, sample
from workers.client import ReviewClient
from workers.fleet.deps import build_records
from workers.local.launcher import LocalFleet
from workers.results.stream import AnyEntry, read_all_kinds
from workers.settings import Settings

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]

FIXED_HANDLER = (
    "from flask import Flask, jsonify\n\napp = Flask(__name__)\n\n\n"
    '@app.route("/status")\ndef handle_route():\n'
    '    """Report that the service is up, for the load balancer\'s health check."""\n'
    '    return jsonify({"status": "ok"})\n'
)


def entries_once(db: redis.Redis, settings: Settings, dag: str, count: int) -> list[AnyEntry]:
    stream = settings.keys.results(dag)
    assert wait_until(lambda: db.xlen(stream) >= count, timeout_s=60), stream
    return read_all_kinds(db, stream)


def submit(client: ReviewClient, body: dict[str, Any]) -> None:
    assert "history" not in body
    client.submit(body)


def test_attempt_two_without_history_gets_its_trend_from_attempt_ones_stored_score(
    fleet: LocalFleet, client: ReviewClient, redis_db: redis.Redis, settings: Settings
) -> None:
    dag = fresh_dag()
    first = sample("floor_failure_python.json", dag_id=dag)
    submit(client, first)
    [one] = [e.payload for e in entries_once(redis_db, settings, dag, 1)]
    assert isinstance(one, ReviewResult)
    assert one.decision is Decision.ITERATE and one.feedback is not None
    assert one.feedback.specific_issues[0].field  # the Floor's violation, to fix

    submit(client, {**first, "attempt": 2, "output": {"kind": "python", "content": FIXED_HANDLER}})
    two = entries_once(redis_db, settings, dag, 2)[1].payload
    assert isinstance(two, ReviewResult) and two.attempt == 2
    assert two.convergence.scores == (one.basis.score, two.basis.score) == (0.0, 1.0)
    assert two.convergence.trend is Trend.IMPROVING and two.convergence.best_attempt == 2
    assert two.decision is Decision.ACCEPT


def test_a_verdict_from_the_command_line_flows_into_the_next_attempts_convergence(
    fleet: LocalFleet,
    client: ReviewClient,
    redis_db: redis.Redis,
    settings: Settings,
    fleet_env: dict[str, str],
    redis_url: str,
) -> None:
    dag = fresh_dag()
    first = sample("example3_conflicting_signals.json", dag_id=dag)
    submit(client, first)
    [one] = [e.payload for e in entries_once(redis_db, settings, dag, 1)]
    assert isinstance(one, ReviewResult) and one.decision is Decision.ESCALATE_HUMAN

    env = {**os.environ, **fleet_env, "WINDAGS_REDIS_URL": redis_url}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        """``windags-eval ARGS`` as an operator runs it, against the test fleet's Redis."""
        command = [sys.executable, "-m", "workers.local.cli", *args]
        return subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False
        )

    verdict = ("verdict", dag, "sql-optimizer", "1")
    flags = ("--send-back", "--feedback", "Add a LIMIT", "--score", "correctness=0.4")
    done = cli(*verdict, *flags, "--reviewer", "ops-oncall")
    assert done.returncode == 0, done.stderr
    printed = HumanDecision.model_validate_json(done.stdout)
    assert printed.decision is Decision.ITERATE and printed.reviewer == "ops-oncall"
    again = cli(*verdict, "--accept", "--reviewer", "someone-else")
    assert again.returncode == 1 and "already decided by ops-oncall" in again.stderr

    kinds = [e.fields["kind"] for e in entries_once(redis_db, settings, dag, 3)]
    assert kinds == ["result", "human_verdict", "decision"]
    # The runtime resumes the node with the reviewer's feedback, without a history.
    submit(client, {**first, "attempt": 2, "signals": {"peer": 0.85, "downstream": 0.8}})
    two = entries_once(redis_db, settings, dag, 4)[3].payload
    assert isinstance(two, ReviewResult)
    # Attempt 1's stored score is the one recomputed with the human's 0.4 correctness.
    assert two.convergence.scores[0] == printed.basis.score == 0.4
    assert two.convergence.trend is Trend.IMPROVING
    record = json.loads(redis_db.hget(settings.keys.attempts(dag, "sql-optimizer"), "1") or b"{}")
    assert record["human_action"] == VerdictAction.SEND_BACK

    # The consumer of attempt 2 reports later how usable it was; an unknown attempt is refused.
    report = ("outcomes", "report", dag)
    reported = cli(*report, "sql-optimizer", "2", "0.3", "--reporter", "exec-engine")
    unknown = cli(*report, "no-such-node", "2", "0.3", "--reporter", "exec-engine")
    assert reported.returncode == 0, reported.stderr
    assert "recorded 0.3 from downstream:exec-engine" in reported.stdout
    assert unknown.returncode == 1 and "remembers no such attempt" in unknown.stderr
    outcomes = build_records(redis_db, settings).outcomes
    [label] = outcomes.export(evaluator="downstream:exec-engine")
    assert (label.dag_id, label.attempt, label.label) == (dag, 2, 0.3)
