"""The Wall's certain checks on code: broken fenced blocks, repeated keys, a Dockerfile's FROM.

A fenced block its language's parser rejects is a definite finding in a markdown or text
output whose contract does not make the code the deliverable (then the Floor refuses
it: ``floor.code``). A key given twice in one mapping (JSON, YAML; TOML's parser refuses
it itself) leaves the reader one of two values: a consistency defect. A Dockerfile whose
first instruction is not FROM is one ``docker build`` refuses. Each costs enough to fail
the Wall: none is a guess.
"""

from __future__ import annotations

from schemas.code import BlockStatus, CodeLanguage, Position
from schemas.quality import Dimension
from schemas.request import NodeOutput, OutputContract, OutputKind
from schemas.stages import IssueCode
from workers.evaluate.code.blocks import BlockReading, read_blocks
from workers.evaluate.code.dockerfile import lacks_from
from workers.evaluate.code.keys import RepeatedKey, repeated_keys
from workers.evaluate.findings import Finding, finding
from workers.evaluate.floor.code import PROSE_KINDS

#: What one certain code defect takes off its dimension: enough to fail the Wall alone.
PENALTY = 0.75
#: Most block findings one output reports.
MAX_BLOCK_FINDINGS = 10
_KEYED = {OutputKind.JSON: CodeLanguage.JSON, OutputKind.YAML: CodeLanguage.YAML}


def check_code(output: NodeOutput, contract: OutputContract | None = None) -> list[Finding]:
    """Definite findings on the output's code, wherever it is."""
    if output.kind in PROSE_KINDS:
        if contract is not None and contract.code_deliverable:
            return _block_keys(read_blocks(output.content))  # the Floor parsed the blocks
        readings = read_blocks(output.content)
        return _broken_blocks(readings) + _block_keys(readings)
    if output.kind in _KEYED:
        return [_repeated(k) for k in repeated_keys(_KEYED[output.kind], output.content)]
    if output.kind is OutputKind.DOCKERFILE:
        return _dockerfile(output.content)
    return []


def _broken_blocks(readings: tuple[BlockReading, ...]) -> list[Finding]:
    return [
        finding(
            Dimension.SUBSTANCE,
            IssueCode.BROKEN_CODE_BLOCK,
            f"{reading.describe()}"[:500],
            PENALTY,
            fix="Fix the code so that its language's parser reads it; mark left-out code "
            "with an elision (`...`, `# ...`)",
            field=f"block {reading.block.index}",
            position=reading.position,
        )
        for reading in readings
        if reading.status is BlockStatus.SYNTAX_ERROR
    ][:MAX_BLOCK_FINDINGS]


def _block_keys(readings: tuple[BlockReading, ...]) -> list[Finding]:
    found: list[Finding] = []
    for reading in readings:
        language = reading.block.language
        if reading.status is not BlockStatus.PARSED or reading.note:
            continue  # only a block read as written has keys to count
        if language in (CodeLanguage.JSON, CodeLanguage.YAML):
            keys = repeated_keys(language, reading.block.body)
            found.extend(_repeated(k, reading) for k in keys if not k.alternatives)
    return found[:MAX_BLOCK_FINDINGS]


def _repeated(key: RepeatedKey, reading: BlockReading | None = None) -> Finding:
    where = key.where if reading is None else f"block {reading.block.index}, {key.where}"
    position = None
    if key.line is not None:
        position = Position(
            line=key.line,
            column=key.column or 1,
            block=reading.block.index if reading else None,
            output_line=reading.block.start_line + key.line - 1 if reading else key.line,
        )
    return finding(
        Dimension.CONSISTENCY,
        IssueCode.DUPLICATE_KEY,
        f"key {key.key[:80]!r} is given twice in one mapping ({where}): "
        "a reader keeps only one of the two values",
        PENALTY,
        fix="Give each key once; merge the two values or rename one",
        field=key.key[:200],
        position=position,
    )


def _dockerfile(content: str) -> list[Finding]:
    found = lacks_from(content)
    if found is None:
        return []
    what, line = found
    return [
        finding(
            Dimension.SUBSTANCE,
            IssueCode.MISSING_FROM,
            f"the Dockerfile's first instruction is {what} (line {line}), not FROM: "
            "docker build refuses it",
            PENALTY,
            fix="Start the Dockerfile with FROM <base image> (only ARG may come before it)",
            field=f"line {line}",
            position=Position(line=line, column=1),
        )
    ]
