"""Floor and Wall recall per defect class, and false rejects, on the labelled corpus.

Each item is reviewed by the engine in-process (``run_stage1``), twice: with a consumer
on the critical path (a partial Wall grade 0.3-0.6 fails) and off it (only < 0.3 fails).
Items that pass Stage 1 also get a Ceiling from the built-in judge; a dimension below
0.8 flags them (what Stage 2 would catch if the router escalated them).

Columns: ``floor`` = rejected by the Floor; ``stage1_crit`` / ``stage1_off`` = rejected by
Floor or Wall on / off the critical path; ``recall`` = the share of a class rejected by
the layer the label expects (or by Stage 1 at all, for Wall classes, on the critical path);
``ceiling`` = flagged by a Ceiling among those Stage 1 let through.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from bench import common
from bench.corpus import DEFECT_CLASSES, load
from bench.review_corpus import Verdicts, judge_item
from workers.judges.builtin import BuiltinJudge


def _share(hits: int, total: int) -> float:
    return round(hits / total, 3) if total else 0.0


def summarise(items: list[dict[str, Any]], verdicts: list[Verdicts]) -> dict[str, Any]:
    """Per-class figures and the misses."""
    groups: dict[str, list[tuple[dict[str, Any], Verdicts]]] = defaultdict(list)
    for item, verdict in zip(items, verdicts, strict=True):
        groups[item["defect_class"]].append((item, verdict))
    rows = []
    misses = []
    for name in DEFECT_CLASSES:
        members = groups.get(name, [])
        n = len(members)
        floor = sum(1 for _, v in members if not v.floor_passed)
        crit = sum(1 for _, v in members if not v.passed_critical)
        off = sum(1 for _, v in members if not v.passed_noncritical)
        through = [(i, v) for i, v in members if v.passed_noncritical]
        ceiling = sum(1 for _, v in through if v.ceiling_flags)
        expected = members[0][0]["expected"] if members else "pass"
        caught = {"floor_fail": floor, "wall_fail": crit, "pass": n - crit}[expected]
        rows.append(
            {
                "class": name,
                "expected": expected,
                "n": n,
                "floor_rejects": floor,
                "stage1_rejects_critical": crit,
                "stage1_rejects_noncritical": off,
                "recall" if expected != "pass" else "stage1_pass_rate": _share(caught, n),
                "recall_noncritical" if expected != "pass" else "stage1_pass_rate_noncritical": (
                    _share({"floor_fail": floor, "wall_fail": off, "pass": n - off}[expected], n)
                ),
                "ceiling_flagged": ceiling,
                "ceiling_flag_rate": _share(ceiling, len(through)),
            }
        )
        for item, v in members:
            wrong = (expected == "floor_fail" and v.floor_passed) or (
                expected == "wall_fail" and v.passed_critical
            )
            wrong = wrong or (expected == "pass" and not v.passed_critical)
            if wrong:
                misses.append(
                    {
                        "id": item["id"],
                        "class": name,
                        "variant": item["variant"],
                        "wall_grade": v.wall_grade,
                        "codes": [*v.floor_codes, *v.wall_codes],
                    }
                )
    good = groups.get("none", [])
    defects = [m for k, ms in groups.items() if k not in ("none", "ceiling_only") for m in ms]
    return {
        "items": len(items),
        "rows": rows,
        "false_reject_rate_critical": _share(
            sum(1 for _, v in good if not v.passed_critical), len(good)
        ),
        "false_reject_rate_noncritical": _share(
            sum(1 for _, v in good if not v.passed_noncritical), len(good)
        ),
        "good_ceiling_false_flag_rate": _share(
            sum(1 for _, v in good if v.ceiling_flags), len(good)
        ),
        "stage1_defect_recall_critical": _share(
            sum(1 for _, v in defects if not v.passed_critical), len(defects)
        ),
        "stage1_defect_recall_noncritical": _share(
            sum(1 for _, v in defects if not v.passed_noncritical), len(defects)
        ),
        "misses": misses,
    }


def run(
    corpus: Path = common.CORPUS_PATH, *, out_dir: Path | None = None, limit: int | None = None
) -> dict[str, Any]:
    """Review the corpus; print the table; write ``recall.json``."""
    items = load(corpus)[:limit] if limit else load(corpus)
    judge = BuiltinJudge()
    verdicts = [judge_item(i, judge) for i in items]
    figures = summarise(items, verdicts)
    table_rows = []
    for r in figures["rows"]:
        rate = r.get("recall", r.get("stage1_pass_rate"))
        rate_off = r.get("recall_noncritical", r.get("stage1_pass_rate_noncritical"))
        table_rows.append(
            [
                r["class"],
                r["expected"],
                r["n"],
                r["floor_rejects"],
                r["stage1_rejects_critical"],
                r["stage1_rejects_noncritical"],
                rate,
                rate_off,
                r["ceiling_flagged"],
            ]
        )
    print(
        common.table(
            [
                "class",
                "expected",
                "n",
                "floor",
                "stage1_crit",
                "stage1_off",
                "recall|pass",
                "recall|pass_off",
                "ceiling",
            ],
            table_rows,
        )
    )
    print(
        "false rejects of good outputs: "
        f"{figures['false_reject_rate_critical']:.1%} (critical path), "
        f"{figures['false_reject_rate_noncritical']:.1%} (off it); Ceiling false flags on good: "
        f"{figures['good_ceiling_false_flag_rate']:.1%}"
    )
    print(
        f"Stage 1 recall over Floor/Wall defect classes: "
        f"{figures['stage1_defect_recall_critical']:.1%} (critical), "
        f"{figures['stage1_defect_recall_noncritical']:.1%} (off); {len(figures['misses'])} misses "
        "listed in the JSON"
    )
    return common.publish("recall", figures, out_dir)


def main(argv: list[str] | None = None) -> None:
    parser = common.command_line(__doc__)
    parser.add_argument("--corpus", type=Path, default=common.CORPUS_PATH)
    args = parser.parse_args(argv)
    run(args.corpus)


if __name__ == "__main__":
    main()
