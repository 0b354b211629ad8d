"""Code wherever agents put it, measured on public data: false alarms and recall per language.

Run: ``python -m bench.code_eval [--per-half N] [--languages a,b] [--show N]``.

For each language, real files shipped inside the installed packages
(``bench.public.code_corpus``) are reviewed twice, each on the dev half and the test half
side by side:

- as an output of their own kind (``kind: yaml``...): the Floor must pass a real file and
  fail its mutated twin;
- fenced in a markdown answer (```` ```yaml ````): the Wall must raise no code finding on a
  real file, and a ``BrokenCodeBlock`` on its twin (a contract with ``code_deliverable``
  reads the blocks the same way, in the Floor).

A real file counts only if the language's reference parser accepts it
(``bench.public.code_reference``); one it rejects is left out and counted. The mutants
(``bench.public.code_mutations``) count only if the reference rejects them. Then the
fenced blocks of real documentation (``bench.public.doc_blocks``, with the pinned
packages' READMEs fetched first where not yet cached) are read: how many the engine flags
per language, how many it reads as fragments, and what it leaves unchecked.
A flagged documentation block is a false alarm or an error in the documentation; ``--show``
prints those of the dev half (and the dev half's false alarms and misses) to look at; the
test half is counted, never shown. Each flagged block is also counted by what it holds of
what documentation does on purpose (``bench.public.doc_marks``: an elision, a prompt, a
diff, a template, a placeholder, or none): on the test half that count bounds the false
alarms of those kinds without a block being read.

Writes ``bench/results/code_eval.json``.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.public import code_corpus, doc_blocks, doc_marks
from bench.public.code_corpus import RealFile
from bench.public.code_mutations import candidates
from bench.public.code_reference import reference_name, reference_valid
from bench.public.heldout import Half
from schemas.code import BlockStatus, CodeLanguage
from schemas.request import NodeOutput, OutputKind
from schemas.stages import IssueCode
from workers.evaluate.code.blocks import BlockReading, read_block, read_blocks
from workers.evaluate.code.fences import FencedBlock
from workers.evaluate.code.leniency import TRAILING_COMMA_TAGS
from workers.evaluate.floor.structure import check_floor
from workers.evaluate.wall.code_checks import check_code

RESULTS = Path(__file__).parent / "results" / "code_eval.json"
_TAG = {CodeLanguage.SHELL: "bash"}
_BACKTICKS = re.compile(r"`{3,}")


def fenced(item: RealFile) -> str:
    """The file as a chat model returns it: a sentence, then the file in a fenced block."""
    longest = max((len(m.group(0)) for m in _BACKTICKS.finditer(item.text)), default=2)
    fence = "`" * max(3, longest + 1)
    tag = _TAG.get(item.language, item.language.value)
    name = item.item_id.rsplit("/", 1)[-1]
    return f"Here is `{name}`:\n\n{fence}{tag}\n{item.text.rstrip()}\n{fence}\n"


def floor_fails(language: CodeLanguage, text: str) -> bool:
    """Whether the Floor refuses ``text`` as an output of its own kind."""
    return not check_floor(NodeOutput(kind=OutputKind(language.value), content=text), None).passed


def fenced_flags(item: RealFile, text: str) -> list[str]:
    """The BrokenCodeBlock messages the Wall raises on ``text`` fenced in markdown."""
    output = NodeOutput(
        kind=OutputKind.MARKDOWN,
        content=fenced(RealFile(item.item_id, item.language, text, item.half)),
    )
    return [
        f.issue.message for f in check_code(output) if f.issue.code is IssueCode.BROKEN_CODE_BLOCK
    ]


def _blank() -> dict[str, Any]:
    return {
        "files": 0,
        "reference_rejected": 0,
        "floor_false_alarms": 0,
        "fenced_false_alarms": 0,
        "mutants": 0,
        "floor_caught": 0,
        "fenced_caught": 0,
        "by_operator": {},
    }


def measure_language(
    language: CodeLanguage, items: list[RealFile], show: list[str]
) -> dict[str, dict[str, Any]]:
    """Both halves' counts for one language's real files and their mutated twins."""
    halves = {h.value: _blank() for h in Half}
    verdicts = reference_valid(language, [i.text for i in items])
    good = []
    for item, valid in zip(items, verdicts, strict=True):
        half = halves[item.half.value]
        if valid is False:
            half["reference_rejected"] += 1
            continue
        good.append(item)
        half["files"] += 1
        if floor_fails(language, item.text):
            half["floor_false_alarms"] += 1
            _note(show, item, "false alarm (own kind)", _floor_message(language, item.text))
        flags = fenced_flags(item, item.text)
        if flags:
            half["fenced_false_alarms"] += 1
            _note(show, item, "false alarm (fenced)", flags[0])
    if all(v is None for v in verdicts):
        return halves  # no reference: no mutant can be scored
    for item, operator, mutant in _mutants(language, good):
        half = halves[item.half.value]
        floor = floor_fails(language, mutant)
        flags = fenced_flags(item, mutant)
        half["mutants"] += 1
        half["floor_caught"] += floor
        half["fenced_caught"] += bool(flags)
        row = half["by_operator"].setdefault(operator, [0, 0, 0])
        row[0], row[1], row[2] = row[0] + 1, row[1] + floor, row[2] + bool(flags)
        if not floor or not flags:
            _note(show, item, f"miss ({operator}; floor {floor}, fenced {bool(flags)})", "")
    return halves


def _mutants(language: CodeLanguage, good: list[RealFile]) -> list[tuple[RealFile, str, str]]:
    """Per file and operator, the first candidate the reference parser rejects."""
    proposed = [
        (item, operator, mutant)
        for item in good
        for operator, mutants in candidates(language, item.item_id, item.text).items()
        for mutant in mutants
    ]
    verdicts = reference_valid(language, [m for _, _, m in proposed])
    chosen: dict[tuple[str, str], tuple[RealFile, str, str]] = {}
    for (item, operator, mutant), valid in zip(proposed, verdicts, strict=True):
        if valid is False and (item.item_id, operator) not in chosen:
            chosen[(item.item_id, operator)] = (item, operator, mutant)
    return list(chosen.values())


def _floor_message(language: CodeLanguage, text: str) -> str:
    floor = check_floor(NodeOutput(kind=OutputKind(language.value), content=text), None)
    return "; ".join(v.message for v in floor.violations)[:200]


def _note(show: list[str], item: RealFile, what: str, message: str) -> None:
    if item.half is Half.DEV:
        show.append(f"  {what}: {item.item_id} {message[:200]}")


def measure_docs(show: list[str]) -> dict[str, Any]:
    """Per half and language: blocks, flagged, fragments, why blocks were unchecked, and
    how many slips made in the blocks that parse as written (to the engine and the
    reference) are caught."""
    counts: dict[str, int] = {}
    halves: dict[str, dict[str, Any]] = {
        h.value: {
            "documents": 0,
            "languages": {},
            "unchecked": Counter(),
            "readings": Counter(),
            "flagged_marks": Counter(),
        }
        for h in Half
    }
    parsed: dict[tuple[Half, CodeLanguage], list[tuple[str, FencedBlock]]] = {}
    for document in doc_blocks.documents(counts):
        halves[document.half.value]["documents"] += 1
        for reading in read_blocks(document.text):
            language = reading.block.language
            if _count(halves[document.half.value], document, reading, show) and language:
                key = (document.half, language)
                parsed.setdefault(key, []).append((document.item_id, reading.block))
    for (half_name, language), blocks in sorted(parsed.items()):
        caught = _doc_mutants(language, blocks, show if half_name is Half.DEV else [])
        if caught is not None:
            halves[half_name.value].setdefault("mutants", {})[language.value] = caught
    return {"left_out": counts, **{k: _plain(v) for k, v in halves.items()}}


def _count(
    half: dict[str, Any], document: doc_blocks.Document, reading: BlockReading, show: list[str]
) -> bool:
    """Count one documentation block; True when it parses as written (a slip can be made)."""
    language = reading.block.language
    if language is None:
        half["unchecked"][reading.note.split(" for ")[0]] += 1
        return False
    row = half["languages"].setdefault(language.value, [0, 0])
    row[0] += 1
    if reading.status is BlockStatus.SYNTAX_ERROR:
        row[1] += 1
        marked = doc_marks.marks(language, reading.block.body)
        half["flagged_marks"].update([m.value for m in marked] or ["none"])
        if document.half is Half.DEV:
            holds = f" [holds: {', '.join(marked)}]" if marked else ""
            show.append(
                f"  doc block flagged: {document.item_id} {reading.describe()[:220]}{holds}"
            )
    elif reading.status is BlockStatus.UNCHECKED:
        half["unchecked"][re.sub(r" on line \d+", "", reading.note.split(":")[0])] += 1
    elif reading.note:
        half["readings"][reading.note] += 1
    return reading.status is BlockStatus.PARSED and not reading.note


def _doc_mutants(
    language: CodeLanguage, blocks: list[tuple[str, FencedBlock]], show: list[str]
) -> list[int] | None:
    """[mutants, caught] for one slip per operator in each block, or None with no reference.

    As for real files, a block counts only if the reference accepts it as written: a
    mutation of text the reference already refuses shows nothing decidably wrong.
    """
    accepted = reference_valid(language, [block.body for _, block in blocks])
    blocks = [pair for pair, valid in zip(blocks, accepted, strict=True) if valid is not False]
    proposed = [
        (item_id, block, operator, mutant)
        for item_id, block in blocks
        for operator, mutants in candidates(
            language, f"{item_id}#{block.index}", block.body
        ).items()
        if not _dialect_syntax(block, operator)
        for mutant in mutants
    ]
    verdicts = reference_valid(language, [m for *_, m in proposed])
    if all(v is None for v in verdicts):
        return None
    chosen: dict[tuple[str, int, str], tuple[FencedBlock, str, str]] = {}
    for (item_id, block, operator, mutant), valid in zip(proposed, verdicts, strict=True):
        if valid is False and (item_id, block.index, operator) not in chosen:
            chosen[(item_id, block.index, operator)] = (block, operator, mutant)
    caught = 0
    for (item_id, _, _), (block, operator, mutant) in chosen.items():
        reading = read_block(replace(block, body=mutant))
        caught += reading.status is BlockStatus.SYNTAX_ERROR
        if reading.status is not BlockStatus.SYNTAX_ERROR:
            show.append(f"  doc slip missed ({operator}): {item_id} {reading.note[:120]}")
    return [len(chosen), caught]


def _dialect_syntax(block: FencedBlock, operator: str) -> bool:
    """Whether the operator's edit is syntax of the block's dialect, so no slip in it.

    A trailing comma is a slip in JSON and the reference refuses it, but a ``jsonc``
    block (VS Code's JSON with comments) may hold one: the engine rightly accepts it.
    """
    return operator == "trailing_comma" and block.tag in TRAILING_COMMA_TAGS


def _plain(half: dict[str, Any]) -> dict[str, Any]:
    return {k: dict(v) if isinstance(v, Counter) else v for k, v in half.items()}


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def summary(halves: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Each half's rates beside its counts."""
    return {
        name: {
            **half,
            "floor_false_alarm_rate": _rate(half["floor_false_alarms"], half["files"]),
            "fenced_false_alarm_rate": _rate(half["fenced_false_alarms"], half["files"]),
            "floor_recall": _rate(half["floor_caught"], half["mutants"]),
            "fenced_recall": _rate(half["fenced_caught"], half["mutants"]),
        }
        for name, half in halves.items()
    }


def _print(language: str, result: dict[str, Any]) -> None:
    for half in ("dev", "test"):
        h = result[half]
        print(
            f"{language:11} {half:4} files {h['files']:4}"
            f" (ref-rejected {h['reference_rejected']:3})"
            f"  FA floor {h['floor_false_alarm_rate']}  FA fenced {h['fenced_false_alarm_rate']}"
            f"  mutants {h['mutants']:4}  recall floor {h['floor_recall']}"
            f"  fenced {h['fenced_recall']}"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-half", type=int, default=300)
    parser.add_argument("--languages", default=",".join(c.value for c in CodeLanguage))
    parser.add_argument("--show", type=int, default=0)
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    wanted = [CodeLanguage(name) for name in args.languages.split(",")]
    code_corpus.install_sources()
    paths = code_corpus.candidates()
    show: list[str] = []
    out: dict[str, Any] = {"per_half": args.per_half, "languages": {}, "left_out": {}}
    for language in wanted:
        counts: dict[str, int] = {}
        if language is CodeLanguage.SQL:
            items = list(code_corpus.sql_statements(args.per_half, counts))
        else:
            items = list(
                code_corpus.sample(paths.get(language, []), language, args.per_half, counts)
            )
        result = summary(measure_language(language, items, show))
        result["reference"] = reference_name(language)
        out["languages"][language.value] = result
        out["left_out"][language.value] = counts
        _print(language.value, result)
    if not args.no_docs:
        out["docs_fetched"] = doc_blocks.fetch()
        out["docs"] = measure_docs(show)
        for half in ("dev", "test"):
            print(f"docs {half}: {json.dumps(out['docs'][half]['languages'])}")
    out["seconds"] = round(time.perf_counter() - started, 1)
    RESULTS.write_text(json.dumps(out, indent=2, sort_keys=True) + "\n")
    for line in show[: args.show]:
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
