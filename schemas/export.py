"""Write the wire contract's JSON Schemas: ``python -m schemas.export [--check]``.

The files under ``schemas/json/`` are generated from the pydantic models and checked in,
so that the DAG runtime and subscribers can validate without importing this package.
Output is deterministic (sorted keys, indent 2, trailing newline); ``--check`` exits 1
when a checked-in file differs from what the models generate.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from schemas.human import HumanDecision, HumanVerdict
from schemas.request import ReviewRequest
from schemas.result import ReviewError, ReviewResult
from schemas.topology import DagShape

JSON_DIR = Path(__file__).resolve().parent / "json"

Mode = Literal["validation", "serialization"]

#: File name -> (model, schema mode): requests are validated, results serialised.
EXPORTS: dict[str, tuple[type[BaseModel], Mode]] = {
    "review_request.schema.json": (ReviewRequest, "validation"),
    "review_result.schema.json": (ReviewResult, "serialization"),
    "review_error.schema.json": (ReviewError, "serialization"),
    "human_verdict.schema.json": (HumanVerdict, "serialization"),
    "human_decision.schema.json": (HumanDecision, "serialization"),
    "dag_shape.schema.json": (DagShape, "validation"),
}


def render(model: type[BaseModel], mode: Mode) -> str:
    """The JSON Schema of ``model`` as deterministic text."""
    schema = model.model_json_schema(by_alias=True, mode=mode)
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def generate() -> dict[str, str]:
    """Every exported file's name and text."""
    return {name: render(model, mode) for name, (model, mode) in EXPORTS.items()}


def stale(directory: Path = JSON_DIR) -> list[str]:
    """Names of the files in ``directory`` that are missing or differ from the models."""
    out = []
    for name, text in generate().items():
        path = directory / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            out.append(name)
    return out


def write(directory: Path = JSON_DIR) -> list[Path]:
    """Write every schema file into ``directory``; return the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in generate().items():
        path = directory / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """Write the schemas, or with ``--check`` report the stale ones and exit 1."""
    parser = argparse.ArgumentParser(prog="python -m schemas.export", description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if the files are stale")
    parser.add_argument("--dir", type=Path, default=JSON_DIR, help="output directory")
    args = parser.parse_args(argv)
    if args.check:
        bad = stale(args.dir)
        for name in bad:
            print(f"stale: {args.dir / name} (run python -m schemas.export)", file=sys.stderr)
        return 1 if bad else 0
    for path in write(args.dir):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
