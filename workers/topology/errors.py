"""Why a DAG cannot be registered: typed, each naming the node, edge or version at fault."""

from __future__ import annotations

from workers.errors import EvaluatorError


class InvalidDag(EvaluatorError):
    """A DAG shape that does not match its wire model or is not a DAG.

    Attributes:
        field: dotted path of the offending node or edge (``"edges.3.consumer"``).
        reason: what is wrong with it, one line.
    """

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}" if field else reason)
        self.field = field
        self.reason = reason


class DagCycleError(InvalidDag):
    """The edges close a loop; ``cycle`` lists it, each node feeding the next."""

    def __init__(self, field: str, reason: str, cycle: tuple[str, ...]) -> None:
        super().__init__(field, reason)
        self.cycle = cycle


class UnknownDagNodeError(InvalidDag):
    """An edge names a node the shape does not list; ``node_id`` is that name."""

    def __init__(self, field: str, reason: str, node_id: str) -> None:
        super().__init__(field, reason)
        self.node_id = node_id


class DuplicateDagNodeError(InvalidDag):
    """Two nodes share an id, or one edge is listed twice."""


class OversizedDagError(InvalidDag):
    """More nodes, edges or bytes than a registered DAG may have."""


class DagVersionError(EvaluatorError):
    """A registration the stored version refuses.

    An older version, or the same version with a different shape (a changed DAG needs a
    new version).

    Attributes:
        dag_id: the DAG.
        stored: the version registered now.
        offered: the version refused.
    """

    def __init__(self, dag_id: str, stored: int, offered: int, reason: str) -> None:
        super().__init__(f"{dag_id}: version {offered} refused: {reason}")
        self.dag_id = dag_id
        self.stored = stored
        self.offered = offered
