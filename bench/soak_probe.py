"""What the soak samples each minute: processes' memory and CPU, Redis, and the machine.

Worker memory is each worker's whole session (the worker and what it started, beat
included), read from ``/proc``. CPU is read the same way, as cores used over the minute,
for the fleet (workers and Redis) and for the whole machine: the difference is what the
neighbours used, so that a latency moved by another tenant can be told from one moved by
the fleet.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis

from workers.fleet.queues import Queue
from workers.keys import Keys

_TICKS_PER_S = os.sysconf("SC_CLK_TCK")
_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")


def _stat(pid: int) -> list[str] | None:
    """``/proc/<pid>/stat`` after the command name (field 3 on); None when gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def session_pids(session: int) -> list[int]:
    """Live processes of a session (a worker the launcher started leads its own)."""
    found = []
    for entry in Path("/proc").iterdir():
        stat = _stat(int(entry.name)) if entry.name.isdigit() else None
        if stat is not None and stat[0] != "Z" and int(stat[3]) == session:
            found.append(int(entry.name))
    return found


def rss_mb(pids: list[int]) -> float:
    """Resident memory of ``pids`` together, in MiB."""
    pages = 0
    for pid in pids:
        try:
            pages += int(Path(f"/proc/{pid}/statm").read_text().split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return pages * _PAGE_BYTES / 2**20


def cpu_s(pids: list[int]) -> float:
    """User + system CPU seconds ``pids`` used so far."""
    total = 0
    for pid in pids:
        stat = _stat(pid)
        if stat is not None:
            total += int(stat[11]) + int(stat[12])
    return total / _TICKS_PER_S


def machine_busy_s() -> tuple[float, float]:
    """(busy CPU seconds, all CPU seconds) of the whole machine so far (``/proc/stat``)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    total = sum(fields[:8])  # guest time is already in user
    return (total - idle) / _TICKS_PER_S, total / _TICKS_PER_S


@dataclass
class CpuMeter:
    """Cores used since the last reading, by the fleet and by the machine."""

    ours: float = 0.0
    busy: float = 0.0
    total: float = 0.0

    def read(self, ours_s: float) -> dict[str, float]:
        """Cores the fleet and the rest of the machine used since the last call."""
        busy, total = machine_busy_s()
        cores = os.cpu_count() or 1
        span = (total - self.total) / cores if self.total else 0.0
        fleet = (ours_s - self.ours) / span if span else 0.0
        machine = (busy - self.busy) / span if span else 0.0
        self.ours, self.busy, self.total = ours_s, busy, total
        return {
            "fleet_cores": round(fleet, 2),
            "neighbour_cores": round(max(0.0, machine - fleet), 2),
            "load_avg_1m": round(os.getloadavg()[0], 2),
        }


def redis_figures(db: redis.Redis, keys: Keys) -> dict[str, Any]:
    """Redis memory and the fleet's queues, in-flight sets and side streams, now."""
    memory = db.info("memory")
    pipe = db.pipeline(transaction=False)
    for queue in Queue:
        pipe.llen(keys.queue(queue.value))
    for queue in Queue:
        pipe.zcard(keys.reserved(queue.value))
    pipe.hlen(keys.unacked)
    for stream in (keys.quarantine, keys.dead_letter, keys.unroutable):
        pipe.xlen(stream)
    pipe.zcard(keys.human_pending)
    pipe.hlen(keys.human_summaries)
    pipe.dbsize()
    got = [int(v) for v in pipe.execute()]
    n = len(Queue)
    return {
        "redis_used_memory_mb": round(int(memory["used_memory"]) / 2**20, 2),
        "redis_rss_mb": round(int(memory["used_memory_rss"]) / 2**20, 2),
        "queued": dict(zip([q.value for q in Queue], got[:n], strict=True)),
        "reserved": dict(zip([q.value for q in Queue], got[n : 2 * n], strict=True)),
        "unacked": got[2 * n],
        "quarantine_len": got[2 * n + 1],
        "dead_letters": got[2 * n + 2],
        "unroutable_len": got[2 * n + 3],
        "human_pending": got[2 * n + 4],
        "human_summaries": got[2 * n + 5],
        "redis_keys": got[2 * n + 6],
        "keys_by_kind": keys_by_kind(db, keys.prefix),
    }


def keys_by_kind(db: redis.Redis, prefix: str) -> dict[str, int]:
    """How many keys of each kind (the part after the prefix: results, published...)."""
    kinds: Counter[str] = Counter()
    for key in db.scan_iter(match=f"{prefix}:*", count=1000):
        kinds[key.decode(errors="replace").split(":", 2)[1]] += 1
    return dict(sorted(kinds.items()))
