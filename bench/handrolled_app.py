"""The pipeline a user would write by hand: stage1 task -> router task -> XADD.

``bench.overhead`` runs it beside the fleet so that the fleet's cost is shown against
what the same work costs without the fleet's guarantees. Same shape and the same engine
(the strict request decoder, ``run_stage1`` with the built-in judge, the escalation
decision and ``finalize``), the same pools, concurrency and command-line flags
(``worker_command``), late acks and ``task_reject_on_worker_lost``, the same Redis; but
kombu's stock Redis transport, and none of the fleet's own work: no try counters, no
publish-once script, no cost ledger, no human gate, no spans.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import redis
from celery import Celery

from schemas.hops import Stage1Report
from schemas.request import ReviewRequest
from workers.connections import redis_client
from workers.evaluate import decide_escalation, finalize, run_stage1
from workers.fleet.queues import Queue
from workers.intake import decode_request, encode_request
from workers.local.launcher import worker_command
from workers.settings import Settings, load_settings

STAGE1 = "bench.handrolled.stage1"
ROUTER = "bench.handrolled.router"
#: Its own queues, one per fleet queue (the third, like the fleet's Stage 2, stays idle).
QUEUES = {Queue.STAGE1: "bench-hr-stage1", Queue.ROUTER: "bench-hr-router"}
IDLE_QUEUE = "bench-hr-stage2"


def config(settings: Settings) -> dict[str, Any]:
    """What a careful user sets: late acks, no lost reviews on a killed worker, JSON."""
    return {
        "broker_url": settings.redis_url,
        "broker_transport_options": {"visibility_timeout": settings.visibility_timeout_s},
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "task_ignore_result": True,
        "task_serializer": "json",
        "accept_content": ["json"],
        "worker_hijack_root_logger": False,
        "task_routes": {
            STAGE1: {"queue": QUEUES[Queue.STAGE1]},
            ROUTER: {"queue": QUEUES[Queue.ROUTER]},
        },
    }


_SETTINGS = load_settings()  # a worker process of its own: its environment is its config
app = Celery("bench-handrolled")
app.conf.update(config(_SETTINGS))


@cache
def _client() -> redis.Redis:
    return redis_client(_SETTINGS)


def _stage1(raw: str) -> None:
    request = decode_request(
        raw,
        max_request_bytes=_SETTINGS.max_request_bytes,
        max_output_chars=_SETTINGS.max_output_chars,
    )
    report = run_stage1(request)
    app.send_task(ROUTER, args=[encode_request(request), report.model_dump_json()])


def _router(request_json: str, report_json: str) -> None:
    request = ReviewRequest.model_validate_json(request_json)
    report = Stage1Report.model_validate_json(report_json)
    escalation = decide_escalation(
        request,
        stage2_price=_SETTINGS.price_of(_SETTINGS.stage2_model),
        stage1=report.stage1,
    )
    result = finalize(request, report, escalation, None)
    _client().xadd(
        _SETTINGS.keys.results(request.dag_id),
        {"review_key": f"{request.dag_id}:{request.node_id}", "payload": result.model_dump_json()},
    )


stage1: Any = app.task(name=STAGE1)(_stage1)
router: Any = app.task(name=ROUTER)(_router)


def handrolled_command(like: Queue, *, concurrency: int, pool: str, name: str) -> list[str]:
    """The fleet's worker command for ``like``, pointed at this app and its own queue."""
    command = worker_command(like, concurrency=concurrency, name=name, pool=pool)
    command[command.index("workers.fleet.worker")] = "bench.handrolled_app"
    command[command.index(like.value, command.index("-Q"))] = QUEUES.get(like, IDLE_QUEUE)
    return command


def client_app(settings: Settings) -> Celery:
    """A producer-side app of the pipeline, on ``settings``' broker."""
    producer = Celery("bench-handrolled-client")
    producer.conf.update(config(settings))
    return producer
