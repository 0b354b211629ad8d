"""Every local fleet removes its temporary log folder on exit, unless a worker failed.

Real worker processes against the run's test Redis database (``cli_redis_url``), and a
private redis-server.
"""

from __future__ import annotations

import os
import signal
import tempfile
import time
from pathlib import Path

import pytest

from workers.fleet.queues import Queue
from workers.local.launcher import LocalFleet

SMALL = {Queue.STAGE1: 1, Queue.ROUTER: 1, Queue.STAGE2: 1}


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    return Path(tempfile.mkdtemp(prefix="windags-fleet-", dir=tmp_path))


def test_a_fleet_that_ran_cleanly_leaves_no_folder(log_dir: Path, cli_redis_url: str) -> None:
    with LocalFleet(cli_redis_url, concurrency=dict(SMALL), log_dir=log_dir) as fleet:
        fleet.wait_ready()
        assert (log_dir / "stage1.log").exists()
    assert not log_dir.exists()


def test_a_fleet_whose_worker_failed_keeps_its_logs_and_says_where(
    log_dir: Path, capsys: pytest.CaptureFixture[str], cli_redis_url: str
) -> None:
    with LocalFleet(cli_redis_url, concurrency=dict(SMALL), log_dir=log_dir) as fleet:
        fleet.wait_ready()
        os.killpg(fleet.workers[Queue.ROUTER].pid, signal.SIGKILL)  # not via kill_worker
        deadline = time.monotonic() + 20
        while fleet.supervisor is not None and not fleet.supervisor.restarts:
            assert time.monotonic() < deadline, "the supervisor never saw the worker exit"
            time.sleep(0.2)
    assert (log_dir / "router.log").exists()
    assert f"kept in {log_dir}" in capsys.readouterr().err


def test_a_fleet_that_cannot_start_leaves_no_folder(log_dir: Path) -> None:
    from workers.errors import FleetError

    with (
        pytest.raises(FleetError),
        LocalFleet("redis://127.0.0.1:1/0", start_private_redis=False, log_dir=log_dir),
    ):
        pass
    assert not log_dir.exists()


def test_a_fleet_on_a_private_redis_leaves_neither_folder_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.infrastructure import require_redis_server
    from workers.local.redis_server import free_port

    require_redis_server()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where mkdtemp puts both
    nobody = f"redis://127.0.0.1:{free_port()}/0"
    with LocalFleet(nobody, concurrency=dict(SMALL), start_private_redis=True) as fleet:
        assert fleet.private is not None
        fleet.wait_ready()
        made = {p.name.split("-")[1] for p in tmp_path.glob("windags-*")}
        assert made == {"fleet", "redis"}, made
    assert list(tmp_path.glob("windags-*")) == []
