"""``json-schema-test-suite``: the official JSON-Schema-Test-Suite, draft 2020-12 (MIT).

It ships inside the ``jsonschema`` source distribution (``json/tests/draft2020-12``); the
sdist of the installed ``jsonschema`` version is fetched once with pip and read in place.
Each test is (schema, instance, valid): the instance as a json output under a contract
whose ``json_schema`` is the schema; valid -> accept, invalid -> floor.

Left out and counted: ``optional/`` tests (format assertion and other optional
behaviour; the engine validates with format as an annotation, the draft's default),
schemas that reference the suite's remote server (``localhost:1234``: the engine
resolves no remote refs, by design), and boolean schemas while the contract holds only
object schemas. The id is ``file_stem/group_index/test_index``.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from bench.public.archives import DataUnavailable, fetch, installed_version, read_tree
from bench.public.case import GOOD, Expect, Loaded, case, make_request
from bench.public.heldout import is_held_out
from schemas.request import OutputContract

BENCHMARK = "json-schema-test-suite"
PREFIX = "json/tests/draft2020-12/"
INVALID = "schema_violation"


def load(limit: int | None = None) -> Loaded:
    """Cases of at most ``limit`` tests, file by file in name order."""
    loaded = Loaded(BENCHMARK)
    try:
        archive = fetch("jsonschema", installed_version("jsonschema"), sdist=True)
    except DataUnavailable as exc:
        loaded.unavailable = str(exc)
        return loaded
    files = read_tree(archive, PREFIX)
    for name in sorted(files):
        stem = name.removeprefix(PREFIX).removesuffix(".json")
        for group_index, group in enumerate(json.loads(files[name])):
            for test_index, test in enumerate(group["tests"]):
                item_id = f"{stem}/{group_index}/{test_index}"
                if is_held_out(BENCHMARK, item_id):
                    loaded.held_out += 1
                    continue
                if "/" in stem:
                    loaded.skip("optional/ test (not required by the draft)")
                    continue
                if limit is not None and len(loaded.cases) >= limit:
                    return loaded
                _add(loaded, item_id, group["schema"], test)
    return loaded


def _boolean_schemas_allowed() -> bool:
    """Whether the contract takes ``true``/``false`` schemas (newer request schemas do)."""
    try:
        OutputContract.model_validate({"json_schema": True})
    except ValidationError:
        return False
    return True


def _add(loaded: Loaded, item_id: str, schema: Any, test: dict[str, Any]) -> None:
    if not isinstance(schema, dict) and not _boolean_schemas_allowed():
        loaded.skip("boolean schema (the contract takes object schemas only)")
        return
    if "localhost:1234" in json.dumps(schema):
        loaded.skip("needs a remote ref")
        return
    expect, label = (Expect.ACCEPT, GOOD) if test["valid"] else (Expect.FLOOR, INVALID)
    request = make_request(
        benchmark=BENCHMARK,
        item_id=item_id,
        label=label,
        kind="json",
        content=json.dumps(test["data"], ensure_ascii=False),
        skill="json-record-writer",
        contract={"json_schema": schema},
    )
    loaded.cases.append(case(BENCHMARK, item_id, expect, label, request))
