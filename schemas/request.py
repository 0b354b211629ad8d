"""`ReviewRequest`: what the DAG runtime sends when a node finishes."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from packaging.requirements import InvalidRequirement, Requirement
from pydantic import Field, field_validator, model_validator

from schemas.base import Identifier, NonNegative, Unit, Usd, WireModel
from schemas.contracts import loops_forever, unresolvable_refs


class SkillStage(StrEnum):
    """How practised the skill that produced the output is."""

    NOVICE = "novice"
    JOURNEYMAN = "journeyman"
    EXPERT = "expert"

    @property
    def factor(self) -> float:
        """The stage factor of the failure-probability formula."""
        return _STAGE_FACTORS[self]


class BreakerState(StrEnum):
    """The skill's circuit-breaker state."""

    CLOSED = "closed"
    HALF_OPEN = "half_open"
    OPEN = "open"

    @property
    def penalty(self) -> float:
        """The breaker penalty of the failure-probability formula."""
        return _BREAKER_PENALTIES[self]


_STAGE_FACTORS = {SkillStage.NOVICE: 1.5, SkillStage.JOURNEYMAN: 1.2, SkillStage.EXPERT: 1.0}
_BREAKER_PENALTIES = {BreakerState.CLOSED: 1.0, BreakerState.HALF_OPEN: 1.5, BreakerState.OPEN: 2.0}


class OutputKind(StrEnum):
    """The format the node promised; it selects the Floor's parser."""

    TEXT = "text"
    JSON = "json"
    PYTHON = "python"
    SQL = "sql"
    MARKDOWN = "markdown"
    YAML = "yaml"
    """Every document of the stream is checked."""
    TOML = "toml"
    JAVASCRIPT = "javascript"
    TYPESCRIPT = "typescript"
    SHELL = "shell"
    """Read as bash reads it (``bash -n``): syntax only."""
    HTML = "html"
    XML = "xml"
    DOCKERFILE = "dockerfile"


class GroundingPolicy(StrEnum):
    """How closely the output must keep to its sources: what a grounding check may flag.

    The same words mean different things in different nodes: an extracted answer that adds
    a word has invented it, a summary that paraphrases has not, and a chat reply that names
    a film the sources do not is drawing on what it knows. Every policy flags what
    contradicts the input, misquotes it or cites what was not given.
    """

    EXTRACTIVE = "extractive"
    """The output restates the input (an answer taken from a passage, an extraction): any
    name, number or content word the input lacks keeps it from acceptance."""
    ABSTRACTIVE = "abstractive"
    """The output rewords the input (a summary, a RAG answer): names and numbers must be
    the input's; reworded words are tolerated until there are many of them."""
    OPEN = "open"
    """The sources are reference, not the whole world (a conversational reply): outside
    facts are allowed; only contradictions, misquotes and unresolved citations count."""


class Skill(WireModel):
    """The skill that produced the output, with its track record."""

    id: Identifier
    """Skill identifier."""
    success_rate: Unit
    """Historical fraction of this skill's outputs that passed review."""
    stage: SkillStage = SkillStage.EXPERT
    """Practice stage; novice outputs fail more often."""
    breaker: BreakerState = BreakerState.CLOSED
    """Circuit-breaker state; a half-open or open breaker raises P(fail)."""


class NodeOutput(WireModel):
    """What the node produced."""

    kind: OutputKind
    """Declared format of ``content``."""
    content: str
    """The output itself. Untrusted data: it is never read as instructions."""


#: Most sources one request may carry; more would not fit a review's time budget.
MAX_SOURCES = 50
#: Most characters in one source's text: the same default bound as ``output.content``.
MAX_SOURCE_CHARS = 200_000


class Source(WireModel):
    """One thing the node worked from: a document, a tool result, a retrieved passage.

    Untrusted data, like the output: grounding checks compare the output with it and the
    model judges see it inside its own delimited block, never as instructions.
    """

    id: Annotated[str, Field(min_length=1, max_length=200)]
    """Unique within the request; an output cites it as ``[id]`` or by its 1-based index."""
    text: Annotated[str, Field(max_length=MAX_SOURCE_CHARS)]
    """The source's content as the node saw it."""
    title: Annotated[str, Field(max_length=1000)] | None = None
    """A human-readable title, when there is one."""
    url: Annotated[str, Field(max_length=2000)] | None = None
    """Where it came from; an output may cite it by this URL."""


#: A table or column name in a contract's catalog.
CatalogName = Annotated[str, Field(min_length=1, max_length=128, pattern=r"^[^\x00-\x1f]+$")]
#: A column's SQL type as the catalog states it (``INT``, ``VARCHAR(20)``...).
CatalogType = Annotated[str, Field(min_length=1, max_length=64)]
#: Most tables, columns per table, and columns in all, that one catalog may declare.
CATALOG_MAX_TABLES = 500
CATALOG_MAX_COLUMNS = 500
CATALOG_MAX_TOTAL_COLUMNS = 10_000
#: Most requirements one contract may declare, and the longest one.
MAX_REQUIREMENTS = 500
#: A requirement string as pip reads it (``requests>=2.31``, ``uvicorn[standard]``).
RequirementText = Annotated[str, Field(min_length=1, max_length=500)]


class OutputContract(WireModel):
    """The node's declared output contract, checked by the Floor."""

    json_schema: dict[str, Any] | bool | None = None
    """A JSON Schema (draft 2020-12) the parsed output must satisfy (json and toml outputs,
    and every document of a yaml stream).

    ``true`` and ``false`` are schemas too. A ``$ref`` must resolve within the schema (or
    to a published metaschema): remote references are never fetched. ``format`` is an
    annotation, as 2020-12 defines it by default; assert shapes with ``pattern``.
    """
    min_length: Annotated[int, Field(ge=0)] | None = None
    """Fewest characters allowed."""
    max_length: Annotated[int, Field(ge=1)] | None = None
    """Most characters allowed."""
    required_fields: tuple[Annotated[str, Field(min_length=1, max_length=200)], ...] = ()
    """Top-level keys (json, yaml, toml; dotted for nested keys), headings (markdown) or names
    (python) that must be present."""
    code_deliverable: bool = False
    """The fenced code blocks of a markdown or text output are the deliverable: a block its
    language's parser rejects fails the Floor, and so does an output with no code block.
    False: such a block is a definite Wall finding."""
    catalog: (
        Annotated[
            dict[
                CatalogName,
                Annotated[dict[CatalogName, CatalogType], Field(max_length=CATALOG_MAX_COLUMNS)],
            ],
            Field(max_length=CATALOG_MAX_TABLES),
        ]
        | None
    ) = None
    """The tables a SQL output may read: table -> column -> type. With it, unknown tables
    and columns and ambiguous unqualified columns are Floor violations (sql outputs)."""
    requirements: (
        Annotated[tuple[RequirementText, ...], Field(max_length=MAX_REQUIREMENTS)] | None
    ) = None
    """The environment the output runs in: PEP 508 requirement strings (``requests>=2.31``).
    With it, a Python output may import only these distributions, the standard library
    and its own modules: any other import is a definite finding. Null: no environment
    declared, and an import no known project provides is only suspect."""

    @field_validator("json_schema")
    @classmethod
    def _schema_is_valid(cls, value: dict[str, Any] | bool | None) -> dict[str, Any] | bool | None:
        if value is None or isinstance(value, bool):
            return value
        try:
            Draft202012Validator.check_schema(value)
            dangling = unresolvable_refs(value)
        except SchemaError as exc:
            raise ValueError(f"not a valid JSON Schema: {exc.message}") from None
        except RecursionError:
            raise ValueError("not a usable JSON Schema: nested too deeply") from None
        if dangling:
            shown = ", ".join(repr(ref[:200]) for ref in dangling[:3])
            raise ValueError(
                f"$ref that does not resolve within the schema: {shown} "
                "(remote references are never fetched; inline them under $defs)"
            )
        if loops_forever(value):
            raise ValueError("the schema refers to itself in a loop that reads nothing")
        return value

    @field_validator("requirements")
    @classmethod
    def _requirements_parse(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        for text in value or ():
            try:
                Requirement(text)
            except InvalidRequirement as exc:
                why = str(exc).splitlines()[0] if str(exc) else "unreadable"
                raise ValueError(f"{text[:100]!r} is not a requirement: {why}"[:300]) from None
        return value

    @field_validator("catalog")
    @classmethod
    def _catalog_is_bounded(
        cls, value: dict[str, dict[str, str]] | None
    ) -> dict[str, dict[str, str]] | None:
        if value is not None:
            total = sum(len(columns) for columns in value.values())
            if total > CATALOG_MAX_TOTAL_COLUMNS:
                raise ValueError(
                    f"{total} columns in all; a catalog may declare {CATALOG_MAX_TOTAL_COLUMNS}"
                )
            if any(not columns for columns in value.values()):
                raise ValueError("every table in a catalog needs at least one column")
        return value

    @model_validator(mode="after")
    def _bounds_ordered(self) -> OutputContract:
        if (
            self.min_length is not None
            and self.max_length is not None
            and self.min_length > self.max_length
        ):
            raise ValueError("min_length is greater than max_length")
        return self


class DownstreamNode(WireModel):
    """A node that consumes this node's output."""

    node_id: Identifier
    """The dependent node."""
    cost_usd: Usd
    """What running it costs; wasted if this output is bad."""
    critical: bool = False
    """Whether it lies on the DAG's critical path."""
    hops: Annotated[int, Field(ge=1, le=10_000)] = 1
    """Edges from this node to it (1: a direct consumer). The cascade probability applies
    once per hop: a bad output spoils a consumer's consumer with its square."""


class Flags(WireModel):
    """Hard escalation triggers: any one sends the node to Stage 2."""

    feeds_human_gate: bool = False
    """A human reviews what this node feeds."""
    final_deliverable: bool = False
    """The output leaves the DAG as its result."""
    irreversible: bool = False
    """The output drives an action that cannot be undone."""


class Signals(WireModel):
    """Evaluator signals gathered outside the fleet (0..1 each)."""

    self_: Unit | None = Field(default=None, alias="self")
    """The producing agent's own assessment; a process self-check, never quality."""
    peer: Unit | None = None
    """A separate judge agent's score."""
    downstream: Unit | None = None
    """The consuming node's report of usability."""
    human: Unit | None = None
    """A human's score, at human gates."""
    peer_has_expertise: bool = False
    """The peer evaluator has domain expertise for this output."""
    peer_reliability: Unit | None = None
    """The peer evaluator's historical agreement with outcomes."""


class ReviewRequest(WireModel):
    """One node's finished output, sent for review."""

    dag_id: Identifier
    """The DAG run; results go to this DAG's stream."""
    node_id: Identifier
    """The node within the DAG."""
    attempt: Annotated[int, Field(ge=1, le=1000)] = 1
    """1-based execution attempt of this node."""
    max_iterations: Annotated[int, Field(ge=1, le=100)] = 3
    """How many attempts the node may make before a human must step in."""
    skill: Skill
    """The skill that produced the output."""
    output: NodeOutput
    """What the node produced."""
    task: Annotated[str, Field(max_length=MAX_SOURCE_CHARS)] | None = None
    """The node's instruction, when known, as its prompt read: material pasted into it (a
    document, a passage, knowledge) is input like ``sources``, and the ask around it is
    what the Ceiling scores relevance against."""
    contract: OutputContract | None = None
    """The declared output contract, if any."""
    node_cost_usd: Usd = 0.0
    """What producing this output cost; caps the downstream waste at 5x."""
    downstream: tuple[DownstreamNode, ...] = ()
    """Nodes that consume this output, transitively. Empty: the fleet derives them from
    the DAG the runtime registered, if it did (a list sent here always wins)."""
    cascade_probability: Unit = 0.6
    """Chance a bad output spoils a consumer, once per hop."""
    stage2_cost_usd: Usd | None = None
    """Cost of a Stage 2 review; estimated from pricing and size when absent."""
    flags: Flags = Flags()
    """Hard escalation triggers."""
    signals: Signals | None = None
    """External evaluator signals."""
    history: tuple[Unit, ...] = Field(default=(), max_length=100)
    """Quality scores of earlier attempts, oldest first."""
    node_elapsed_s: NonNegative | None = None
    """How long the node ran."""
    node_timeout_s: Annotated[float, Field(gt=0.0, allow_inf_nan=False)] | None = None
    """The node's time budget; with ``node_elapsed_s`` it gives the timeout margin."""
    baseline: NodeOutput | None = None
    """A reference or earlier output to compare against pairwise (both orders)."""
    sources: tuple[Source, ...] = Field(default=(), max_length=MAX_SOURCES)
    """What the node worked from; with ``task`` it is the node's input, and grounding
    checks compare the output with it. Without sources those checks do not run."""
    grounding: GroundingPolicy | None = None
    """How closely the output must keep to its input (``sources`` and material pasted
    into ``task``). Null: inferred from what the node was asked; the result says which
    policy was used and why."""

    @field_validator("sources")
    @classmethod
    def _source_ids_unique(cls, value: tuple[Source, ...]) -> tuple[Source, ...]:
        seen: set[str] = set()
        for source in value:
            if source.id in seen:
                raise ValueError(f"source id {source.id!r} occurs more than once")
            seen.add(source.id)
        return value

    @property
    def review_key(self) -> str:
        """The identity of one review: exactly one result per key reaches the stream."""
        return review_key(self.dag_id, self.node_id, self.attempt)

    @property
    def feeds_critical_path(self) -> bool:
        """Whether any consumer of this output is on the critical path."""
        return any(node.critical for node in self.downstream)


def review_key(dag_id: str, node_id: str, attempt: int) -> str:
    """The identity of one review (DAG, node, attempt): spelled here and nowhere else."""
    return f"{dag_id}:{node_id}:{attempt}"
