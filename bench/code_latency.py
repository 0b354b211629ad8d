"""What reading code costs a review: Stage 1 in process, before this change and after, side by side.

Run: ``python -m bench.code_latency [--base 395e547] [--rounds 5] [--per-language 20]``.

Two worker processes run ``run_stage1`` in process on the same requests, round after
round, taking turns (the order flips every round): one imports the engine as it was at
``--base`` (``git archive`` of ``schemas/`` and ``workers/`` into a temporary directory),
the other this tree. Every cache of the engine (``functools.lru_cache``) is cleared before
each review, untimed, as a review of new content finds them. The first round warms both
up (a parser package is imported once per process) and is not counted.

Outputs: the installed distributions' markdown READMEs that hold no fenced block (the
outputs without code: the p95 must stay within +5% of the base), and, per language,
real files from ``bench.public.code_corpus`` (under 20,000 characters) fenced in a
markdown answer (the outputs with code: reported per language). Writes
``bench/results/code_latency.json``.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import statistics
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.code_eval import fenced
from bench.public import code_corpus
from bench.public.case import make_request
from bench.public.doc_blocks import unfenced_documents as doc_documents
from bench.public.heldout import is_held_out
from bench.public.pypi_readmes import BENCHMARK as README_BENCHMARK
from bench.public.pypi_readmes import OWN, normalised
from schemas.code import CodeLanguage

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "code_latency.json"
GOAL = 1.05
_WORKER = """
import json, sys, time
from schemas.request import ReviewRequest
from workers.evaluate import run_stage1
import workers
print(json.dumps({"engine": workers.__file__}), flush=True)
requests = json.load(open(sys.argv[1]))

def clear_caches():
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith(("workers", "schemas")):
            for value in list(vars(module).values()):
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()

for line in sys.stdin:
    times = []
    for raw in requests:
        request = ReviewRequest.model_validate_json(json.dumps(raw))
        clear_caches()
        started = time.perf_counter()
        run_stage1(request)
        times.append((time.perf_counter() - started) * 1000)
    print(json.dumps(times), flush=True)
"""


def base_tree(commit: str, into: Path) -> Path:
    """``schemas/`` and ``workers/`` as they were at ``commit``."""
    archive = into / "base.tar"
    with archive.open("wb") as out:
        subprocess.run(
            ["git", "archive", commit, "schemas", "workers"], cwd=ROOT, stdout=out, check=True
        )
    with tarfile.open(archive) as tar:
        tar.extractall(into / "base", filter="data")
    return into / "base"


def without_code(limit: int) -> list[dict[str, Any]]:
    """Markdown READMEs of the installed distributions, and markdown docs, with no fence."""
    found = []
    for document in doc_documents():
        found.append(_request("no-code", document.item_id, document.text))
        if len(found) >= limit // 2:
            break
    for dist in sorted(importlib.metadata.distributions(), key=lambda d: d.metadata["Name"] or ""):
        name = normalised(dist.metadata["Name"] or "")
        if not name or name == OWN or is_held_out(README_BENCHMARK, name):
            continue
        meta = dist.metadata.json
        body = str(meta.get("description", ""))
        if "markdown" not in str(meta.get("description_content_type", "")):
            continue
        if len(body) < 200 or "```" in body or "~~~" in body:
            continue
        found.append(_request("no-code", name, body))
        if len(found) >= limit:
            break
    return found


def with_code(per_language: int) -> dict[str, list[dict[str, Any]]]:
    """Per language, small real files fenced in a markdown answer."""
    paths = code_corpus.candidates()
    out: dict[str, list[dict[str, Any]]] = {}
    for language in CodeLanguage:
        if language is CodeLanguage.SQL:
            items = list(code_corpus.sql_statements(per_language, {}))
        else:
            items = list(code_corpus.sample(paths.get(language, []), language, per_language, {}))
        small = [i for i in items if len(i.text) < 20_000][:per_language]
        out[language.value] = [_request(language.value, i.item_id, fenced(i)) for i in small]
    return out


def _request(group: str, item_id: str, content: str) -> dict[str, Any]:
    return make_request(
        benchmark="code-latency",
        item_id=item_id,
        label=group,
        kind="markdown",
        content=content,
        skill="writer",
    )


def _start(tree: Path, requests: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _WORKER, str(requests)],
        cwd=tree,
        env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0"},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def _p95(values: list[float]) -> float:
    return round(statistics.quantiles(values, n=20)[18], 3) if len(values) >= 2 else 0.0


def run(requests: list[dict[str, Any]], base: Path, rounds: int) -> dict[str, list[float]]:
    """Each side's per-request milliseconds over the counted rounds, taken in turns."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(requests, handle)
    sides = {"base": _start(base, Path(handle.name)), "candidate": _start(ROOT, Path(handle.name))}
    times: dict[str, list[float]] = {name: [] for name in sides}
    try:
        for name, process in sides.items():
            assert process.stdout is not None
            engine = json.loads(process.stdout.readline())["engine"]
            if not engine.startswith(str(base if name == "base" else ROOT)):
                raise RuntimeError(f"{name} imported the engine from {engine}")
        for number in range(rounds + 1):
            order = list(sides) if number % 2 == 0 else list(reversed(sides))
            for name in order:
                process = sides[name]
                assert process.stdin is not None and process.stdout is not None
                process.stdin.write(f"{number}\n")
                process.stdin.flush()
                measured = json.loads(process.stdout.readline())
                if number:
                    times[name].extend(measured)
    finally:
        for process in sides.values():
            if process.stdin is not None:
                process.stdin.close()
            process.wait(timeout=60)
        Path(handle.name).unlink()
    return times


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="395e547")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-code", type=int, default=60)
    parser.add_argument("--per-language", type=int, default=20)
    args = parser.parse_args(argv)
    out: dict[str, Any] = {"base": args.base, "rounds": args.rounds, "goal_p95_ratio": GOAL}
    with tempfile.TemporaryDirectory() as scratch:
        base = base_tree(args.base, Path(scratch))
        groups = {"no_code": without_code(args.no_code), **with_code(args.per_language)}
        for group, requests in groups.items():
            if not requests:
                continue
            times = run(requests, base, args.rounds)
            row = {
                "outputs": len(requests),
                "base_p95_ms": _p95(times["base"]),
                "candidate_p95_ms": _p95(times["candidate"]),
                "base_median_ms": round(statistics.median(times["base"]), 3),
                "candidate_median_ms": round(statistics.median(times["candidate"]), 3),
            }
            row["p95_ratio"] = round(row["candidate_p95_ms"] / max(row["base_p95_ms"], 1e-9), 3)
            out[group] = row
            print(f"{group:11} {json.dumps(row)}")
    RESULTS.write_text(json.dumps(out, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
