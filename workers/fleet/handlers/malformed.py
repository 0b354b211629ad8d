"""A task called with arguments its handler cannot take (another producer's bug)."""

from __future__ import annotations

from workers.errors import InvalidRequest
from workers.fleet.deps import Deps
from workers.fleet.guard import Job, guarded
from workers.fleet.next_hop import Outcome
from workers.fleet.queues import Queue
from workers.fleet.refusals import as_text, dead_letter, refuse
from workers.fleet.tries import TryCount, digest
from workers.intake import identity_of

#: What each task takes, for the error entry of a call that does not match.
SIGNATURES = {
    Queue.STAGE1: "1 argument (the request's JSON text)",
    Queue.ROUTER: "3 arguments (the review's identity, the request, the Stage 1 report; JSON)",
    Queue.STAGE2: "3 arguments (the review's identity, the request, the routed review; JSON)",
}


def handle_malformed(
    stage: Queue, args: tuple[object, ...], kwargs: dict[str, object], deps: Deps
) -> Outcome:
    """Answer a misfit call with an error entry, never a silent drop.

    Stage 1 answers with an ``invalid_request`` entry; router and stage2, whose
    arguments only the fleet produces, dead-letter the call as ``poison`` on its first
    try, since no retry can mend an argument list. Either entry is keyed by a digest of
    the arguments, never by a review key: a well-formed task of the same review still
    publishes its result. It goes to the stream of the first DAG an argument names.
    """
    # The call itself is the body: its digest, task included, keys the entry.
    raw = as_text({"task": stage.value, "args": list(args), "kwargs": kwargs})
    about = next((text for text in map(as_text, args) if identity_of(text)[0]), raw)
    got = f"{len(args)} argument(s)" + (f" and keywords {sorted(kwargs)}" if kwargs else "")
    reason = f"the {stage.value} task takes {SIGNATURES[stage]}, got {got}"
    job = Job(stage, digest(raw), raw)

    def work(_: TryCount) -> Outcome:
        if stage is Queue.STAGE1:
            refuse(raw, InvalidRequest("(arguments)", reason), deps, about=about)
        else:
            dead_letter(raw, job.identity, reason, 1, deps, about=about)
        return None

    return guarded(job, deps, work)
