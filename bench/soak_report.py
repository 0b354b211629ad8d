"""The soak's figures: per-minute rows into windows and growth fractions, and its plot.

Growth compares the last window of the run with the first window after the warm-up
(the warm-up outlasts every retention window the soak shortens, so what is kept has
reached its steady size by then): a fraction, ``last / first - 1``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import percentile


def minute_row(
    minute: int, latencies_ms: Sequence[float], submitted: int, extra: dict[str, Any]
) -> dict[str, Any]:
    """One minute of the series: what was published in it, and the sampled state."""
    return {
        "minute": minute,
        "submitted": submitted,
        "published": len(latencies_ms),
        "p50_ms": round(percentile(latencies_ms, 50), 1),
        "p99_ms": round(percentile(latencies_ms, 99), 1),
        **extra,
    }


def windows(minutes: int, warmup: int, size: int) -> tuple[range, range]:
    """The first window after the warm-up and the last window, as minute ranges."""
    if minutes < warmup + 2 * size:
        raise ValueError(
            f"{minutes} minute(s) cannot hold a {warmup}-minute warm-up and two "
            f"{size}-minute windows"
        )
    return range(warmup, warmup + size), range(minutes - size, minutes)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def window_mean(series: list[dict[str, Any]], window: range, read: Any) -> float:
    """The mean of ``read(row)`` over the minutes of ``window``."""
    return round(_mean([read(r) for r in series if r["minute"] in window]), 2)


def growth(series: list[dict[str, Any]], first: range, last: range, read: Any) -> float:
    """``last``'s mean of ``read(row)`` over ``first``'s, less one."""
    before = window_mean(series, first, read)
    return round(window_mean(series, last, read) / before - 1, 4) if before else 0.0


def window_p99(latencies: list[tuple[float, float]], start_s: float, window: range) -> float:
    """p99 of the latencies published within ``window`` (minutes from ``start_s``)."""
    low, high = start_s + 60 * window.start, start_s + 60 * window.stop
    return round(percentile([ms for at, ms in latencies if low <= at < high], 99), 1)


def summary(
    series: list[dict[str, Any]],
    latencies: list[tuple[float, float]],
    start_s: float,
    *,
    warmup: int,
    size: int,
) -> dict[str, Any]:
    """Growth of each worker's memory and of Redis's, and the two windows' p99."""
    first, last = windows(len(series), warmup, size)
    workers = sorted(series[0]["worker_rss_mb"])
    rss = {w: (lambda r, w=w: r["worker_rss_mb"][w]) for w in workers}
    per_worker = {w: growth(series, first, last, read) for w, read in rss.items()}

    def redis_mb(row: dict[str, Any]) -> float:
        return float(row["redis_used_memory_mb"])

    def neighbours(row: dict[str, Any]) -> float:
        return float(row["neighbour_cores"])

    return {
        "warmup_minutes": warmup,
        "window_minutes": size,
        "first_window": [first.start, first.stop],
        "last_window": [last.start, last.stop],
        "worker_rss_growth": max(per_worker.values()),
        "worker_rss_growth_by_worker": per_worker,
        "worker_rss_mb_first_window": {w: window_mean(series, first, r) for w, r in rss.items()},
        "worker_rss_mb_last_window": {w: window_mean(series, last, r) for w, r in rss.items()},
        "redis_memory_growth": growth(series, first, last, redis_mb),
        "redis_used_memory_mb_first_window": window_mean(series, first, redis_mb),
        "redis_used_memory_mb_last_window": window_mean(series, last, redis_mb),
        "p99_ms_first_window": window_p99(latencies, start_s, first),
        "p99_ms_last_window": window_p99(latencies, start_s, last),
        "neighbour_cores_first_window": window_mean(series, first, neighbours),
        "neighbour_cores_last_window": window_mean(series, last, neighbours),
    }


def plot(figures: dict[str, Any], path: Path) -> None:
    """Four panels by minute: latency, worker memory, Redis memory, the machine's load."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = figures["series"]
    minutes = [r["minute"] + 1 for r in series]
    fig, axes = plt.subplots(4, 1, figsize=(8, 10), sharex=True)
    axes[0].plot(minutes, [r["p50_ms"] for r in series], label="p50")
    axes[0].plot(minutes, [r["p99_ms"] for r in series], label="p99")
    axes[0].set_ylabel("end to end, ms")
    for worker in sorted(series[0]["worker_rss_mb"]):
        axes[1].plot(minutes, [r["worker_rss_mb"][worker] for r in series], label=worker)
    axes[1].set_ylabel("worker RSS, MiB")
    axes[2].plot(minutes, [r["redis_used_memory_mb"] for r in series], label="used_memory")
    axes[2].set_ylabel("Redis, MiB")
    axes[3].plot(minutes, [r["fleet_cores"] for r in series], label="fleet + Redis")
    axes[3].plot(minutes, [r["neighbour_cores"] for r in series], label="neighbours")
    axes[3].plot(minutes, [r["load_avg_1m"] for r in series], label="load average")
    axes[3].set_ylabel("cores")
    axes[3].set_xlabel("minute")
    for ax in axes:
        ax.axvspan(0.5, figures["warmup_minutes"] + 0.5, color="0.9")
        ax.legend(loc="upper left", fontsize="small")
        ax.set_ylim(bottom=0)
    fig.suptitle(
        f"soak: {figures['minutes']} min at {figures['rate_per_s']}/s "
        f"(warm-up shaded), lost {figures['lost']}, duplicated {figures['duplicated']}"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
