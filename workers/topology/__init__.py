"""A DAG as its runtime registers it: validated once, indexed, and read for economics.

Pure: no Redis, Celery or network (a test proves it). The registry that keeps shapes in
Redis is ``workers.results.dags``; the fold of a DAG's results into its progress is
``workers.topology.progress``.
"""

from workers.topology.derive import (
    NodeEconomics,
    all_economics,
    consumers,
    frontiers,
    with_derived_downstream,
)
from workers.topology.errors import (
    DagCycleError,
    DagVersionError,
    DuplicateDagNodeError,
    InvalidDag,
    OversizedDagError,
    UnknownDagNodeError,
)
from workers.topology.graph import Topology
from workers.topology.intake import dag_from_obj, decode_dag

__all__ = [
    "DagCycleError",
    "DagVersionError",
    "DuplicateDagNodeError",
    "InvalidDag",
    "NodeEconomics",
    "OversizedDagError",
    "Topology",
    "UnknownDagNodeError",
    "all_economics",
    "consumers",
    "dag_from_obj",
    "decode_dag",
    "frontiers",
    "with_derived_downstream",
]
