"""What the gevent pool changes inside one worker process, checked in a patched child.

Celery's ``--pool gevent`` monkey-patches the standard library before anything else is
imported; each test runs a script that does the same first, so nothing in this test
process is patched.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from workers.fleet.queues import Queue
from workers.local.worker_commands import (
    IO_CONCURRENCY,
    IO_POOL,
    concurrency_for,
    model_judge_in,
    pool_for,
    worker_command,
)

ROOT = Path(__file__).resolve().parents[1]


def run_patched(script: str) -> dict[str, object]:
    """Run ``script`` after ``gevent.monkey.patch_all()``; the JSON it prints last."""
    code = "from gevent import monkey\nmonkey.patch_all()\n" + textwrap.dedent(script)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_two_concurrent_reviews_spans_never_share_a_trace() -> None:
    # Each greenlet opens a review's root span, yields to the other mid-way, then opens a
    # child: OpenTelemetry's context is a contextvar, and each greenlet has its own.
    result = run_patched(
        """
        import json
        import gevent
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        from opentelemetry import trace
        from workers.observe import telemetry
        from workers.settings import Settings

        exporter = InMemorySpanExporter()
        telemetry.setup(Settings(judge_backend="builtin"), span_exporter=exporter,
                        metric_reader=InMemoryMetricReader(), install_global=False)
        tracer = telemetry.current().tracer
        both_open = gevent.event.Event()
        opened = []

        def review(name):
            with tracer.start_as_current_span(f"root-{name}") as root:
                opened.append(name)
                if len(opened) == 2:
                    both_open.set()
                both_open.wait(5)
                gevent.sleep(0.01)
                current = trace.get_current_span().get_span_context().trace_id
                with tracer.start_as_current_span(f"child-{name}") as child:
                    gevent.sleep(0.01)
                    return [root.get_span_context().trace_id, current,
                            child.get_span_context().trace_id]

        jobs = [gevent.spawn(review, n) for n in ("a", "b")]
        gevent.joinall(jobs, raise_error=True)
        telemetry.shutdown()
        a, b = (job.value for job in jobs)
        print(json.dumps({"a": a, "b": b, "overlapped": both_open.is_set()}))
        """
    )
    assert result["overlapped"] is True  # both roots were open at once
    a, b = result["a"], result["b"]
    assert isinstance(a, list) and isinstance(b, list)
    assert len(set(a)) == 1 and len(set(b)) == 1, (a, b)  # current span and child: own trace
    assert a[0] != b[0]


def test_the_sdk_pool_checks_idle_connections_without_the_hub() -> None:
    result = run_patched(
        """
        import json, select, socket
        from gevent import monkey
        import httpcore2._utils as utils
        from workers.judges.anthropic_judge import AnthropicJudge
        from workers.settings import Settings

        patched_before = utils.select.poll is not monkey.get_original("select", "poll")
        AnthropicJudge(Settings(judge_backend="anthropic", anthropic_api_key="k")).close()
        a, b = socket.socketpair()
        quiet = utils.is_socket_readable(a)
        b.sendall(b"x")
        print(json.dumps({
            "patched_before": patched_before,
            "original_after": utils.select.poll is monkey.get_original("select", "poll"),
            "quiet": quiet,
            "readable": utils.is_socket_readable(a),
        }))
        """
    )
    assert result == {
        "patched_before": True,
        "original_after": True,
        "quiet": False,
        "readable": True,
    }


def test_stages_that_call_a_model_run_on_gevent_and_the_router_on_threads() -> None:
    model = {"WINDAGS_JUDGE_BACKEND": "anthropic", "WINDAGS_ANTHROPIC_API_KEY": "k"}
    assert model_judge_in(model)
    assert model_judge_in({"WINDAGS_ANTHROPIC_API_KEY": "k"})  # auto with a key
    assert not model_judge_in(
        {"WINDAGS_JUDGE_BACKEND": "builtin", "WINDAGS_ANTHROPIC_API_KEY": "k"}
    )
    assert not model_judge_in({})
    assert not model_judge_in({"WINDAGS_JUDGE_BACKEND": "nonsense"})  # the worker says why
    assert [pool_for(q, model_judge=True) for q in Queue] == [IO_POOL, "threads", IO_POOL, IO_POOL]
    # The refs lane waits on the web whatever the judge.
    assert {q: pool_for(q, model_judge=False) for q in Queue if q is not Queue.REFS} == {
        Queue.STAGE1: "threads",
        Queue.ROUTER: "threads",
        Queue.STAGE2: "threads",
    }
    assert pool_for(Queue.REFS, model_judge=False) == IO_POOL
    assert concurrency_for(Queue.STAGE1, IO_POOL) == IO_CONCURRENCY[Queue.STAGE1] >= 100
    command = worker_command(Queue.STAGE1, concurrency=100, pool=IO_POOL)
    # Celery patches only when it finds the pool on its own command line.
    assert command[command.index("--pool") + 1] == "gevent"
