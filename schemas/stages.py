"""What each layer found: Floor, Wall and Ceiling verdicts."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import Field

from schemas.base import Unit, WireModel
from schemas.claims import MAX_CLAIMS, CheckedClaim
from schemas.code import MAX_LISTED_BLOCKS, CodeBlock, Position
from schemas.quality import Dimension
from schemas.references import MAX_REFERENCES, ReferenceCheck
from schemas.request import GroundingPolicy


class Certainty(StrEnum):
    """How sure Stage 1 is that a finding is a defect: what it may decide on its own."""

    DEFINITE = "definite"
    """Measured, not guessed (a parse error, a number the input gives differently, a
    misquote, a citation of nothing, a self-contradiction): it counts against the Wall."""
    SUSPECT = "suspect"
    """A guess at meaning (words or names the input lacks in a summary or a chat reply):
    evidence for the router's P(fail), never on its own a reason to send an output back."""


class ViolationCode(StrEnum):
    """Why the Floor refused an output: a closed set, stable on the wire."""

    EMPTY_OUTPUT = "EmptyOutput"
    SYNTAX_ERROR = "SyntaxError"
    INCOMPLETE_FUNCTION = "IncompleteFunction"
    COMPILE_ERROR = "CompileError"
    JSON_DECODE_ERROR = "JSONDecodeError"
    SQL_PARSE_ERROR = "SQLParseError"
    YAML_ERROR = "YAMLError"
    TOML_DECODE_ERROR = "TOMLDecodeError"
    JAVASCRIPT_SYNTAX_ERROR = "JavaScriptSyntaxError"
    TYPESCRIPT_SYNTAX_ERROR = "TypeScriptSyntaxError"
    SHELL_SYNTAX_ERROR = "ShellSyntaxError"
    HTML_SYNTAX_ERROR = "HTMLSyntaxError"
    XML_SYNTAX_ERROR = "XMLSyntaxError"
    DOCKERFILE_SYNTAX_ERROR = "DockerfileSyntaxError"
    CODE_BLOCK_SYNTAX_ERROR = "CodeBlockSyntaxError"
    NO_CODE_BLOCK = "NoCodeBlock"
    DUPLICATE_ALIAS = "DuplicateAlias"
    ORDINAL_OUT_OF_RANGE = "OrdinalOutOfRange"
    UNKNOWN_TABLE = "UnknownTable"
    UNKNOWN_COLUMN = "UnknownColumn"
    AMBIGUOUS_COLUMN = "AmbiguousColumn"
    TOO_SHORT = "TooShort"
    TOO_LONG = "TooLong"
    SCHEMA_VIOLATION = "SchemaViolation"
    CONTRACT_UNUSABLE = "ContractUnusable"
    MISSING_FIELD = "MissingField"


class IssueCode(StrEnum):
    """What the Wall found: a closed set, stable on the wire."""

    # substance
    TOO_THIN = "TooThin"
    BLOATED = "Bloated"
    FILLER = "Filler"
    REPETITIVE = "Repetitive"
    REPEATED_LINES = "RepeatedLines"
    STUB_BODY = "StubBody"
    EMPTY_DOCUMENT = "EmptyDocument"
    BLANK_VALUES = "BlankValues"
    BROKEN_CODE_BLOCK = "BrokenCodeBlock"
    MISSING_FROM = "MissingFrom"
    # consistency
    CONTRADICTION = "Contradiction"
    CONFLICTING_QUANTITY = "ConflictingQuantity"
    COUNT_MISMATCH = "CountMismatch"
    REDEFINITION = "Redefinition"
    CONTRADICTORY_FILTER = "ContradictoryFilter"
    DUPLICATE_KEY = "DuplicateKey"
    # grounding
    DANGLING_CITATION = "DanglingCitation"
    FABRICATED_CITATION = "FabricatedCitation"
    MALFORMED_URL = "MalformedURL"
    UNSUPPORTED_CLAIM = "UnsupportedClaim"
    UNDEFINED_NAME = "UndefinedName"
    UNKNOWN_REFERENCE = "UnknownReference"
    HALLUCINATED_API = "HallucinatedAPI"
    # grounding against the node's input (task and sources)
    UNRESOLVED_CITATION = "UnresolvedCitation"
    UNSUPPORTED_QUOTE = "UnsupportedQuote"
    UNSUPPORTED_WORDING = "UnsupportedWording"
    UNSUPPORTED_NAME = "UnsupportedName"
    UNSUPPORTED_NUMBER = "UnsupportedNumber"
    UNLINKED_CLAIM = "UnlinkedClaim"
    UNLINKED_WORDING = "UnlinkedWording"
    CONTRADICTS_INPUT = "ContradictsInput"
    MORE_UNSUPPORTED = "MoreUnsupported"
    # references checked against the world (workers/evaluate/references)
    DEAD_REFERENCE = "DeadReference"
    UNREACHABLE_REFERENCE = "UnreachableReference"
    MISQUOTED_REFERENCE = "MisquotedReference"
    FUTURE_REFERENCE = "FutureReference"
    # packages the output names (workers/evaluate/wall/packages)
    UNKNOWN_PACKAGE = "UnknownPackage"
    UNKNOWN_IMPORT = "UnknownImport"
    UNDECLARED_IMPORT = "UndeclaredImport"
    # the judged part of the Wall
    JUDGE_INDETERMINATE = "JudgeIndeterminate"


#: A code field: enum members from code, their values from the wire (strict elsewhere).
_Code = Field(strict=False)


class Violation(WireModel):
    """One way the output breaks its Floor."""

    code: Annotated[ViolationCode, _Code]
    """Stable machine name (``SyntaxError``, ``SchemaViolation``, ``MissingField``...)."""
    message: str
    """What is wrong, with the location when known."""
    field: str | None = None
    """The offending field or path, when there is one."""
    certainty: Annotated[Certainty, _Code] = Certainty.DEFINITE
    """Always definite: the Floor checks structure, which it can decide."""
    position: Position | None = None
    """Where the parser stopped (line, column, and the fenced block), when it says."""


class FloorResult(WireModel):
    """Structural validity: parse, contract, required fields, length bounds."""

    passed: bool
    """Whether every Floor check passed."""
    violations: tuple[Violation, ...] = ()
    """Every violation found."""


class WallIssue(WireModel):
    """One content problem the Wall found."""

    dimension: Dimension
    """The Wall dimension it lowers."""
    code: Annotated[IssueCode, _Code]
    """Stable machine name (``Filler``, ``Contradiction``, ``DanglingCitation``...)."""
    message: str
    """What is wrong."""
    field: str | None = None
    """Where, when it can be located."""
    fix: str = ""
    """What would repair it; feeds iteration feedback."""
    certainty: Annotated[Certainty, _Code] = Certainty.DEFINITE
    """Definite findings count against the Wall; suspect ones are evidence for the router
    (``workers/evaluate/wall/certainty.py`` says which codes are which, under which policy)."""
    penalty: Unit = 0.0
    """What it took off its dimension's score."""
    position: Position | None = None
    """Where in the output (line, column, and the fenced block), when it can be pinned."""


class WallResolution(StrEnum):
    """How the Wall grade was read (partial grades depend on criticality)."""

    PASS = "pass"
    PASS_WITH_WARNING = "pass_with_warning"
    FAIL = "fail"
    NOT_RUN = "not_run"


class GroundingUse(WireModel):
    """The grounding policy a review applied, and why that one."""

    policy: GroundingPolicy
    """How closely the output was held to its input."""
    declared: bool
    """Whether the request declared it; otherwise it was inferred from the task."""
    reason: str
    """What it was inferred from (or ``declared by the request``)."""


class WallResult(WireModel):
    """Semantic validity: substance, consistency, grounding."""

    passed: bool
    """Whether the grade resolved to a pass."""
    grade: Unit | None = None
    """Combined Wall grade; null when the Wall did not run."""
    resolution: WallResolution = WallResolution.NOT_RUN
    """How the grade was resolved."""
    issues: tuple[WallIssue, ...] = ()
    """Every issue found, definite and suspect; the grade counts only the definite ones."""
    grounding: GroundingUse | None = None
    """The policy the output was checked against its input under; null when the node was
    given no input to ground it in (no sources, no material in the task)."""


class Stage1Result(WireModel):
    """Floor and Wall, run on every node."""

    passed: bool
    """Floor and Wall both passed."""
    floor: FloorResult
    """The structural check."""
    wall: WallResult
    """The semantic check; not run when the Floor failed."""
    code_blocks: tuple[CodeBlock, ...] = Field(default=(), max_length=MAX_LISTED_BLOCKS)
    """Each fenced block of a markdown or text output (the first fifty): the language it
    was read as and whether it parsed, or why it was left unchecked."""
    references: tuple[ReferenceCheck, ...] = Field(default=(), max_length=MAX_REFERENCES)
    """Each URL the output cites, with its status chain and what it means (empty when it
    cites none, or fetching is off: ``WINDAGS_REFS_FETCH``)."""


class BiasCheck(WireModel):
    """Position-bias control for a pairwise comparison (BC-EVAL-004)."""

    forward: Unit
    """P(candidate better) with the candidate shown first."""
    reverse: Unit
    """P(candidate better) with the candidate shown second."""
    disagreement: Unit
    """|forward - reverse|."""
    flagged: bool
    """Disagreement above 0.3: position bias detected."""
    retried: bool = False
    """Whether the pair was run again after a flag."""
    preference: Unit
    """Mean of both orders; 0.5 is a tie."""


class CeilingStatus(StrEnum):
    """Whether the Ceiling produced scores."""

    SCORED = "scored"
    INDETERMINATE = "indeterminate"


class Stage2Result(WireModel):
    """The Ceiling evaluation, run only when escalated."""

    status: CeilingStatus
    """Scored, or indeterminate when the judge failed (never a 0 score)."""
    model: str
    """The judge that scored."""
    error: str | None = None
    """The judge's failure, when indeterminate."""
    length_normalised: bool = True
    """Scores were corrected for output length (verbosity bias)."""
    bias: BiasCheck | None = None
    """Pairwise position-bias check, when a baseline was given."""
    calls: Annotated[int, Field(ge=0)] = 0
    """Judge calls made."""
    claims: tuple[CheckedClaim, ...] = Field(default=(), max_length=MAX_CLAIMS)
    """The judge's per-claim grounding, each span checked against the sources, merged
    with Stage 1's suspect findings into the grounding score (empty when not given)."""


__all__ = [
    "BiasCheck",
    "CeilingStatus",
    "Certainty",
    "FloorResult",
    "GroundingUse",
    "IssueCode",
    "Stage1Result",
    "Stage2Result",
    "Violation",
    "ViolationCode",
    "WallIssue",
    "WallResolution",
    "WallResult",
]
