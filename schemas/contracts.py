"""JSON Schema contracts, applied offline: one validator factory for intake and the Floor.

A contract's ``$ref`` is resolved only against the schema itself and the published
metaschemas that ship with ``jsonschema``: a remote reference is never fetched (jsonschema
would otherwise go to the network from inside a worker). A contract whose references do
not resolve that way is refused at intake, so the Floor never meets one.

``format`` is an annotation, as draft 2020-12 defines it by default: ``"format": "email"``
does not make ``"not an email"`` invalid. A contract that needs a shape enforced states it
with ``pattern``, ``enum`` or ``const``, which are assertions everywhere.
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator
from jsonschema_specifications import REGISTRY as METASCHEMAS  # type: ignore[import-untyped]
from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource, Unresolvable
from referencing.jsonschema import DRAFT202012

#: Most ``$ref``s one contract may hold; past it the contract is refused, not walked.
MAX_REFS = 2_000


def _refuse(uri: str) -> Resource[Any]:
    """The registry's retrieve function: nothing outside the contract is ever fetched."""
    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]  # attrs class mypy cannot see


#: The published metaschemas, and nothing fetched from anywhere.
OFFLINE: Registry[Any] = Registry(retrieve=_refuse).combine(  # type: ignore[call-arg]
    METASCHEMAS
)


def contract_validator(schema: dict[str, Any] | bool) -> Draft202012Validator:
    """A draft 2020-12 validator that never fetches and treats ``format`` as an annotation."""
    return Draft202012Validator(schema, registry=OFFLINE, format_checker=None)


def unresolvable_refs(schema: dict[str, Any] | bool) -> list[str]:
    """Every ``$ref`` / ``$dynamicRef`` of ``schema`` that does not resolve offline."""
    if isinstance(schema, bool):
        return []
    root = DRAFT202012.create_resource(schema)
    resolver = OFFLINE.resolver_with_root(root)
    bad: list[str] = []
    pending = [(root, resolver)]
    seen = 0
    while pending:
        resource, here = pending.pop()
        contents = resource.contents
        if isinstance(contents, dict):
            for key in ("$ref", "$dynamicRef"):
                ref = contents.get(key)
                if isinstance(ref, str):
                    seen += 1
                    if seen > MAX_REFS:
                        return [*bad, f"more than {MAX_REFS} references"]
                    if not _resolves(here, ref):
                        bad.append(ref)
        pending.extend((sub, here.in_subresource(sub)) for sub in resource.subresources())
    return bad


#: Small documents every schema is tried on at intake: a reference loop that consumes
#: nothing (``{"$ref": "#"}``) recurses on any of them, and is refused there.
PROBES: tuple[Any, ...] = (None, True, 0, "", [], {})


def loops_forever(schema: dict[str, Any] | bool) -> bool:
    """Whether applying ``schema`` to a small document recurses without end."""
    validator = contract_validator(schema)
    try:
        for probe in PROBES:
            validator.is_valid(probe)
    except RecursionError:
        return True
    return False


def _resolves(resolver: Any, ref: str) -> bool:
    try:
        resolver.lookup(ref)
    except Unresolvable:
        return False
    return True
