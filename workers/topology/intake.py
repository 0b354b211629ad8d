"""Decoding a DAG shape from untrusted bytes, with typed errors naming the node or edge."""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from schemas.topology import (
    MAX_DAG_BYTES,
    MAX_DAG_EDGES,
    MAX_DAG_NODES,
    DagCycle,
    DagProblem,
    DagShape,
    DuplicateEdge,
    DuplicateNode,
    UnknownNode,
)
from workers.errors import InvalidRequest
from workers.intake import OversizedRequest, check_json_value
from workers.topology.errors import (
    DagCycleError,
    DuplicateDagNodeError,
    InvalidDag,
    OversizedDagError,
    UnknownDagNodeError,
)

_BOUNDS = {"nodes": MAX_DAG_NODES, "edges": MAX_DAG_EDGES}


def decode_dag(raw: str | bytes, *, max_bytes: int = MAX_DAG_BYTES) -> DagShape:
    """Parse and validate one DAG shape.

    Raises:
        OversizedDagError: more than ``max_bytes`` of text, or too many nodes or edges.
        DagCycleError, UnknownDagNodeError, DuplicateDagNodeError: not a DAG, naming where.
        InvalidDag: any other departure from the wire model, naming the field.
    """
    size = len(raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw)
    if size > max_bytes:
        raise OversizedDagError("", f"the shape is {size} bytes; the limit is {max_bytes}")
    try:
        return DagShape.model_validate_json(raw)
    except ValidationError as exc:
        raise _typed(exc) from None
    except RecursionError:
        raise InvalidDag("", "nesting too deep") from None


def dag_from_obj(obj: Any, *, max_bytes: int = MAX_DAG_BYTES) -> DagShape:
    """Validate a decoded JSON value (a dict from a file or a caller) the same strict way."""
    if isinstance(obj, DagShape):
        return obj
    try:
        check_json_value(obj, max_values=max_bytes)
        text = json.dumps(obj, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidDag("", f"not JSON: {exc}") from None
    except OversizedRequest as exc:
        raise OversizedDagError(exc.field, exc.reason) from None
    except InvalidRequest as exc:
        raise InvalidDag(exc.field, exc.reason) from None
    return decode_dag(text, max_bytes=max_bytes)


def _typed(exc: ValidationError) -> InvalidDag:
    first = exc.errors(include_url=False)[0]
    problem = first.get("ctx", {}).get("error")
    if isinstance(problem, DagProblem):
        return _of_problem(problem)
    loc = [str(part) for part in first["loc"]]
    field = ".".join(loc) or "(dag)"
    if first["type"] == "too_long" and len(loc) == 1 and loc[0] in _BOUNDS:
        count = first.get("ctx", {}).get("actual_length")
        return OversizedDagError(field, f"{count} {loc[0]}; a DAG may have {_BOUNDS[loc[0]]}")
    if first["type"] == "extra_forbidden":
        return InvalidDag(field, "unknown field")
    if first["type"] == "missing":
        return InvalidDag(field, "required field is missing")
    return InvalidDag(field, first["msg"])


def _of_problem(problem: DagProblem) -> InvalidDag:
    if isinstance(problem, DagCycle):
        return DagCycleError(problem.field, problem.message, problem.cycle)
    if isinstance(problem, UnknownNode):
        return UnknownDagNodeError(problem.field, problem.message, problem.node_id)
    if isinstance(problem, DuplicateNode | DuplicateEdge):
        return DuplicateDagNodeError(problem.field, problem.message)
    return InvalidDag(problem.field, problem.message)
