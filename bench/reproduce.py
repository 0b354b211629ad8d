"""The deterministic benches' short runs, compared with their committed results.

Run: ``python -m bench.reproduce [NAME ...]`` (exit 1 on any difference), or
``python -m bench.reproduce --write public-eval`` to record the public evaluation's baseline.

A bench whose figures no clock moves (economics, recall, topology's shapes, the public
evaluation's decisions) gets a short run that a test repeats and compares with what is
committed, so a change that moves them fails the suite instead of landing silently. Each
check names the one command that refreshes its committed figures:

- ``economics``: one seed of 600 nodes, every policy; the full run stores it beside its
  figures (``economics.json``'s ``short``): ``python -m bench.economics``.
- ``economics-topology``: one seed of a 100-node DAG, stored likewise:
  ``python -m bench.economics --topology``.
- ``recall``: the whole corpus (it is small): ``python -m bench.recall``.
- ``topology``: each DAG's edges, consumers and critical path (not its timings):
  ``python -m bench.topology``.
- ``public-eval``: ``public_short`` (the engine's decisions on a fixed dev-half sample).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from bench import common, public_short
from bench.corpus import load
from bench.review_corpus import Verdicts, judge_item
from workers.judges.builtin import BuiltinJudge


@dataclass(frozen=True)
class Check:
    """One bench's short run against its committed figures."""

    command: str
    """What refreshes the committed figures."""
    committed: Callable[[], Any]
    fresh: Callable[[], Any]


def _results(name: str) -> dict[str, Any]:
    path = common.RESULTS_DIR / f"{name}.json"
    figures: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return figures


@cache
def _corpus() -> tuple[list[dict[str, Any]], dict[str, Verdicts]]:
    """The corpus and each item's verdicts, reviewed once for recall and economics."""
    items = load(common.CORPUS_PATH)
    judge = BuiltinJudge()
    return items, {i["id"]: judge_item(i, judge) for i in items}


def _economics() -> Any:
    from bench import economics

    items, verdicts = _corpus()
    figures = economics.short(economics.Simulation(items, verdicts))
    return {"seed": economics.SHORT_SEED, "nodes": economics.SHORT_NODES, "figures": figures}


def _recall() -> Any:
    from bench import recall

    items, verdicts = _corpus()
    return recall.summarise(items, [verdicts[i["id"]] for i in items])


def _recall_committed() -> Any:
    figures = _results("recall")
    return {k: v for k, v in figures.items() if k not in common.machine()}


def _topology_committed() -> list[dict[str, Any]]:
    from bench import topology

    figures = _results("topology")
    keys = topology.structure(2, 1).keys()
    return [{k: row[k] for k in keys} for row in figures["dags"]]


def _topology() -> list[dict[str, Any]]:
    from bench import topology

    nodes = _results("topology")["nodes"]
    return [topology.structure(nodes, layers) for layers in topology.LAYERS]


def _economics_topology() -> Any:
    from bench import economics, economics_topology

    items, verdicts = _corpus()
    return economics_topology.short(economics.Simulation(items, verdicts))


CHECKS: dict[str, Check] = {
    "economics": Check(
        "python -m bench.economics", lambda: _results("economics").get("short"), _economics
    ),
    "economics-topology": Check(
        "python -m bench.economics --topology",
        lambda: _results("economics_topology").get("short"),
        _economics_topology,
    ),
    "recall": Check("python -m bench.recall", _recall_committed, _recall),
    "topology": Check("python -m bench.topology", _topology_committed, _topology),
    "public-eval": Check(public_short.COMMAND, public_short.committed, public_short.fresh),
}


def differences(committed: Any, fresh: Any, path: str = "") -> list[str]:
    """Where two JSON-like values differ, one line per leaf (at most a screenful)."""
    if isinstance(committed, dict) and isinstance(fresh, dict):
        found = []
        for key in sorted(set(committed) | set(fresh), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in committed or key not in fresh:
                found.append(f"{where}: only in the {'fresh' if key in fresh else 'committed'}")
            else:
                found += differences(committed[key], fresh[key], where)
        return found
    if isinstance(committed, list) and isinstance(fresh, list) and len(committed) == len(fresh):
        return [d for i, (a, b) in enumerate(zip(committed, fresh, strict=True))
                for d in differences(a, b, f"{path}[{i}]")]  # fmt: skip
    return [] if committed == fresh else [f"{path}: committed {committed!r}, fresh {fresh!r}"]


def check(name: str) -> list[str]:
    """What differs between ``name``'s committed figures and a fresh short run."""
    spec = CHECKS[name]
    committed = spec.committed()
    if committed is None:
        return [f"no committed short figures: run {spec.command}"]
    # Through JSON, as the committed side was: tuples become lists, keys strings.
    fresh = json.loads(json.dumps(spec.fresh()))
    return differences(committed, fresh)


def main(argv: Sequence[str] | None = None) -> int:
    """Check the named benches (all by default), or write the public-eval baseline."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("names", nargs="*", help=f"some of {', '.join(CHECKS)} (all: none)")
    parser.add_argument("--write", choices=["public-eval"], help="record that baseline")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(CHECKS))
    if unknown:
        parser.error(f"no such check: {', '.join(unknown)}")
    if args.write:
        print(f"wrote {public_short.write()}")
        return 0
    failed = 0
    for name in args.names or CHECKS:
        found = check(name)
        print(f"{name}: {'as committed' if not found else f'{len(found)} differences'}")
        for line in found[:20]:
            print(f"  {line}")
        if found:
            print(f"  refresh with: {CHECKS[name].command}", file=sys.stderr)
            failed = 1
    return failed


if __name__ == "__main__":
    raise SystemExit(main())
