"""A DAG shape is validated once, at registration: every refusal is typed and says where."""

from __future__ import annotations

import json
from typing import Any

import pytest

from schemas.export import EXPORTS, render
from schemas.topology import MAX_DAG_EDGES, MAX_DAG_NODES, DagShape
from workers.topology import (
    DagCycleError,
    DuplicateDagNodeError,
    InvalidDag,
    OversizedDagError,
    UnknownDagNodeError,
    dag_from_obj,
    decode_dag,
)


def shape(nodes: list[str], edges: list[tuple[str, str]], **extra: Any) -> dict[str, Any]:
    return {
        "dag_id": "d",
        "nodes": [{"node_id": n, "cost_usd": 0.01, "duration_s": 1.0} for n in nodes],
        "edges": [{"producer": a, "consumer": b} for a, b in edges],
        **extra,
    }


def test_a_valid_shape_round_trips_through_its_json() -> None:
    body = shape(["a", "b", "c"], [("a", "b"), ("b", "c")], budget_usd=2.5)
    body["deadline"] = "2026-12-03T18:00:00+01:00"
    parsed = dag_from_obj(body)
    assert decode_dag(parsed.model_dump_json()) == parsed
    assert (parsed.version, parsed.schema_version, parsed.budget_usd) == (1, 1, 2.5)
    assert parsed.deadline is not None and parsed.deadline.utcoffset() is not None


def test_a_cycle_names_the_edge_that_closes_it_and_the_whole_loop() -> None:
    body = shape(["a", "b", "c", "d"], [("a", "b"), ("b", "c"), ("c", "d"), ("d", "b")])
    with pytest.raises(DagCycleError) as caught:
        dag_from_obj(body)
    assert caught.value.cycle == ("b", "c", "d")
    assert caught.value.field == "edges.3"  # d -> b closes it
    assert "b -> c -> d -> b" in str(caught.value)


def test_a_node_feeding_itself_is_a_cycle_of_one() -> None:
    with pytest.raises(DagCycleError) as caught:
        dag_from_obj(shape(["a", "b"], [("a", "b"), ("b", "b")]))
    assert (caught.value.cycle, caught.value.field) == (("b",), "edges.1")


def test_an_edge_to_an_unknown_node_names_the_edge_end_and_the_node() -> None:
    with pytest.raises(UnknownDagNodeError) as caught:
        dag_from_obj(shape(["a", "b"], [("a", "b"), ("a", "ghost")]))
    assert (caught.value.field, caught.value.node_id) == ("edges.1.consumer", "ghost")
    with pytest.raises(UnknownDagNodeError) as caught:
        dag_from_obj(shape(["a"], [("nobody", "a")]))
    assert (caught.value.field, caught.value.node_id) == ("edges.0.producer", "nobody")


def test_a_node_listed_twice_or_an_edge_repeated_is_refused_naming_both() -> None:
    with pytest.raises(DuplicateDagNodeError) as caught:
        dag_from_obj(shape(["a", "b", "a"], []))
    assert caught.value.field == "nodes.2.node_id" and "nodes.0" in str(caught.value)
    with pytest.raises(DuplicateDagNodeError) as caught:
        dag_from_obj(shape(["a", "b"], [("a", "b"), ("a", "b")]))
    assert caught.value.field == "edges.1" and "edges.0" in str(caught.value)


def test_too_many_nodes_or_edges_or_bytes_is_oversized() -> None:
    many = [f"n{i}" for i in range(MAX_DAG_NODES + 1)]
    with pytest.raises(OversizedDagError) as caught:
        dag_from_obj(shape(many, []))
    assert caught.value.field == "nodes" and str(MAX_DAG_NODES) in str(caught.value)
    nodes = [f"n{i}" for i in range(300)]
    edges = [(f"n{i}", f"n{j}") for i in range(300) for j in range(i + 1, 300)]
    assert len(edges) > MAX_DAG_EDGES
    with pytest.raises(OversizedDagError) as caught:
        dag_from_obj(shape(nodes, edges))
    assert caught.value.field == "edges"
    with pytest.raises(OversizedDagError):
        decode_dag(json.dumps(shape(["a"], [])), max_bytes=50)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"nodes": []}, "nodes"),
        ({"version": 0}, "version"),
        ({"colour": "red"}, "colour"),
        ({"deadline": "2026-12-03T18:00:00"}, "deadline"),  # no time zone
        ({"budget_usd": -1.0}, "budget_usd"),
    ],
)
def test_other_departures_from_the_wire_model_name_their_field(
    change: dict[str, Any], field: str
) -> None:
    with pytest.raises(InvalidDag) as caught:
        dag_from_obj({**shape(["a"], []), **change})
    assert caught.value.field == field
    assert not isinstance(caught.value, DagCycleError | UnknownDagNodeError)


def test_bad_node_fields_are_named_with_their_index() -> None:
    body = shape(["a", "b"], [])
    body["nodes"][1]["duration_s"] = -5.0
    with pytest.raises(InvalidDag) as caught:
        dag_from_obj(body)
    assert caught.value.field == "nodes.1.duration_s"
    with pytest.raises(InvalidDag) as caught:
        decode_dag(b"{not json")
    assert caught.value.field == "(dag)"


def test_the_json_schema_is_exported_with_the_wire_contract() -> None:
    model, mode = EXPORTS["dag_shape.schema.json"]
    assert model is DagShape
    schema = json.loads(render(model, mode))
    assert set(schema["required"]) == {"dag_id", "nodes"}
    assert schema["properties"]["nodes"]["maxItems"] == MAX_DAG_NODES
