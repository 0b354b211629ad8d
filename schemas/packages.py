"""What a package index answered about a project name: data the engine reads, like a verdict.

Looked up by the network side (``workers/package_index``) and handed to the pure engine,
across a queue hop when the fleet runs the look-up on its own lane.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import AwareDatetime, Field

from schemas.base import WireModel


class IndexAnswer(StrEnum):
    """Whether the index has the project."""

    PRESENT = "present"
    """The index lists it (200)."""
    ABSENT = "absent"
    """The index says there is no such project (404, 410)."""
    UNREACHABLE = "unreachable"
    """No usable answer: a timeout, a refused connection, a 5xx, a reply of another kind.
    Never evidence that the project is missing."""


class PackageAnswer(WireModel):
    """One name's answer."""

    name: Annotated[
        str, Field(min_length=1, max_length=100, pattern=r"^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$")
    ]
    """The PEP 503 normal form that was looked up."""
    answer: IndexAnswer
    """What the index said."""
    status: Annotated[int, Field(ge=100, le=599)] | None = None
    """The HTTP status, when there was one."""
    checked_at: AwareDatetime
    """When the index answered (a cached answer keeps its time: absent may not last)."""


__all__ = ["IndexAnswer", "PackageAnswer"]
