"""Wall, grounding: do references resolve, are claims supported, do citations look real?

These are the hallucination checks that need no network: citation markers must point at
a reference entry or a given source, author-year citations must carry a plausible year,
URLs must be well formed, sweeping claims need a citation, code must not use names it
never binds nor standard-library APIs that do not exist, and (when the request carries
``sources``) names, numbers and quotations must be found in what the node was given.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, date, datetime

from sqlglot import exp

from schemas.quality import Dimension
from schemas.request import GroundingPolicy, NodeOutput, OutputKind, Source
from schemas.stages import GroundingUse, IssueCode
from workers.evaluate.findings import Finding, finding, sentences
from workers.evaluate.parsed import ParseFailure, python_tree, sql_statements
from workers.evaluate.wall.certainty import classify
from workers.evaluate.wall.grounding.attributions import check_attributions
from workers.evaluate.wall.grounding.binder import unbound_names
from workers.evaluate.wall.grounding.choices import check_choice
from workers.evaluate.wall.grounding.claims import prose_of
from workers.evaluate.wall.grounding.denials import check_denials
from workers.evaluate.wall.grounding.input_support import check_against_input
from workers.evaluate.wall.grounding.links import malformed_urls
from workers.evaluate.wall.grounding.policy import NodeBrief, read_brief
from workers.evaluate.wall.grounding.reference_list import future_references
from workers.evaluate.wall.grounding.sources import node_input
from workers.evaluate.wall.grounding.stdlib_api import hallucinated_apis

_G = Dimension.GROUNDING
#: ``[2]`` in prose; not ``x[2]``, ``[[2]``, ``[2]:`` (an entry) or ``[2](url)`` (a link).
_MARKER = re.compile(r"(?=\[)(?<![\w\]\[])\[(\d{1,3})\](?![:(\[])")
_ENTRY = re.compile(r"^\s*(?:\[(\d{1,3})\]:?|(\d{1,3})\.)\s+\S", re.M)
#: ``(Smith, 2019)``, ``(Lee et al. 2020)``: an author is a name, so ``(RFC 7692)`` and
#: ``(ISO 8601)``, which number a document, are not author-year citations.
_AUTHOR_YEAR = re.compile(
    r"\(([A-Z][a-z][A-Za-z\-]*(?: et al\.)?(?: (?:and|&) [A-Z][A-Za-z\-]+)?),? "
    r"(\d{4})[a-z]?\)"
)
#: The look-ahead of first characters (here and in ``_MARKER``) spares the engine the rest
#: of the pattern at most positions of a text.
_CLAIM = re.compile(
    r"\b(?=[aeirs\d])(?:studies (?:show|prove|have shown)|research (?:shows|proves|has shown)|"
    r"experts (?:agree|say)|it is (?:well[- ]known|proven|a fact)|scientists have proven|"
    r"according to (?:a |recent |many )?(?:study|studies|report|reports|survey|experts)|"
    r"\d{1,3}(?:\.\d+)?% of (?:all )?(?:users|people|companies|developers|experts))",
    re.I,
)
_CITED = re.compile(r"\[\d{1,3}\]|\([A-Z][A-Za-z\-]+(?: et al\.)?,? \d{4}\)|https?://")
_PROSE = (OutputKind.TEXT, OutputKind.MARKDOWN, OutputKind.JSON)
#: Self-contained findings listed; those against the input are bounded on their own.
MAX_FINDINGS = 8
NO_SOURCES = "no input given: names, numbers and quotations were not checked against one"
WITH_SOURCES = "checked against the task and {given}, {policy} ({how})"
_POLICY_SCOPE = {
    GroundingPolicy.EXTRACTIVE: "extractive: every name, number and word must be stated there",
    GroundingPolicy.ABSTRACTIVE: "abstractive: names and numbers should be stated there",
    GroundingPolicy.OPEN: "open: outside facts allowed, only contradictions, misquotes and "
    "citations decide",
}


def check_grounding(
    output: NodeOutput,
    *,
    task: str | None = None,
    sources: Sequence[Source] = (),
    policy: GroundingPolicy | None = None,
    year: int | None = None,
) -> list[Finding]:
    """Every grounding check that applies to the output's kind (see ``ground``).

    ``policy`` is the declared grounding policy; None infers it from the task.
    """
    return ground(output, read_brief(task, sources, policy), year=year)


def ground(
    output: NodeOutput, brief: NodeBrief, *, year: int | None = None, today: date | None = None
) -> list[Finding]:
    """Every grounding check that applies to the output's kind.

    Citations, URLs and claims in prose; unbound names and invented APIs in code;
    unknown qualifiers in SQL; and, when the node was given input (sources, or material
    pasted into its task), support in that input as strictly as the brief's policy asks.
    Each finding's certainty comes from ``certainty``'s table.

    ``year`` is the latest plausible citation year and ``today`` the review's date (a
    reference dated later is a finding); the clock is read when the check runs (never at
    import), so a long-lived worker does not freeze it.
    """
    today = today if today is not None else datetime.now(UTC).date()
    latest = year if year is not None else today.year
    found = malformed_urls(output)
    prose = prose_of(output) if output.kind in _PROSE else ""
    if output.kind in _PROSE:
        found.extend(_citations(prose, latest, cited_by_source=bool(brief.sources)))
        found.extend(_claims(prose))
        found.extend(future_references(prose, today))
    elif output.kind is OutputKind.PYTHON:
        found.extend(_python_names(output.content))
    elif output.kind is OutputKind.SQL:
        found.extend(_unknown_qualifiers(output.content))
    found = [classify(f, brief.use) for f in found[:MAX_FINDINGS]]
    if brief.use is not None and prose:
        ask = brief.parts.subject  # what an answer may echo: not a template's instructions
        given = node_input(ask, brief.sources, brief.parts.material)
        found.extend(check_against_input(prose, given, brief.use))
        found.extend(check_choice(prose, ask, given))
        found.extend(check_denials(prose, given))
        found.extend(check_attributions(prose, given))
    return found


def grounding_scope(use: GroundingUse | None, sources: int) -> str:
    """What the grounding dimension's justification says about the input it used."""
    if use is None:
        return NO_SOURCES
    given = f"{sources} given source(s)" if sources else "the material in the task"
    how = "declared" if use.declared else "inferred"
    return WITH_SOURCES.format(given=given, policy=_POLICY_SCOPE[use.policy], how=how)


def _citations(content: str, latest_year: int, *, cited_by_source: bool) -> list[Finding]:
    """Markers without a reference entry; with sources, resolving them is the input's job."""
    entries = {a or b for a, b in _ENTRY.findall(content)}
    markers = sorted({m for m in _MARKER.findall(content) if int(m) >= 1}, key=int)
    if cited_by_source:
        markers = []
    found = [
        finding(
            _G,
            IssueCode.DANGLING_CITATION,
            f"citation [{m}] has no reference entry",
            0.35,
            field="citations",
            fix=f"Add reference [{m}] or remove the claim that cites it",
        )
        for m in markers
        if m not in entries
    ]
    for author, year in _AUTHOR_YEAR.findall(content):
        if not 1800 <= int(year) <= latest_year:
            found.append(
                finding(
                    _G,
                    IssueCode.FABRICATED_CITATION,
                    f"({author}, {year}) cites a year that cannot be right",
                    0.6,
                    field="citations",
                    fix="Cite a real, verifiable source",
                )
            )
    return found


def _claims(content: str) -> list[Finding]:
    unsupported = [s for s in sentences(content) if _CLAIM.search(s) and not _CITED.search(s)]
    if not unsupported:
        return []
    return [
        finding(
            _G,
            IssueCode.UNSUPPORTED_CLAIM,
            f"{len(unsupported)} sweeping claim(s) without a source, e.g. {unsupported[0][:100]!r}",
            min(0.7, 0.25 * len(unsupported)),
            field="claims",
            fix="Cite a source for each claim or soften it",
        )
    ]


def _python_names(content: str) -> list[Finding]:
    tree = python_tree(content)
    if isinstance(tree, ParseFailure):
        return []
    found = [
        finding(
            _G,
            IssueCode.UNDEFINED_NAME,
            f"{name} is used (line {line}) but never defined or imported",
            0.3,
            field=name,
            fix=f"Import or define {name}",
        )
        for line, name in unbound_names(tree)[:3]
    ]
    found += [
        finding(
            _G,
            IssueCode.HALLUCINATED_API,
            f"{dotted} (line {line}) does not exist in the standard library",
            0.45,
            field=dotted,
            fix=f"Use a function {dotted.rsplit('.', 1)[0]} really has (check its documentation)",
        )
        for line, dotted in hallucinated_apis(tree)[:3]
    ]
    return found


def _unknown_qualifiers(content: str) -> list[Finding]:
    statements = sql_statements(content)
    if isinstance(statements, ParseFailure):
        return []
    found: list[Finding] = []
    for statement in statements:
        known = {t.alias_or_name.lower() for t in statement.find_all(exp.Table)}
        known |= {t.name.lower() for t in statement.find_all(exp.Table)}
        known |= {c.alias.lower() for c in statement.find_all(exp.CTE)}
        known |= {s.alias.lower() for s in statement.find_all(exp.Subquery) if s.alias}
        # Table functions and UNNEST name their rows; a column or projection alias used as
        # a qualifier is a struct field access (``"struct"."f1"``), not a missing table.
        known |= {a.name.lower() for a in statement.find_all(exp.TableAlias) if a.name}
        known |= {a.alias.lower() for a in statement.find_all(exp.Alias) if a.alias}
        known |= {c.name.lower() for c in statement.find_all(exp.Column)}
        for column in statement.find_all(exp.Column):
            # In a longer path (``t.struct.field``) only the first part can name a source.
            qualifier = column.parts[0].name.lower() if len(column.parts) > 1 else ""
            if qualifier and qualifier not in known:
                found.append(
                    finding(
                        _G,
                        IssueCode.UNKNOWN_REFERENCE,
                        f"{column.sql()} refers to {qualifier!r}, which no FROM or JOIN defines",
                        0.45,
                        field=column.sql(),
                        fix=f"Join the table aliased {qualifier} or fix the alias",
                    )
                )
    return found[:3]
