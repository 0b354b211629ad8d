"""Every benchmark of issue 7 with small defaults (``make bench``); each prints its table.

Sizes here are for a quick look; run each module alone for the full-size figures
(``python -m bench.overhead`` is N=2000, ``bench.latency`` 20 s per load, ...).
Benchmarks that need a Redis skip with a note when ``redis-server`` is not installed.
"""

from __future__ import annotations

import argparse
import shutil

from bench import corpus, economics, latency, overhead, recall, stage1_io


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--n", type=int, default=500, help="overhead reviews")
    parser.add_argument("--seconds", type=float, default=5.0, help="latency seconds per load")
    parser.add_argument("--seeds", type=int, default=3, help="economics seeds")
    args = parser.parse_args(argv)
    print("== corpus ==")
    corpus.main([])
    print("\n== recall ==")
    recall.run()
    print("\n== economics ==")
    economics.run(args.seeds, 1000)
    if shutil.which("redis-server") is None:
        print("\nredis-server not found: skipping overhead, latency, stage1_io")
        return
    print("\n== overhead ==")
    overhead.run(args.n)
    print("\n== latency ==")
    latency.run(args.seconds)
    print("\n== stage1_io (Stage 2 worker, see its docstring) ==")
    stage1_io.run()


if __name__ == "__main__":
    main()
