"""Request builders for the engine tests: every request goes through the strict decoder."""

from __future__ import annotations

import json
from typing import Any

from schemas.judging import DimensionVerdict, JudgeTask, JudgeVerdict, ModelPrice
from schemas.quality import Dimension
from schemas.request import NodeOutput, ReviewRequest
from workers.intake import decode_request

#: Sonnet-class prices, USD per million tokens.
PRICE = ModelPrice(
    input_per_mtok=3.0, output_per_mtok=15.0, cache_read_per_mtok=0.3, cache_write_per_mtok=3.75
)

CLEAN_TEXT = (
    "The export job streams rows from the database in batches of five hundred. "
    "Each batch is written to the output file before the next one is read, "
    "so memory use stays flat however large the table grows."
)
GOOD_PYTHON = (
    "import re\n\n\n"
    "def slugify(title: str) -> str:\n"
    '    """Lower-case a title and join its words with hyphens."""\n'
    '    words = re.findall(r"[a-z0-9]+", title.lower())\n'
    '    return "-".join(words)\n'
)
BROKEN_FLASK = "def handle_route(\n    return jsonify({'status': 'ok')"


def obj(**fields: Any) -> dict[str, Any]:
    """A request as a JSON object: sensible defaults, ``fields`` replace top-level keys."""
    base: dict[str, Any] = {
        "dag_id": "dag-1",
        "node_id": "node-1",
        "skill": {"id": "skill-1", "success_rate": 0.9, "stage": "expert", "breaker": "closed"},
        "output": {"kind": "text", "content": CLEAN_TEXT},
        "node_cost_usd": 0.02,
    }
    base.update(fields)
    return base


def decode(value: dict[str, Any]) -> ReviewRequest:
    """Decode a JSON object exactly as the fleet would."""
    return decode_request(
        json.dumps(value).encode(), max_request_bytes=5_000_000, max_output_chars=1_000_000
    )


def request(**fields: Any) -> ReviewRequest:
    """A decoded request with defaults and ``fields`` replacing top-level keys."""
    return decode(obj(**fields))


def output(kind: str, content: str) -> NodeOutput:
    """A node output of ``kind``."""
    return NodeOutput.model_validate_json(json.dumps({"kind": kind, "content": content}))


def skill(rate: float, stage: str = "expert", breaker: str = "closed") -> dict[str, Any]:
    """A skill object."""
    return {"id": "skill-1", "success_rate": rate, "stage": stage, "breaker": breaker}


def verdict(score: float, *dimensions: Dimension, why: str = "observed") -> JudgeVerdict:
    """A verdict giving ``score`` to each dimension."""
    return JudgeVerdict(
        model="double",
        scores={d: DimensionVerdict(score=score, justification=why) for d in dimensions},
    )


class RecordingJudge:
    """Answers every task with fixed scores and records what it was asked."""

    def __init__(self, score: float = 0.9, pairwise: float = 0.5) -> None:
        self.score = score
        self.pairwise = pairwise
        self.tasks: list[JudgeTask] = []

    def evaluate(self, task: JudgeTask) -> JudgeVerdict:
        self.tasks.append(task)
        value = self.pairwise if task.other is not None else self.score
        return verdict(value, *task.dimensions)


class FirstShownJudge(RecordingJudge):
    """Position-biased: in a pairwise task it always prefers the output shown first."""

    def __init__(self) -> None:
        super().__init__(score=0.9, pairwise=0.9)
