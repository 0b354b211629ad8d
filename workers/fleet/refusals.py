"""Error entries: a request refused as invalid, or a review given up on (dead-lettered).

Nothing a queue delivers vanishes: whatever cannot be reviewed leaves an entry on its
DAG's stream (or the unroutable stream) that says why.
"""

from __future__ import annotations

import json

from schemas.hops import ReviewIdentity
from schemas.result import ErrorCode, ReviewError
from workers.errors import InvalidRequest
from workers.fleet.deps import Deps
from workers.fleet.tries import digest
from workers.intake import OversizedRequest, identity_of
from workers.keys import UNROUTABLE_DAG

#: Whose an entry is: a known identity, or a body to read one from (best effort).
About = ReviewIdentity | str


def as_text(raw: object) -> str:
    """``raw`` itself when text; else its JSON (a producer may send any JSON value)."""
    return raw if isinstance(raw, str) else json.dumps(raw, default=repr)


def invalid_key(raw: str) -> str:
    """The dedup key of the error entry that refuses one request body."""
    return f"invalid:{digest(raw)}"


def refuse(raw: str, exc: InvalidRequest, deps: Deps, *, about: About | None = None) -> None:
    """Publish an ``invalid_request`` (or ``oversized``) entry for ``raw``, once per body."""
    code = ErrorCode.OVERSIZED if isinstance(exc, OversizedRequest) else ErrorCode.INVALID_REQUEST
    error = _entry(raw if about is None else about, code, exc.reason, field=exc.field or None)
    deps.stream.publish_error(error, review_key=invalid_key(raw), raw=raw)


def dead_letter(
    raw: str, identity: str, message: str, tries: int, deps: Deps, *, about: About | None = None
) -> None:
    """Publish a ``poison`` entry for ``identity`` and copy the body to the dead letters."""
    error = _entry(raw if about is None else about, ErrorCode.POISON, message, tries=tries)
    # The invalid-request entry went to the DAG the body names, or the one its refusal was
    # told of: its dedup key is in that DAG's slot on a cluster.
    refused = invalid_key(raw)
    dags = (identity_of(raw)[0], error.dag_id)
    marks = {deps.keys.published(refused, dag or UNROUTABLE_DAG) for dag in dags}
    if any(deps.redis.exists(mark) for mark in marks):
        return  # the same body, resent, was already answered with an invalid-request entry
    deps.stream.publish_error(error, review_key=identity, raw=raw, dead_letter=True)


def _entry(
    about: About, code: ErrorCode, message: str, *, field: str | None = None, tries: int = 1
) -> ReviewError:
    dag: str | None
    node: str | None
    attempt: int | None
    if isinstance(about, ReviewIdentity):
        dag, node, attempt = about.dag_id, about.node_id, about.attempt
    else:
        dag, node, attempt = identity_of(about)
    return ReviewError(
        dag_id=dag,
        node_id=node,
        attempt=attempt,
        code=code,
        field=field,
        message=message,
        tries=tries,
    )
