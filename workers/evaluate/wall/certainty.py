"""Which findings Stage 1 may decide on, and which it only suspects: one table.

Stage 1 decides what it knows. A finding is definite when the check measured it: the
output does not parse, repeats itself, cites a source that was not given, quotes words the
source does not hold, gives a number, name or maker the input gives differently, or
contradicts itself. It is suspect when the check guesses at meaning: words, names or
numbers the input lacks are a hallucination in an extracted answer, and ordinary
paraphrase or outside knowledge in a summary or a chat reply. A suspect finding never
sends an output back on its own; it lowers the grounding score shown, and it raises
P(fail) for the router (``suspicion``), which escalates to Stage 2 when that pays.

Why each suspect code is not definite is below. The data behind the table, the share of
right outputs and of hallucinated ones each code fires on per grounding policy (on the dev
half of the tunable HaluEval items, sent as a new user sends them: the input in
``sources``, no policy declared), is ``suspicion_weights.FIRING``, written with the weights
by ``python -m bench.fit_suspicion --write`` and printed by ``python -m bench.fit_suspicion``:
no share is copied here by hand. The first five are suspect unless ``extractive`` is
declared; the last three always are. Every code not listed is definite under every policy,
but for ``DeadReference`` and ``MisquotedReference``, whose certainty comes with them from
the status table (``workers/evaluate/references/statuses.py``: a 404 is definite once a
second request confirms it, a quote is missing for certain only from a page read whole).

| code                 | why not definite  |
|----------------------|-------------------|
| UnsupportedWording   | paraphrase        |
| UnlinkedWording      | across passages   |
| UnsupportedName      | outside knowledge |
| UnsupportedNumber    | arithmetic        |
| UnlinkedClaim        | related elsewhere |
| UnsupportedClaim     | a pattern         |
| JudgeIndeterminate   | a judge failed    |
| UnreachableReference | 403, 429, 5xx...  |

Package findings (``UnknownPackage``, ``UnknownImport``, ``UndeclaredImport``) are not in
the table: the index's answer and the declared environment set their certainty
(``packages/check.py``), whatever the grounding policy.

Under a declared ``extractive`` policy the first five are definite: the node's contract
says any word it adds is invented (``FIRING["extractive"]``: HaluEval QA, where the policy
is inferred extractive, shows how rarely each fires on right answers).
"""

from __future__ import annotations

from dataclasses import replace

from schemas.request import GroundingPolicy
from schemas.stages import Certainty, GroundingUse, IssueCode
from workers.evaluate.findings import Finding
from workers.evaluate.wall.packages.check import PACKAGE_CODES

#: What the input lacks: definite only where the node declared it extracts.
LACKED_BY_INPUT = frozenset(
    {
        IssueCode.UNSUPPORTED_WORDING,
        IssueCode.UNLINKED_WORDING,
        IssueCode.UNSUPPORTED_NAME,
        IssueCode.UNSUPPORTED_NUMBER,
        IssueCode.UNLINKED_CLAIM,
    }
)
#: Suspect under every policy.
ALWAYS_SUSPECT = frozenset(
    {
        IssueCode.UNSUPPORTED_CLAIM,
        IssueCode.JUDGE_INDETERMINATE,
        IssueCode.UNREACHABLE_REFERENCE,
    }
)
#: Folds of other findings, and findings the status table graded: they keep their own.
FOLDS = frozenset(
    {
        IssueCode.MORE_UNSUPPORTED,
        IssueCode.DEAD_REFERENCE,
        IssueCode.MISQUOTED_REFERENCE,
    }
)
#: Set by their evidence (the index, the declared environment), never by the policy.
EVIDENCED = PACKAGE_CODES


def certainty_of(code: IssueCode, use: GroundingUse | None) -> Certainty:
    """The certainty of a finding with ``code`` under the policy applied (``use``)."""
    if code in ALWAYS_SUSPECT:
        return Certainty.SUSPECT
    if code in LACKED_BY_INPUT:
        declared_extractive = (
            use is not None and use.declared and use.policy is GroundingPolicy.EXTRACTIVE
        )
        return Certainty.DEFINITE if declared_extractive else Certainty.SUSPECT
    return Certainty.DEFINITE


def classify(found: Finding, use: GroundingUse | None) -> Finding:
    """``found`` with its certainty set from the table (a fold, a package keeps its own)."""
    code = found.issue.code
    if code in FOLDS or code in EVIDENCED:
        return found
    certainty = certainty_of(code, use)
    if found.issue.certainty is certainty:
        return found
    return replace(found, issue=found.issue.model_copy(update={"certainty": certainty}))


def is_definite(found: Finding) -> bool:
    """Whether a finding counts against the Wall."""
    return found.issue.certainty is Certainty.DEFINITE
