"""Gate a LangGraph DAG with the fleet: plan -> draft -> publish, each node reviewed.

Stand-in agents, no model: each node's attempts are fixed, so the run shows the loop as
dag-quality.md draws it. ``plan`` plateaus (its rewrite is no better) and the best attempt
is kept; ``draft`` fails the Floor (a required field is missing) and its second attempt,
made from the feedback, is accepted; ``publish`` goes to a person (its two reviewers
disagree), and the person's verdict resumes the graph.

Needs a running fleet on ``WINDAGS_REDIS_URL`` with ``WINDAGS_KEY_PREFIX`` (``windags-eval
fleet``) and the extra (``pip install -e '.[langgraph]'``). With ``--checkpoints FILE``
the graph's checkpoints go to SQLite: stop the script at any point and run it again with
the same ``--thread`` and it goes on from where it was, asking the fleet nothing twice.

Exits 0 when the loop behaved as the seed says, 1 when it did not, 2 on a bad setting.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import START, StateGraph

from schemas.request import OutputKind
from workers.client import AsyncReviewClient
from workers.errors import ConfigurationError
from workers.runtime.langgraph_gate import (
    END,
    GatedState,
    QualityGate,
    gate_attempt,
    gate_feedback,
    person_resume,
)
from workers.settings import Settings, load_settings

BRIEF = "Release note for version 2.4 of the billing service"
#: The planner's attempts: the second follows the feedback, and is no better for it.
PLANS = (
    "# Release note plan\n\n"
    "1. Open with the headline change: invoices now show tax per line.\n"
    "2. List the two fixes: rounding of refunds, and the duplicate reminder e-mail.\n"
    "3. Close with the upgrade step: run the migration before restarting the workers.\n",
    "# Release note plan\n\n"
    "1. Open with the headline change: invoices now show tax per line.\n"
    "2. List the two fixes: rounding of refunds, and the duplicate reminder e-mail.\n"
    "3. Add a line on who asked for per-line tax.\n"
    "4. Close with the upgrade step: run the migration before restarting the workers.\n",
)
#: What the plan's two outside reviewers (a peer planner, the drafting node) score each.
PLAN_SIGNALS = {PLANS[0]: (0.70, 0.72), PLANS[1]: (0.69, 0.71)}
#: The drafter fills in any field the feedback names from these.
DRAFT_FIELDS = {
    "title": "Billing 2.4",
    "summary": "Invoices show tax per line; two fixes; one upgrade step.",
    "changes": ["Invoices show tax per line", "Refund rounding fixed", "No duplicate reminders"],
}


class Release(GatedState, total=False):
    """The graph's state: the brief, each node's output, and the gates' records."""

    brief: str
    plan: str
    draft: str
    published: str


async def plan(state: Release) -> dict[str, Any]:
    """The planner: its first plan, then a rewrite that follows the feedback."""
    attempt = gate_attempt(state, "plan")
    return {"plan": PLANS[min(attempt, len(PLANS)) - 1]}


async def draft(state: Release) -> dict[str, Any]:
    """The drafter: forgets the summary at first, then adds every field the feedback names."""
    fields: dict[str, Any] = {"title": DRAFT_FIELDS["title"], "changes": DRAFT_FIELDS["changes"]}
    feedback = gate_feedback(state, "draft")
    for issue in feedback.specific_issues if feedback else ():
        if issue.field in DRAFT_FIELDS:
            fields[issue.field] = DRAFT_FIELDS[issue.field]
    return {"draft": json.dumps(fields)}


async def publish(state: Release) -> dict[str, Any]:
    """The publisher: the release note as Markdown, from the accepted draft."""
    body = json.loads(state["draft"])
    changes = "\n".join(f"- {change}" for change in body["changes"])
    return {"published": f"# {body['title']}\n\n{body['summary']}\n\n{changes}\n"}


def skill(name: str) -> dict[str, Any]:
    """A seasoned skill: the fleet's escalation prior stays low."""
    return {"id": name, "success_rate": 0.95, "stage": "expert"}


def plan_request(state: Mapping[str, Any], content: str) -> dict[str, Any]:
    """The plan's request, with what its two outside reviewers scored this plan."""
    peer, downstream = PLAN_SIGNALS.get(content, (0.5, 0.5))
    return {
        "skill": skill("planner"),
        "task": f"Plan the {BRIEF.lower()}",
        "node_cost_usd": 0.01,
        "downstream": [{"node_id": "draft", "cost_usd": 0.02}],
        "signals": {"peer": peer, "downstream": downstream},
    }


def draft_request(state: Mapping[str, Any], content: str) -> dict[str, Any]:
    """The draft's request: its contract names the fields the Floor requires."""
    return {
        "skill": skill("writer"),
        "task": "Draft the release note from the plan",
        "node_cost_usd": 0.01,
        "downstream": [{"node_id": "publish", "cost_usd": 0.02}],
        "contract": {"required_fields": ["title", "summary", "changes"]},
    }


def publish_request(state: Mapping[str, Any], content: str) -> dict[str, Any]:
    """The fact-checker likes the note, the channel's editor does not: a person must look."""
    return {
        "skill": skill("publisher"),
        "task": "Publish the release note",
        "node_cost_usd": 0.01,
        "signals": {"peer": 0.9, "downstream": 0.4},
    }


def build(client: AsyncReviewClient) -> StateGraph[Any, Any, Any, Any]:
    """The graph: plan -> draft -> publish, each node followed by its gate."""
    builder = StateGraph(Release)
    builder.add_node("plan", plan)
    builder.add_node("draft", draft)
    builder.add_node("publish", publish)
    builder.add_edge(START, "plan")
    gates = (
        ("plan", "draft", "plan", OutputKind.MARKDOWN, plan_request),
        ("draft", "publish", "draft", OutputKind.JSON, draft_request),
        ("publish", END, "published", OutputKind.MARKDOWN, publish_request),
    )
    for node, then, key, kind, request in gates:
        QualityGate(client, node, then, key, kind, request, review_timeout_s=120).add_to(builder)
    return builder


@asynccontextmanager
async def checkpointer(path: Path | None) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """SQLite checkpoints in ``path`` (they outlive the process), else in memory."""
    if path is None:
        yield InMemorySaver()
        return
    async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
        yield saver


async def run(
    settings: Settings, thread: str, checkpoints: Path | None, person_timeout_s: float
) -> dict[str, Any]:
    """Run (or resume) the graph of ``thread`` to its end; its final state."""
    async with AsyncReviewClient(settings) as client, checkpointer(checkpoints) as saver:
        graph = build(client).compile(checkpointer=saver)
        config: Any = {"configurable": {"thread_id": thread}}
        snapshot = await graph.aget_state(config)
        if snapshot.next:
            print(f"resuming {thread} at {', '.join(snapshot.next)}", flush=True)
            state = await graph.ainvoke(None, config)
        else:
            state = await graph.ainvoke({"brief": BRIEF}, config)
        while interrupts := state.get("__interrupt__"):
            asking = interrupts[0].value
            where = f"{asking['dag_id']} {asking['node_id']} {asking['attempt']}"
            print(
                f"{asking['node_id']} waits for a person ({asking['why']}): "
                f"windags-eval verdict {where} --accept --reviewer YOU",
                flush=True,
            )
            resume = await person_resume(client, asking, timeout=person_timeout_s)
            state = await graph.ainvoke(resume, config)
        print(f"this run sent {client.sent} review(s); {client.found} already had a verdict")
        return dict(state)


def report(state: Mapping[str, Any]) -> list[str]:
    """A line per node, and what did not go as the seed says (empty when all did)."""
    gates = state.get("gates", {})
    for node in ("plan", "draft", "publish"):
        record = gates.get(node, {})
        tried = ", ".join(
            f"{a['attempt']}: {a['decision']} ({a['basis']['dimension']} {a['basis']['score']:.2f})"
            for a in record.get("attempts", [])
        )
        person = record.get("person")
        by = f" by {person['reviewer']}" if person else ""
        print(f"{node:8} {tried}  -> {record.get('stop')}{by}, kept {record.get('kept_attempt')}")
    return expectations_missed(state)


def expectations_missed(state: Mapping[str, Any]) -> list[str]:
    """Each claim of the seed this run did not bear out."""
    gates = state.get("gates", {})
    plan_, draft_, publish_ = (gates.get(n, {}) for n in ("plan", "draft", "publish"))
    checks = {
        "plan plateaus and keeps its best (first) attempt": plan_.get("stop") == "plateau"
        and plan_.get("kept_attempt") == 1
        and state.get("plan") == PLANS[0],
        "draft fails the Floor, then is accepted from the feedback": [
            a["decision"] for a in draft_.get("attempts", [])
        ]
        == ["iterate", "accept"]
        and draft_["attempts"][0]["basis"]["dimension"] == "structure",
        "publish is accepted by a person": publish_.get("stop") == "person_accepted",
        "the graph ran to its end": bool(state.get("published")),
    }
    return [claim for claim, held in checks.items() if not held]


def main(argv: list[str] | None = None) -> int:
    """Run the example; its exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--thread", default=f"release-{uuid.uuid4().hex[:8]}")
    parser.add_argument("--checkpoints", type=Path, default=None, help="a SQLite file")
    parser.add_argument("--person-timeout", type=float, default=3600.0, help="seconds")
    args = parser.parse_args(argv)
    try:
        settings = load_settings()
    except ConfigurationError as exc:
        print(f"bad settings: {exc}", file=sys.stderr)
        return 2
    state = asyncio.run(run(settings, args.thread, args.checkpoints, args.person_timeout))
    missed = report(state)
    for claim in missed:
        print(f"NOT AS THE SEED SAYS: {claim}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
