"""Packages that exist, measured: false rejects on real code and READMEs, hallucinations caught.

Run: ``python -m bench.package_refs [--budget N] [--listing PATH]``.

1. **Real outputs** (expect no package finding): the tunable items of ``site-packages``,
   ``cpython-stdlib``, ``humaneval`` (good solutions) and ``pypi-readme``, as
   ``bench/public`` loads them (held-out items are never read). Each is checked with the
   shipped snapshot as the authority (no live index): the share of outputs with any
   package finding, and with a definite one (those the check alone sends back).
2. **Hallucinated names** (``bench/package_names.py``): near misses and compounds of the
   most downloaded projects, each absent from the listing, written into five contexts (an
   install command in markdown, ``uv add`` in text, a requirements line, an import under a
   declared environment, an import with none). Caught: a definite finding; for the import
   with no environment, a suspect one, and the decision must not change because of it
   (the same output importing ``json`` instead is the control).

Every figure is given for the dev half and the test half side by side; findings on real
outputs are listed (id and message) for the dev half only. Figures go to
``bench/results/package_refs.json``.
"""

from __future__ import annotations

import json
import keyword
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from bench import common, package_names
from bench.public import engine
from bench.public.case import Case
from bench.public.heldout import Half, half_of
from bench.public.sources import load
from schemas.request import ReviewRequest
from schemas.result import Decision
from schemas.stages import Certainty
from workers.evaluate.findings import Finding
from workers.evaluate.wall.packages import PackageCheck, package_findings
from workers.evaluate.wall.packages.references import references

REAL = ("site-packages", "cpython-stdlib", "humaneval", "pypi-readme")
SNAPSHOT_ONLY = PackageCheck()
CONTEXTS: dict[str, tuple[str, str, list[str] | None]] = {
    "markdown-install": (
        "markdown",
        "## Setup\n\nInstall the client first:\n\n```bash\npip install {name}\n```\n\n"
        "Then configure the connection string in the environment.\n",
        None,
    ),
    "text-uv-add": ("text", "Add the dependency with `uv add {name}`, then restart.", None),
    "requirements-line": (
        "markdown",
        "Pin it in requirements.txt:\n\n```\n{name}>=1.2.0\n```\n",
        None,
    ),
    "import-declared": (
        "python",
        "import {module}\n\n\ndef describe() -> str:\n    return {module}.__name__\n",
        ["requests>=2.31", "pydantic>=2"],
    ),
    "import-undeclared": (
        "python",
        "import {module}\n\n\ndef describe() -> str:\n    return {module}.__name__\n",
        None,
    ),
}


def _request(obj: dict[str, Any]) -> ReviewRequest:
    return ReviewRequest.model_validate_json(json.dumps(obj))


def _cases(budget: int | None) -> list[Case]:
    cases: list[Case] = []
    for name in REAL:
        loaded = load(name, budget)
        cases.extend(c for c in loaded.cases if c.label == "good")
    return cases


def real_outputs(budget: int | None) -> dict[str, Any]:
    """Package findings on real, good outputs, per benchmark and half."""
    counts: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    shown: list[dict[str, str]] = []
    started = time.perf_counter()
    for item in _cases(budget):
        half = half_of(item.benchmark, item.id)
        request = _request(item.request)
        found = package_findings(request, SNAPSHOT_ONLY)
        used = references(request.output)
        tally = counts[(item.benchmark, half.value)]
        tally["outputs"] += 1
        tally["using_packages"] += bool(used)
        tally["packages_named"] += len(used)
        tally["with_finding"] += bool(found)
        tally["with_definite"] += any(f.issue.certainty is Certainty.DEFINITE for f in found)
        if found and half is Half.DEV:
            shown.extend(_shown(item, found))
    table = {
        f"{bench}/{half}": {**tally, **_rates(tally)}
        for (bench, half), tally in sorted(counts.items())
    }
    for half in Half:
        total: Counter[str] = Counter()
        for (_, h), tally in counts.items():
            if h == half.value:
                total.update(tally)
        table[f"all/{half.value}"] = {**total, **_rates(total)}
    return {
        "by_source": table,
        "dev_findings": shown,
        "seconds": round(time.perf_counter() - started, 1),
    }


def _rates(tally: Counter[str]) -> dict[str, float]:
    n = max(1, tally["outputs"])
    return {
        "finding_rate": round(tally["with_finding"] / n, 5),
        "definite_rate": round(tally["with_definite"] / n, 5),
    }


def _shown(item: Case, found: Iterable[Finding]) -> list[dict[str, str]]:
    return [
        {
            "id": f"{item.benchmark}:{item.id}",
            "certainty": f.issue.certainty.value,
            "message": f.issue.message[:300],
        }
        for f in found
    ]


def _made_request(
    made: package_names.Made, context: str, module_override: str | None = None
) -> ReviewRequest | None:
    kind, template, requirements = CONTEXTS[context]
    module = module_override or made.name.replace("-", "_")
    if kind == "python" and (not module.isidentifier() or keyword.iskeyword(module)):
        return None  # no module can have that name: ``import is`` fails the Floor
    obj = {
        "dag_id": "package-refs",
        "node_id": f"{context}-{made.kind}",
        "skill": {"id": "writer", "success_rate": 0.9},
        "output": {"kind": kind, "content": template.format(name=made.name, module=module)},
    }
    if requirements is not None:
        obj["contract"] = {"requirements": requirements}
    return _request(obj)


def hallucinated(listing: Path, per_name: int, top: int) -> dict[str, Any]:
    """The rate each context catches constructed names, by kind and half."""
    listed, ranked = package_names.listing(listing)
    popular = ranked[:top]
    made = [
        *package_names.near_misses(popular, listed, per_name),
        *package_names.compounds(popular, listed, per_name),
    ]
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for item in made:
        for context in CONTEXTS:
            request = _made_request(item, context)
            if request is None:
                continue
            found = package_findings(request, SNAPSHOT_ONLY)
            key = f"{context}/{item.kind}/{item.half.value}"
            counts[key]["names"] += 1
            counts[key]["definite"] += any(f.issue.certainty is Certainty.DEFINITE for f in found)
            counts[key]["any"] += bool(found)
            if context == "import-undeclared":
                counts[key]["decision_changed"] += _decision_changed(item, request)
    table = {
        k: {
            **v,
            "caught": round(v["definite"] / max(1, v["names"]), 4),
            "flagged": round(v["any"] / max(1, v["names"]), 4),
        }
        for k, v in sorted(counts.items())
    }
    return {"names": Counter(f"{m.kind}/{m.half.value}" for m in made), "by_context": table}


def _decision_changed(item: package_names.Made, request: ReviewRequest) -> int:
    control = _made_request(item, "import-undeclared", module_override="json")
    assert control is not None
    with_it, without = engine.review(request).decision, engine.review(control).decision
    return int(with_it is not without and with_it is not Decision.ACCEPT)


def main(argv: list[str] | None = None) -> None:
    parser = common.command_line(__doc__)
    parser.add_argument("--budget", type=int, default=None, help="items per real source")
    parser.add_argument("--listing", type=Path, default=package_names.LISTING)
    parser.add_argument("--per-name", type=int, default=1)
    parser.add_argument("--top", type=int, default=2000, help="popular names to start from")
    args = parser.parse_args(argv)
    figures = {
        "real": real_outputs(args.budget),
        "hallucinated": hallucinated(args.listing, args.per_name, args.top),
    }
    path = common.write_results("package_refs", figures)
    print(json.dumps({k: v for k, v in figures["real"].items() if k != "dev_findings"}, indent=1))
    print(json.dumps(figures["hallucinated"], indent=1))
    shown = len(figures["real"]["dev_findings"])
    print(f"dev-half findings on real outputs: {shown}; written to {path}")


if __name__ == "__main__":
    main()
