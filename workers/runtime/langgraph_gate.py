"""A quality gate after a LangGraph node: the fleet reviews its output before it flows on.

``QualityGate(...).add_to(builder)`` wires ``node -> <node>__review -> then``: on
``iterate`` the review routes back into ``node`` with the feedback in the graph's state
(``gate_feedback``, ``gate_attempt``); on a plateau or a decline it puts the best
attempt's output back in the state and goes on; when a person must decide it routes to
``<node>__person``, which calls ``interrupt()`` with the verdict as its JSON payload. The
runtime resumes the graph with ``Command(resume=...)`` carrying the person's decision as
recorded on the review page or with ``windags-eval verdict``: ``person_resume`` reads it
from the stream.

Safe across resume and retries: a node re-runs from its start on resume, and a review
node re-submits its attempt, which the fleet already has (same review key), so the
verdict answers at once and nothing is reviewed twice. The person node is free of side
effects and never catches ``GraphInterrupt``. Bounds come from the gate (the request's
``max_iterations`` and the fleet's convergence), not from ``recursion_limit``.

Needs the ``langgraph`` extra: ``pip install 'windags-evaluator[langgraph]'``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, TypedDict, TypeVar, cast

from schemas.base import WireModel
from schemas.decisions import Feedback
from schemas.human import HumanDecision, HumanVerdict
from schemas.request import OutputKind, ReviewRequest, review_key
from schemas.result import ReviewResult
from workers.runtime.loop import Action, Reviewer, Step, after_person, next_step
from workers.runtime.verdicts import PersonDecided

try:
    from langchain_core.runnables import RunnableConfig
    from langgraph.graph import END, StateGraph
    from langgraph.types import Command, interrupt
except ImportError as exc:  # pragma: no cover - the core install has no langgraph
    raise ImportError(
        "the LangGraph gate needs the extra: pip install 'windags-evaluator[langgraph]'"
    ) from exc

__all__ = [
    "END",
    "GatedState",
    "QualityGate",
    "gate_attempt",
    "gate_feedback",
    "merge_gates",
    "person_resume",
]

W = TypeVar("W", bound=WireModel)
#: Builds a node's request fields from the state and the output's content (skill, costs,
#: downstream, contract, signals...); the gate fills in dag_id, node_id, attempt, output.
RequestFields = Callable[[Mapping[str, Any], str], Mapping[str, Any]]


def merge_gates(
    left: dict[str, dict[str, Any]] | None, right: dict[str, dict[str, Any]] | None
) -> dict[str, dict[str, Any]]:
    """The ``gates`` channel's reducer: each gate replaces its own record."""
    return {**(left or {}), **(right or {})}


class GatedState(TypedDict, total=False):
    """Put this in a graph's state (subclass it): the gates' records, by gated node.

    A record is plain JSON, so any checkpointer stores it: ``attempt`` (the next one),
    ``feedback``, ``attempts`` (content, decision, score of each), ``stop``,
    ``kept_attempt`` and, while a person decides, ``asking``.
    """

    gates: Annotated[dict[str, dict[str, Any]], merge_gates]


def gate_attempt(state: Mapping[str, Any], node: str) -> int:
    """The attempt ``node`` is making now (1-based)."""
    return int(_record(state, node).get("attempt", 1))


def gate_feedback(state: Mapping[str, Any], node: str) -> Feedback | None:
    """The feedback ``node``'s next attempt must act on: the fleet's, or a person's."""
    raw = _record(state, node).get("feedback")
    return _wire(Feedback, raw) if raw is not None else None


def _record(state: Mapping[str, Any], node: str) -> dict[str, Any]:
    return dict((state.get("gates") or {}).get(node) or {})


@dataclass(frozen=True)
class QualityGate:
    """The fleet's review after ``node``, looping back into it until the verdict says go.

    ``output_key``: the state key where ``node`` writes its output's content (a string
    of ``kind``). ``request``: the rest of the node's review request. The DAG id is the
    run's ``thread_id``, so the review keys (``thread:node:attempt``) are the run's own.
    """

    client: Reviewer
    node: str
    then: str
    output_key: str
    kind: OutputKind
    request: RequestFields
    review_timeout_s: float = 120.0

    @property
    def review_node(self) -> str:
        """The name of the node that reviews ``node``'s output."""
        return f"{self.node}__review"

    @property
    def person_node(self) -> str:
        """The name of the node where a person decides."""
        return f"{self.node}__person"

    def add_to(self, builder: StateGraph[Any, Any, Any, Any]) -> None:
        """Add the review and person nodes after ``node`` (which must be in ``builder``)."""
        builder.add_node(
            self.review_node, self._review, destinations=(self.node, self.then, self.person_node)
        )
        builder.add_node(self.person_node, self._person, destinations=(self.node, self.then, END))
        builder.add_edge(self.node, self.review_node)

    # The nodes take the graph's whole state: LangGraph narrows a node's input to the
    # schema its annotation names, so ``state`` is not annotated as ``GatedState``.
    async def _review(self, state: Any, config: RunnableConfig) -> Command[str]:
        view = cast(Mapping[str, Any], state)
        record = _record(view, self.node)
        attempt = int(record.get("attempt", 1))
        content = str(view[self.output_key])
        request = self._request_for(view, config, attempt, content)
        result = await self.client.review(request, timeout=self.review_timeout_s)
        record["attempts"] = [*record.get("attempts", []), _summary(result, content)]
        step = next_step(result, max_iterations=request.max_iterations)
        if step.action is Action.PERSON:
            record["asking"] = _question(request, result, step)
            return Command(goto=self.person_node, update={"gates": {self.node: record}})
        return self._follow(step, record)

    def _person(self, state: Any) -> Command[str]:
        record = _record(cast(Mapping[str, Any], state), self.node)
        asking = record["asking"]
        # interrupt() raises GraphInterrupt until resumed: nothing here may catch it.
        answer = interrupt(asking)
        decided = _decided(answer, asking)
        record.pop("asking", None)
        verdict = decided.verdict
        record["person"] = {"reviewer": verdict.reviewer, "action": verdict.action.value}
        return self._follow(after_person(decided), record)

    def _follow(self, step: Step, record: dict[str, Any]) -> Command[str]:
        """Route by ``step``; an accepted earlier attempt's output goes back in the state."""
        if step.action is Action.RETRY:
            record["attempt"] = int(record.get("attempt", 1)) + 1
            record["feedback"] = step.feedback.model_dump(mode="json") if step.feedback else None
            return Command(goto=self.node, update={"gates": {self.node: record}})
        stop = step.stop.value if step.stop else None
        record.update(stop=stop, kept_attempt=step.keep_attempt, feedback=None)
        if step.action is Action.STOP:
            return Command(goto=END, update={"gates": {self.node: record}})
        kept = next(a for a in record["attempts"] if a["attempt"] == step.keep_attempt)
        return Command(
            goto=self.then,
            update={"gates": {self.node: record}, self.output_key: kept["content"]},
        )

    def _request_for(
        self, state: Mapping[str, Any], config: RunnableConfig, attempt: int, content: str
    ) -> ReviewRequest:
        thread = (config.get("configurable") or {}).get("thread_id")
        if not thread:
            raise ValueError("a gated graph runs with a checkpointer and a thread_id")
        fields = {
            **self.request(state, content),
            "dag_id": str(thread),
            "node_id": self.node,
            "attempt": attempt,
            "output": {"kind": self.kind.value, "content": content},
        }
        # The client checks the deployment's size limits when it submits.
        return _wire(ReviewRequest, fields)


def _wire(model: type[W], value: Any) -> W:
    """``value`` (JSON kept in the graph's state) as the strict wire model, as JSON decodes."""
    return model.model_validate_json(json.dumps(value))


def _summary(result: ReviewResult, content: str) -> dict[str, Any]:
    return {
        "attempt": result.attempt,
        "content": content,
        "decision": result.decision.value,
        "basis": result.basis.model_dump(mode="json"),
        "trend": result.convergence.trend.value,
    }


def _question(request: ReviewRequest, result: ReviewResult, step: Step) -> dict[str, Any]:
    """The interrupt's JSON payload: which attempt waits, why, and the fleet's verdict."""
    return {
        "dag_id": request.dag_id,
        "node_id": request.node_id,
        "attempt": request.attempt,
        "review_key": request.review_key,
        "why": step.stop.value if step.stop else None,
        "verdict": result.model_dump(mode="json", by_alias=True),
    }


def _decided(answer: Any, asking: Mapping[str, Any]) -> PersonDecided:
    """The resume value as a person's verdict on the very attempt that was asked about."""
    if not isinstance(answer, Mapping):
        raise TypeError(f"resume with person_resume(...)'s value, not {type(answer).__name__}")
    decided = PersonDecided(
        _wire(HumanVerdict, answer["verdict"]), _wire(HumanDecision, answer["decision"])
    )
    asked = review_key(asking["dag_id"], asking["node_id"], asking["attempt"])
    got = review_key(decided.decision.dag_id, decided.decision.node_id, decided.decision.attempt)
    if got != asked:
        raise ValueError(f"the resume value decides {got}, but the graph asked about {asked}")
    return decided


async def person_resume(
    client: Reviewer, asking: Mapping[str, Any], *, timeout: float
) -> Command[Any]:
    """``Command(resume=...)`` with the person's verdict on the attempt ``asking`` names.

    ``asking`` is the interrupt's value; the verdict is read from the DAG's stream
    (``wait_for_person``), whether it was recorded on the review page, with
    ``windags-eval verdict`` or through ``record_verdict``.
    """
    decided = await client.wait_for_person(
        asking["dag_id"], asking["node_id"], int(asking["attempt"]), timeout=timeout
    )
    return Command(
        resume={
            "verdict": decided.verdict.model_dump(mode="json"),
            "decision": decided.decision.model_dump(mode="json"),
        }
    )
