# ruff: noqa: E501  (template sentences are kept whole, one per line, so they read as text)
"""Generates ``bench/corpus/corpus.jsonl``: labelled node outputs for recall and economics.

Every item is built from templates with seeded variation (topics, names, numbers, which
sentences and functions appear, the order of sections): good outputs of each kind and
outputs with one known defect of a class the seeds name. Defects are written the way a
model produces them, not the way a detector looks for them: a contradiction may be a
plain negation or a paraphrase, a fabricated citation may be a dangling marker, an
impossible year or a well-formed URL to nothing, so recall below 100% is expected.

Labels:
- ``expected``: the layer that should stop it (``floor_fail``, ``wall_fail``) or ``pass``.
- ``defect_class``: ``none`` | ``syntax_error`` | ``schema_violation`` |
  ``missing_required`` | ``empty_filler`` | ``contradiction`` | ``fabricated_citation`` |
  ``ceiling_only`` (passes Floor and Wall, but a Ceiling should see it: SQL DELETE or
  UPDATE without WHERE, bare except, eval, fewer items than the task asked for,
  truncation, mixed-type arrays).
- ``variant``: which template produced the defect (for reading misses, never for scoring).
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from bench.common import CORPUS_PATH, command_line, table

SEED = 20240607

#: The layer that should stop an item of each defect class (``pass``: none should), in
#: the order the recall table lists the classes. A ``ceiling_only`` defect passes Floor
#: and Wall by design: only a Ceiling should see it.
EXPECTED = {
    "syntax_error": "floor_fail",
    "schema_violation": "floor_fail",
    "missing_required": "floor_fail",
    "empty_filler": "wall_fail",
    "contradiction": "wall_fail",
    "fabricated_citation": "wall_fail",
    "ceiling_only": "pass",
    "none": "pass",
}
DEFECT_CLASSES = tuple(EXPECTED)


@dataclass
class Item:
    """One labelled node output; its class decides the labels derived from it."""

    id: str
    kind: str
    defect_class: str
    variant: str
    content: str
    task: str | None = None
    contract: dict[str, Any] | None = None
    expected: str = field(init=False)
    ceiling_defect: bool = field(init=False)
    label: str = field(init=False)

    def __post_init__(self) -> None:
        self.expected = EXPECTED[self.defect_class]
        self.ceiling_defect = self.defect_class == "ceiling_only"
        self.label = "good" if self.defect_class == "none" else "defect"


#: The services the items talk about (names, tables, columns, owners): data, kept apart.
TOPICS: list[dict[str, Any]] = json.loads((CORPUS_PATH.parent / "topics.json").read_text())

REAL_REFS = [
    ("Beyer et al.", "2018", "The Site Reliability Workbook, O'Reilly"),
    ("Kleppmann", "2017", "Designing Data-Intensive Applications, O'Reilly"),
    ("Nygard", "2018", "Release It!, 2nd edition, Pragmatic Bookshelf"),
    ("Dean and Barroso", "2013", "The Tail at Scale, Communications of the ACM 56(2)"),
    ("Brooker", "2015", "Exponential Backoff and Jitter, AWS Architecture Blog"),
]
REAL_URLS = [
    "https://sre.google/workbook/table-of-contents/",
    "https://redis.io/docs/latest/develop/data-types/streams/",
    "https://docs.celeryq.dev/en/stable/userguide/optimizing.html",
    "https://www.postgresql.org/docs/current/sql-delete.html",
]


def _drop_colons(source: str) -> str:
    """``source`` without the colon of the first ``def`` of each return type (a syntax error)."""
    for returns in ("str", "int", "list[float]", "list[str]", "list[list[int]]"):
        source = source.replace(f") -> {returns}:\n", f") -> {returns}\n", 1)
    return source


class Gen:
    """Seeded template filler."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.items: list[Item] = []
        self.counter: Counter[str] = Counter()

    def topic(self) -> dict[str, Any]:
        return self.rng.choice(TOPICS)

    def add(self, kind: str, defect: str, variant: str, content: str, **kw: Any) -> None:
        self.counter[kind] += 1
        ident = f"{kind}-{self.counter[kind]:03d}"
        self.items.append(Item(ident, kind, defect, variant, content, **kw))

    # ---------------------------------------------------------------- prose
    def facts(self, t: dict[str, Any]) -> list[str]:
        r = self.rng
        n, k, m = r.choice([800, 1200, 4500, 9000]), r.choice([200, 500, 1000]), r.randint(4, 25)
        replicas = r.choice([2, 3])
        return [
            f"The {t['service']} service handles about {n} {t['entity']}s per hour at peak.",
            f"Writes go to a single primary and reads are served by {replicas} replicas.",
            f"When the queue holds more than {k} messages, the autoscaler adds a worker.",
            f"The main operational risk is the nightly migration, which locks the "
            f"{t['table']} table for roughly {m} minutes.",
            f"We propose a rolling backfill that updates {r.choice([500, 1000, 5000])} rows "
            "per batch and pauses when replication lag exceeds two seconds.",
            "Alerts page the on-call engineer only after two consecutive failed health checks.",
            f"The {t['owner']} team owns the service and reviews its dashboards weekly.",
            f"Retries use exponential backoff with jitter, capped at {r.choice([3, 5])} attempts.",
        ]

    #: Tasks, and the facts (by index) a good answer to each must contain.
    TEXT_TASKS: ClassVar[tuple[tuple[str, tuple[int, ...]], ...]] = (
        (
            "Summarise the current {service} service design and its main operational risk.",
            (0, 1, 3),
        ),
        ("Describe how the {service} service scales and what the main risk is.", (0, 2, 3)),
        ("Write a short status note on the {service} service for the {owner} team.", (0, 5, 6)),
    )

    def paragraph(self, t: dict[str, Any], count: int, needed: tuple[int, ...] = (0,)) -> str:
        facts = self.facts(t)
        rest = [f for i, f in enumerate(facts) if i not in needed]
        self.rng.shuffle(rest)
        chosen = [facts[i] for i in needed] + rest[: max(0, count - len(needed))]
        return " ".join(chosen)

    def text_task(self, t: dict[str, Any]) -> str:
        return self.rng.choice(self.TEXT_TASKS)[0].format(**t)

    def answered(self, t: dict[str, Any], count: int) -> tuple[str, str]:
        template, needed = self.rng.choice(self.TEXT_TASKS)
        return self.paragraph(t, count, needed), template.format(**t)

    def cited(self, t: dict[str, Any], body: str) -> str:
        author, year, title = self.rng.choice(REAL_REFS)
        if self.rng.random() < 0.5:
            return (
                f"{body} The retry policy follows the guidance in [1].\n\n"
                f"[1] {author}, {title}, {year}."
            )
        return f"{body} Backoff with jitter avoids retry storms ({author.split()[0]}, {year})."

    def text_items(self) -> None:
        r = self.rng
        for i in range(16):
            t = self.topic()
            content, task = self.answered(t, r.randint(4, 7))
            if i % 4 == 0:
                content = self.cited(t, content)
            self.add("text", "none", "good", content, task=task)
        # filler
        for variant in ("placeholder", "vacuous", "repeated", "lorem", "insert"):
            t = self.topic()
            s, e = t["service"], t["entity"]
            content = {
                "placeholder": f"Status of the {s} service: TBD. Risks: TBD. Owner: to be confirmed. "
                "Next steps will be added once the review is complete.",
                "vacuous": f"This note gives an overview of the {s} service. The {s} service is "
                f"an important service for the business. It is important to consider all the "
                f"important aspects of the {s} service. There are many aspects to consider, and "
                f"each aspect is important. In summary, the {s} service is important and it has "
                "many important aspects that should be considered going forward.",
                "repeated": "\n".join(
                    [f"The {s} service processes {e}s reliably and at scale."] * 3
                    + [f"Monitoring for the {s} service is in place and working well."] * 2
                ),
                "lorem": f"{s.title()} service summary. Lorem ipsum dolor sit amet, consectetur "
                "adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.",
                "insert": f"[Insert summary of the {s} design here.] [Insert main risk here.] "
                "[Insert owner and escalation path here.]",
            }[variant]
            self.add("text", "empty_filler", variant, content, task=self.text_task(t))
        # contradictions
        for variant in ("negation", "negation", "quantity", "paraphrase", "schedule"):
            t = self.topic()
            base = self.paragraph(t, 3)
            tbl = t["table"]
            extra = {
                "negation": f" The {tbl} table is partitioned by month. Reads never touch the "
                f"primary. After the migration the {tbl} table is not partitioned by month.",
                "quantity": f" There are {r.choice([3, 4])} replicas in each region. During the "
                f"failover drill we have {r.choice([6, 7])} replicas, and there are 2 replicas "
                "in each region afterwards.",
                "paraphrase": " Caching is enabled by default for every read path. By default, "
                "nothing is cached, so every read goes to the database.",
                "schedule": " The backfill runs once a night at 02:00 UTC. Because the backfill "
                "runs every fifteen minutes, its batches stay small.",
            }[variant]
            self.add("text", "contradiction", variant, base + extra, task=self.text_task(t))
        # fabricated citations
        for variant in ("future_year", "dangling", "claim", "ancient_year", "plausible_url"):
            t = self.topic()
            base = self.paragraph(t, 3)
            extra = {
                "future_year": f" Queue-based autoscaling cuts p99 latency by 41% (Hartmann et al., {r.choice([2031, 2034, 2041])}).",
                "dangling": " The backoff schedule follows [1], and the lag threshold comes from "
                "the benchmark in [3].\n\n[1] Brooker, Exponential Backoff and Jitter, 2015.",
                "claim": " Studies show that 87% of companies lose data in nightly migrations. "
                "Experts agree that rolling backfills are always safer.",
                "ancient_year": " This pattern was first described for message brokers "
                f"(Lindqvist, {r.choice([1642, 1703, 1699])}).",
                "plausible_url": " The lock duration matches the measurements published at "
                "https://engineering.example-cloud.com/posts/2023/zero-lock-migrations-at-scale "
                "(Okafor, 2023).",
            }[variant]
            self.add("text", "fabricated_citation", variant, base + extra, task=self.text_task(t))
        # missing required content (contract)
        for _ in range(3):
            t = self.topic()
            self.add(
                "text",
                "missing_required",
                "required_term",
                self.paragraph(t, 4),
                task=f"Write the {t['service']} incident summary; it must name the rollback step.",
                contract={"required_fields": ["rollback"], "min_length": 80},
            )
        # ceiling-only: fewer items than asked, truncated
        for variant in ("fewer_items", "fewer_items", "truncated"):
            t = self.topic()
            if variant == "fewer_items":
                facts = self.facts(t)
                content = (
                    f"Recommendations for the {t['service']} service:\n"
                    f"- {facts[4]}\n- {facts[5]}\n- {facts[7]}"
                )
                task = f"Give five recommendations to reduce the {t['service']} service migration risk."
            else:
                content = (
                    self.paragraph(t, 3) + " The second phase moves the remaining rows and the"
                )
                task = self.text_task(t)
            self.add("text", "ceiling_only", variant, content, task=task)

    # ---------------------------------------------------------------- markdown
    def md_doc(self, t: dict[str, Any], sections: list[str]) -> str:
        facts = self.facts(t)
        bodies = {
            "Overview": " ".join(facts[:3]),
            "Risks": f"{facts[3]}\n\n- Replication lag during the backfill\n- Lock contention on {t['table']}",
            "Rollback plan": "Stop the backfill job, restore the previous schema version from the "
            "migration log, and replay writes from the outbox table.",
            "Monitoring": facts[5] + " " + facts[6],
            "Next steps": f"- Dry-run the backfill on staging\n- Agree the window with {t['owner']}",
        }
        parts = [f"# {t['service'].title()} migration plan"]
        parts += [f"## {s}\n\n{bodies[s]}" for s in sections]
        return "\n\n".join(parts) + "\n"

    def plan_task(self, t: dict[str, Any]) -> str:
        return f"Write the {t['service']} migration plan with its risks."

    def markdown_items(self) -> None:
        r = self.rng
        all_sections = ["Overview", "Risks", "Rollback plan", "Monitoring", "Next steps"]
        for _ in range(16):
            t = self.topic()
            keep = ["Overview", *r.sample(all_sections[1:], r.randint(2, 4))]
            self.add(
                "markdown",
                "none",
                "good",
                self.md_doc(t, keep),
                task=self.plan_task(t),
                contract={"required_fields": ["Overview"]},
            )
        for variant in ("tbd_sections", "placeholder", "vacuous", "lorem"):
            t = self.topic()
            s = t["service"]
            content = {
                "tbd_sections": f"# {s.title()} migration plan\n\n## Overview\n\nTBD\n\n## Risks\n\nTBD\n\n## Rollback plan\n\nTBD\n",
                "placeholder": f"# {s.title()} migration plan\n\n## Overview\n\nContent goes here.\n\n## Risks\n\nPlaceholder: list the risks.\n",
                "vacuous": f"# {s.title()} migration plan\n\n## Overview\n\nThis plan describes the migration. "
                "The migration is an important step. It is important that the migration goes well.\n\n"
                "## Risks\n\nThere are risks. The risks are important and should be considered.\n",
                "lorem": f"# {s.title()} migration plan\n\n## Overview\n\nLorem ipsum dolor sit amet, "
                "consectetur adipiscing elit.\n\n## Risks\n\nLorem ipsum dolor sit amet.\n",
            }[variant]
            self.add("markdown", "empty_filler", variant, content, task=self.plan_task(t))
        for variant in ("negation", "quantity", "paraphrase", "negation"):
            t = self.topic()
            doc = self.md_doc(t, ["Overview", "Risks", "Rollback plan"])
            extra = {
                "negation": "\n## Notes\n\nThe backfill is safe to run during business hours. "
                "Writes pause for at most a second. The backfill is not safe to run during business hours.\n",
                "quantity": "\n## Notes\n\nThere are 3 phases in this plan. Phase two is the longest. "
                "In total there are 4 phases, each with its own sign-off.\n",
                "paraphrase": "\n## Notes\n\nThe old schema is kept for a week after the cut-over. "
                "The old schema is dropped immediately at cut-over to free disk space.\n",
            }[variant]
            self.add("markdown", "contradiction", variant, doc + extra, task=self.plan_task(t))
        for variant in ("dangling", "future_year", "malformed_url", "claim"):
            t = self.topic()
            doc = self.md_doc(t, ["Overview", "Risks"])
            extra = {
                "dangling": "\n## References\n\nThe batch size follows [2] and the lag limit [4].\n\n"
                "[1] Kleppmann, Designing Data-Intensive Applications, 2017.\n[2] Nygard, Release It!, 2018.\n",
                "future_year": "\n## References\n\nOnline schema change without locks is now standard "
                f"practice (Moreau and Tanaka, {r.choice([2032, 2036])}).\n",
                "malformed_url": "\n## References\n\nSee the runbook at https:/wiki.internal/runbooks/"
                f"{t['service']}-migration and the vendor note at http//docs.vendor.io/locks.\n",
                "claim": "\n## Why now\n\nResearch shows that 92% of migrations fail without a "
                "rolling backfill. It is well known that locks always cause outages.\n",
            }[variant]
            self.add(
                "markdown", "fabricated_citation", variant, doc + extra, task=self.plan_task(t)
            )
        for _ in range(5):
            t = self.topic()
            self.add(
                "markdown",
                "missing_required",
                "missing_heading",
                self.md_doc(t, ["Overview", "Risks", "Monitoring"]),
                task=f"Write the {t['service']} migration plan; it must include a rollback plan.",
                contract={"required_fields": ["Overview", "Rollback plan"]},
            )
        for variant in ("empty_sections", "fewer_items", "truncated"):
            t = self.topic()
            if variant == "empty_sections":
                content = (
                    self.md_doc(t, ["Overview", "Risks"]) + "\n## Rollback plan\n\n## Monitoring\n"
                )
                task = (
                    f"Write the {t['service']} migration plan with risks, rollback and monitoring."
                )
            elif variant == "fewer_items":
                content = (
                    self.md_doc(t, ["Overview"])
                    + "\n## Steps\n\n1. Snapshot the table\n2. Run the backfill\n"
                )
                task = f"Write the {t['service']} migration plan as six steps."
            else:
                content = (
                    self.md_doc(t, ["Overview", "Risks"])
                    + "\n## Rollback plan\n\nStop the job, then restore"
                )
                task = self.plan_task(t)
            self.add("markdown", "ceiling_only", variant, content, task=task)

    # ---------------------------------------------------------------- python
    def py_functions(self, t: dict[str, Any]) -> dict[str, str]:
        e = t["entity"]
        return {
            "slug": (
                f"def {e}_slug(title: str) -> str:\n"
                '    """Lower-case a title and join its words with hyphens."""\n'
                '    words = re.findall(r"[a-z0-9]+", title.lower())\n'
                '    return "-".join(words)\n'
            ),
            "chunks": (
                f"def chunk_{e}s(items: list[int], size: int) -> list[list[int]]:\n"
                '    """Split items into lists of at most size elements."""\n'
                "    if size < 1:\n"
                '        raise ValueError("size must be positive")\n'
                "    return [items[i : i + size] for i in range(0, len(items), size)]\n"
            ),
            "backoff": (
                "def backoff_delays(attempts: int, base: float = 0.5, cap: float = 8.0) -> list[float]:\n"
                '    """Full-jitter exponential backoff delays, one per attempt."""\n'
                "    return [random.uniform(0, min(cap, base * 2**n)) for n in range(attempts)]\n"
            ),
            "dedupe": (
                f"def dedupe_{e}_ids(ids: list[str]) -> list[str]:\n"
                '    """Drop repeated ids, keeping the first occurrence of each."""\n'
                "    seen: set[str] = set()\n"
                "    kept = []\n"
                "    for value in ids:\n"
                "        if value not in seen:\n"
                "            seen.add(value)\n"
                "            kept.append(value)\n"
                "    return kept\n"
            ),
            "duration": (
                "def parse_duration(text: str) -> int:\n"
                '    """Seconds in a duration such as 1h30m or 45s."""\n'
                "    units = {'h': 3600, 'm': 60, 's': 1}\n"
                r"    parts = re.findall(r'(\d+)([hms])', text)"
                "\n"
                "    if not parts:\n"
                "        raise ValueError(f'not a duration: {text!r}')\n"
                "    return sum(int(n) * units[u] for n, u in parts)\n"
            ),
            "total": (
                f"def total_{t['cols'][3]}(rows: list[dict[str, int]]) -> int:\n"
                f'    """Sum the {t["cols"][3]} field over rows that have it."""\n'
                f"    return sum(row.get('{t['cols'][3]}', 0) for row in rows)\n"
            ),
        }

    def py_task(self, t: dict[str, Any], names: list[str]) -> str:
        e = t["entity"]
        wanted = {
            "slug": f"a function that turns a {e} title into a URL slug",
            "chunks": f"a function that splits {e} items into chunks of a given size",
            "backoff": "a function that returns jittered exponential backoff delays",
            "dedupe": f"a function that removes repeated {e} ids, keeping their order",
            "duration": "a function that parses durations such as 1h30m into seconds",
            "total": f"a function that totals the {t['cols'][3]} field over rows",
        }
        return "Write " + ", and ".join(wanted[n] for n in names) + "."

    def py_module(self, t: dict[str, Any], names: list[str]) -> str:
        funcs = self.py_functions(t)
        head = "import random\nimport re\n\n\n"
        return head + "\n\n".join(funcs[n] for n in names)

    def python_items(self) -> None:
        r = self.rng
        keys = ["slug", "chunks", "backoff", "dedupe", "duration", "total"]
        for _ in range(16):
            t = self.topic()
            names = r.sample(keys, r.randint(1, 3))
            self.add(
                "python", "none", "good", self.py_module(t, names), task=self.py_task(t, names)
            )
        breakers: list[tuple[str, Callable[[str], str]]] = [
            ("missing_colon", _drop_colons),
            ("unclosed_paren", lambda s: s.replace("return ", "return (", 1)),
            ("bad_indent", lambda s: s.replace("\n    return", "\n  return", 1)),
            ("unterminated_string", lambda s: s.replace('"""\n', "\n", 1)),
            ("py2_print", lambda s: s + "\nprint 'done'\n"),
            ("truncated", lambda s: s[: int(len(s) * 0.6)]),
            ("flask_example", lambda s: "def handle_route(\n    return jsonify({'status': 'ok')\n"),
            ("missing_colon", _drop_colons),
        ]
        for variant, breaker in breakers:
            t = self.topic()
            content = breaker(self.py_module(t, r.sample(keys, 2)))
            task = f"Write helper functions for the {t['service']} service."
            self.add("python", "syntax_error", variant, content, task=task)
        for variant in ("pass_stubs", "not_implemented", "todo_stub", "ellipsis"):
            t = self.topic()
            e = t["entity"]
            body = {
                "pass_stubs": "    pass\n",
                "not_implemented": "    raise NotImplementedError\n",
                "todo_stub": "    # TODO: implement\n    return None\n",
                "ellipsis": "    ...\n",
            }[variant]
            content = (
                f"def load_{e}s(path: str) -> list[dict[str, str]]:\n"
                f'    """Load {e}s from a CSV file."""\n{body}\n\n'
                f"def validate_{e}(record: dict[str, str]) -> bool:\n"
                f'    """Check a {e} record."""\n{body}'
            )
            task = f"Write a loader and validator for {e} records."
            self.add("python", "empty_filler", variant, content, task=task)
        for variant in ("redefinition", "redefinition", "docstring_lies"):
            t = self.topic()
            e = t["entity"]
            if variant == "redefinition":
                content = (
                    f"def {e}_key(record: dict[str, str]) -> str:\n"
                    '    """The record\'s key."""\n'
                    "    return record['id']\n\n\n"
                    f"def {e}_key(record: dict[str, str]) -> str:\n"
                    '    """The record\'s key, lower-cased."""\n'
                    "    return record['id'].lower()\n"
                )
            else:
                content = (
                    f"def newest_{e}s(rows: list[dict[str, int]], n: int) -> list[dict[str, int]]:\n"
                    '    """The n newest rows, newest first."""\n'
                    "    return sorted(rows, key=lambda row: row['created_at'])[:n]\n"
                )
            self.add(
                "python", "contradiction", variant, content, task=f"Write helpers for {e} records."
            )
        for variant in ("undefined_helpers", "hallucinated_module", "undefined_helper"):
            t = self.topic()
            e = t["entity"]
            if variant == "undefined_helpers":
                content = (
                    f"def sync_{e}s(rows: list[dict[str, str]]) -> int:\n"
                    f'    """Push changed {e}s to the ledger."""\n'
                    "    changed = diff_against_ledger(rows)\n"
                    "    batch = ledger_client.batch_upsert(changed)\n"
                    "    audit_log.record(batch)\n"
                    "    return len(changed)\n"
                )
            elif variant == "undefined_helper":
                content = (
                    self.py_module(t, ["dedupe"])
                    + f"\n\ndef clean_{e}_ids(ids: list[str]) -> list[str]:\n"
                    '    """Normalise and dedupe ids."""\n'
                    f"    return dedupe_{e}_ids([normalize_identifier(i) for i in ids])\n"
                )
            else:
                content = (
                    "from stripe.reconcile import auto_match_payouts\n\n\n"
                    f"def reconcile_{e}s(rows: list[dict[str, str]]) -> list[str]:\n"
                    '    """Match rows to payouts with the vendor helper."""\n'
                    "    return [m.id for m in auto_match_payouts(rows, strict=True)]\n"
                )
            task = f"Write a sync helper for {e} records."
            self.add("python", "fabricated_citation", variant, content, task=task)
        for _ in range(4):
            t = self.topic()
            e = t["entity"]
            self.add(
                "python",
                "missing_required",
                "missing_function",
                self.py_module(t, ["chunks", "dedupe"]),
                task=f"Write parse_{e}(line) and helpers.",
                contract={"required_fields": [f"parse_{e}"]},
            )
        for variant in ("bare_except", "eval", "mutable_default", "bare_except", "swallowed"):
            t = self.topic()
            e = t["entity"]
            content = {
                "bare_except": (
                    "import json\n\n\n"
                    f"def load_{e}(raw: str) -> dict[str, str]:\n"
                    f'    """Parse one {e} record, or an empty record when it is invalid."""\n'
                    "    try:\n"
                    "        return json.loads(raw)\n"
                    "    except:\n"
                    "        return {}\n"
                ),
                "eval": (
                    f"def {e}_total(expression: str) -> float:\n"
                    '    """Evaluate a sum such as 12.5 + 3 from the import file."""\n'
                    "    return float(eval(expression))\n"
                ),
                "mutable_default": (
                    f"def add_{e}(record: dict[str, str], batch: list = []) -> list:\n"
                    f'    """Append a {e} to the batch and return it."""\n'
                    "    batch.append(record)\n"
                    "    return batch\n"
                ),
                "swallowed": (
                    "import logging\n\n\n"
                    f"def save_{e}(store: dict[str, dict[str, str]], record: dict[str, str]) -> None:\n"
                    f'    """Store a {e} record by id."""\n'
                    "    try:\n"
                    "        store[record['id']] = record\n"
                    "    except Exception:\n"
                    "        pass\n"
                ),
            }[variant]
            self.add(
                "python", "ceiling_only", variant, content, task=f"Write a helper for {e} records."
            )

    # ---------------------------------------------------------------- json
    def record(self, t: dict[str, Any]) -> dict[str, Any]:
        r = self.rng
        risks = r.sample(
            ["replication lag", "table lock", "disk pressure", "retry storm", "stale cache"],
            r.randint(1, 3),
        )
        return {
            "service": t["service"],
            "owner": t["owner"],
            "replicas": r.choice([2, 3, 5]),
            "status": r.choice(["healthy", "degraded"]),
            "risks": risks,
            "risk_count": len(risks),
            "endpoints": [f"/{t['entity']}s", f"/{t['entity']}s/{{id}}"],
        }

    SCHEMA: ClassVar[dict[str, Any]] = {
        "type": "object",
        "required": ["service", "owner", "replicas", "status", "risks"],
        "properties": {
            "service": {"type": "string", "minLength": 1},
            "owner": {"type": "string"},
            "replicas": {"type": "integer", "minimum": 1},
            "status": {"enum": ["healthy", "degraded", "down"]},
            "risks": {"type": "array", "items": {"type": "string"}},
            "risk_count": {"type": "integer"},
            "endpoints": {"type": "array", "items": {"type": "string"}},
            "source": {"type": "string"},
            "evidence": {"type": "string"},
            "ports": {"type": "array"},
        },
        "additionalProperties": False,
    }

    RECORD_TASK = "Return the service health record as JSON with its risks."

    def dump(self, doc: Any) -> str:
        return json.dumps(doc, indent=self.rng.choice([2, 4]))

    def add_record(self, defect: str, variant: str, content: str) -> None:
        """A JSON item that answers ``RECORD_TASK`` under the record schema."""
        self.add(
            "json",
            defect,
            variant,
            content,
            task=self.RECORD_TASK,
            contract={"json_schema": self.SCHEMA},
        )

    def json_items(self) -> None:
        r = self.rng
        for _ in range(16):
            t = self.topic()
            self.add_record("none", "good", self.dump(self.record(t)))
        syntax: list[tuple[str, Callable[[str], str]]] = [
            ("trailing_comma", lambda s: s.replace('"\n', '",\n', 1).replace("]\n}", "],\n}")),
            ("single_quotes", lambda s: s.replace('"', "'")),
            ("unquoted_keys", lambda s: s.replace('"service":', "service:")),
            ("truncated", lambda s: s[: int(len(s) * 0.7)]),
            ("comment", lambda s: s.replace("{", "{\n  // generated by the health check", 1)),
            ("code_fence", lambda s: "```json\n" + s + "\n```"),
            ("prose_prefix", lambda s: "Here is the record you asked for:\n" + s),
            ("nan", lambda s: s.replace('"replicas": ', '"replicas": NaN, "x": ', 1)),
        ]
        for variant, breaker in syntax:
            t = self.topic()
            self.add_record("syntax_error", variant, breaker(self.dump(self.record(t))))
        schema_breaks: list[tuple[str, Callable[[dict[str, Any]], None]]] = [
            ("string_number", lambda d: d.update(replicas="three")),
            ("missing_property", lambda d: d.pop("owner")),
            ("bad_enum", lambda d: d.update(status="mostly fine")),
            ("extra_property", lambda d: d.update(notes="generated")),
            ("negative", lambda d: d.update(replicas=0)),
            ("item_type", lambda d: d.update(risks=[{"name": x} for x in d["risks"]])),
            ("null_required", lambda d: d.update(service=None)),
            ("string_number", lambda d: d.update(replicas="5")),
            ("missing_property", lambda d: d.pop("risks") and d.pop("risk_count")),
            ("list_not_string", lambda d: d.update(owner=[d["owner"], "sre"])),
            ("bad_enum", lambda d: d.update(status="HEALTHY")),
            ("float_integer", lambda d: d.update(replicas=2.5)),
        ]
        for variant, mutate in schema_breaks:
            t = self.topic()
            doc = self.record(t)
            mutate(doc)
            self.add_record("schema_violation", variant, self.dump(doc))
        for variant in ("blank_values", "tbd_values", "empty_object"):
            t = self.topic()
            filler: Any = {
                "blank_values": {
                    "service": t["service"],
                    "owner": "",
                    "replicas": None,
                    "status": None,
                    "risks": [],
                    "endpoints": [""],
                },
                "tbd_values": {
                    "service": t["service"],
                    "owner": "TBD",
                    "replicas": 1,
                    "status": "healthy",
                    "risks": ["TBD", "TBD"],
                    "source": "placeholder",
                },
                "empty_object": {},
            }[variant]
            self.add("json", "empty_filler", variant, self.dump(filler), task=self.RECORD_TASK)
        for variant in ("count_mismatch", "count_mismatch", "status_conflict"):
            t = self.topic()
            doc = self.record(t)
            if variant == "count_mismatch":
                doc["risk_count"] = len(doc["risks"]) + r.choice([1, 2])
            else:
                doc["status"] = "healthy"
                doc["evidence"] = (
                    "All replicas are down and every health check has failed since 02:00."
                )
            self.add_record("contradiction", variant, self.dump(doc))
        for variant in ("malformed_url", "claim", "future_year"):
            t = self.topic()
            doc = self.record(t)
            doc["source"] = {
                "malformed_url": f"https:/status.internal/{t['service']}",
                "claim": "According to recent studies, 95% of companies see this failure mode.",
                "future_year": "Failure model from (Ivanova et al., 2039).",
            }[variant]
            self.add_record("fabricated_citation", variant, self.dump(doc))
        for _ in range(4):
            t = self.topic()
            doc = self.record(t)
            doc.pop("endpoints")
            self.add(
                "json",
                "missing_required",
                "missing_key",
                self.dump(doc),
                task=self.RECORD_TASK + " Include its endpoints.",
                contract={"required_fields": ["service", "endpoints"]},
            )
        for _ in range(3):
            t = self.topic()
            doc = self.record(t)
            doc["ports"] = [8080, "8443", 9090]
            self.add_record("ceiling_only", "mixed_array", self.dump(doc))

    # ---------------------------------------------------------------- sql
    def sql_good(self, t: dict[str, Any]) -> tuple[str, str]:
        r = self.rng
        c, tbl = t["cols"], t["table"]
        other, alias, key = t["other"]
        shapes = [
            (
                f"SELECT {c[0]}, {c[1]}, {c[3]}\nFROM {tbl}\nWHERE {c[4]} >= DATE '2024-01-01'\n"
                f"ORDER BY {c[3]} DESC\nLIMIT {r.choice([50, 100, 500])};",
                f"List {tbl} since January 2024 with the largest {c[3]} first, capped.",
            ),
            (
                f"SELECT {c[1]}, COUNT(*) AS n\nFROM {tbl}\nGROUP BY {c[1]}\n"
                f"HAVING COUNT(*) > {r.randint(2, 9)};",
                f"Count {tbl} per {c[1]} and keep the frequent ones.",
            ),
            (
                f"SELECT x.{c[0]}, x.{c[3]}, {alias}.{key}\nFROM {tbl} AS x\n"
                f"JOIN {other} AS {alias} ON {alias}.{key} = x.{c[1]}\nWHERE x.{c[3]} > {r.randint(1, 99)};",
                f"Join {tbl} to {other} and select rows with a high {c[3]}.",
            ),
            (
                f"WITH recent AS (\n  SELECT {c[0]}, {c[1]} FROM {tbl}\n  WHERE {c[4]} > DATE '2024-03-01'\n)\n"
                f"SELECT {c[1]}, COUNT(*) AS n FROM recent GROUP BY {c[1]};",
                f"Count recent {tbl} per {c[1]}.",
            ),
            (
                f"UPDATE {tbl}\nSET {c[3]} = {c[3]} + 1\nWHERE {c[0]} = {r.randint(100, 999)};",
                f"Increment {c[3]} of one row of {tbl} by id.",
            ),
            (
                f"DELETE FROM {tbl}\nWHERE {c[4]} < DATE '2020-01-01' AND {c[0]} IN "
                f"(SELECT {c[0]} FROM archived_{tbl});",
                f"Delete {tbl} rows older than 2020 that were already archived.",
            ),
            (
                f"SELECT {c[0]}, {c[2]}\nFROM {tbl}\nWHERE {c[1]} = {r.randint(1, 999)} AND "
                f"{c[3]} IS NOT NULL;",
                f"Select {c[2]} of the {tbl} of one {c[1]}.",
            ),
        ]
        return r.choice(shapes)

    def sql_items(self) -> None:
        for _ in range(16):
            t = self.topic()
            content, task = self.sql_good(t)
            self.add("sql", "none", "good", content, task=task)
        for variant in (
            "dangling_where",
            "unclosed_paren",
            "missing_comma",
            "typo_keyword",
            "trailing_comma",
            "empty_set",
            "dangling_and",
            "unclosed_count",
        ):
            t = self.topic()
            c, tbl = t["cols"], t["table"]
            content = {
                "dangling_where": f"SELECT {c[0]}, {c[1]}\nFROM {tbl}\nWHERE",
                "unclosed_paren": f"SELECT {c[0]} FROM {tbl}\nWHERE {c[1]} IN (SELECT {c[1]} FROM {tbl} WHERE {c[3]} > 10;",
                "missing_comma": f"SELECT {c[0]} {c[1]} {c[2]}\nFROM {tbl};",
                "typo_keyword": f"SELEC {c[0]}, {c[1]}\nFROM {tbl}\nLIMIT 10;",
                "trailing_comma": f"SELECT {c[0]}, {c[1]},\nFROM {tbl}\nLIMIT 10;",
                "empty_set": f"UPDATE {tbl}\nSET\nWHERE {c[0]} = 7;",
                "dangling_and": f"SELECT {c[0]} FROM {tbl}\nWHERE {c[3]} > 5 AND",
                "unclosed_count": f"SELECT COUNT(* FROM {tbl};",
            }[variant]
            self.add("sql", "syntax_error", variant, content, task=f"Write the query over {tbl}.")
        for variant in ("todo_comment", "select_one", "placeholder_table"):
            t = self.topic()
            content = {
                "todo_comment": f"-- TODO: write the real query for the {t['service']} report\nSELECT 1;",
                "select_one": "SELECT 1;",
                "placeholder_table": f"SELECT column_name FROM placeholder_table; -- {t['table']} TBD",
            }[variant]
            task = f"Write the query over {t['table']} for the {t['service']} report."
            self.add("sql", "empty_filler", variant, content, task=task)
        for variant in ("two_values", "two_values", "impossible_range"):
            t = self.topic()
            c, tbl = t["cols"], t["table"]
            a, b = t["status"]
            if variant == "two_values":
                content = (
                    f"SELECT {c[0]}, {c[1]}\nFROM {tbl}\nWHERE status = '{a}' AND status = '{b}';"
                )
            else:
                content = f"SELECT {c[0]}\nFROM {tbl}\nWHERE {c[3]} > 100 AND {c[3]} < 50;"
            self.add("sql", "contradiction", variant, content, task=f"Write the query over {tbl}.")
        for variant in ("unknown_alias", "unknown_aliases", "invented_table"):
            t = self.topic()
            c, tbl = t["cols"], t["table"]
            content = {
                "unknown_alias": f"SELECT x.{c[0]}, z.region\nFROM {tbl} AS x\nWHERE x.{c[3]} > 5;",
                "unknown_aliases": f"SELECT x.{c[0]}, z.region, q.score\nFROM {tbl} AS x\nWHERE p.active = TRUE;",
                "invented_table": f"SELECT {c[0]}, risk_score\nFROM {t['service']}_ml_risk_predictions_v9\nWHERE risk_score > 0.9;",
            }[variant]
            self.add(
                "sql", "fabricated_citation", variant, content, task=f"Write the query over {tbl}."
            )
        for _ in range(3):
            t = self.topic()
            c, tbl = t["cols"], t["table"]
            self.add(
                "sql",
                "missing_required",
                "missing_column",
                f"SELECT {c[0]}, {c[3]}\nFROM {tbl}\nWHERE {c[3]} > 0\nLIMIT 100;",
                task=f"Select ids and {c[1]} from {tbl}.",
                contract={"required_fields": [c[1]]},
            )
        for variant in (
            "delete_no_where",
            "update_no_where",
            "delete_no_where",
            "cartesian",
            "star_unbounded",
        ):
            t = self.topic()
            c, tbl = t["cols"], t["table"]
            other = t["other"][0]
            content = {
                "delete_no_where": f"-- remove the {t['status'][1]} rows\nDELETE FROM {tbl};",
                "update_no_where": f"UPDATE {tbl}\nSET {c[4]} = NULL;",
                "cartesian": f"SELECT a.{c[0]}, b.{t['other'][2]}\nFROM {tbl} a\nCROSS JOIN {other} b;",
                "star_unbounded": f"SELECT *\nFROM {tbl}\nORDER BY {c[4]} DESC;",
            }[variant]
            self.add(
                "sql", "ceiling_only", variant, content, task=f"Write the cleanup query over {tbl}."
            )


def generate(seed: int = SEED) -> list[Item]:
    """Every corpus item, deterministic for a seed."""
    gen = Gen(seed)
    for build in (
        gen.text_items,
        gen.markdown_items,
        gen.python_items,
        gen.json_items,
        gen.sql_items,
    ):
        build()
    return gen.items


def load(path: Path = CORPUS_PATH) -> list[dict[str, Any]]:
    """The shipped corpus, one dict per item."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write(items: list[Item], path: Path = CORPUS_PATH) -> Path:
    """Write the corpus as JSON lines."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(asdict(i), sort_keys=True) + "\n" for i in items))
    return path


def main(argv: list[str] | None = None) -> None:
    parser = command_line(__doc__)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--out", type=Path, default=CORPUS_PATH)
    args = parser.parse_args(argv)
    items = generate(args.seed)
    path = write(items, args.out)
    counts = Counter((i.kind, i.defect_class) for i in items)
    kinds = sorted({i.kind for i in items})
    classes = sorted({i.defect_class for i in items})
    print(
        table(
            ["class", *kinds, "total"],
            [
                [c, *(counts[(k, c)] for k in kinds), sum(counts[(k, c)] for k in kinds)]
                for c in classes
            ],
        )
    )
    print(f"{len(items)} items; wrote {path}")


if __name__ == "__main__":
    main()
