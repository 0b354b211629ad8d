"""What the operator and the live index add to the snapshot: the check's inputs as data."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from types import MappingProxyType

from schemas.packages import IndexAnswer, PackageAnswer
from workers.evaluate.wall.packages.names import normalise


def _no_answers() -> Mapping[str, PackageAnswer]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class PackageCheck:
    """How a review settles the package names an output uses.

    ``live_index`` False: the shipped snapshot is the authority, and a name it lacks does
    not exist. True: an index stands behind the snapshot, and a name the snapshot lacks
    takes the index's answer from ``answers``; with none (not looked up, or no reply) it
    is only suspect.
    """

    allowed: tuple[str, ...] = ()
    """The operator's private names: distributions or import names, or ``fnmatch``
    patterns of their normal forms (``acme-*``). Never flagged."""
    live_index: bool = False
    """Whether a live index confirms names newer than the snapshot."""
    answers: Mapping[str, PackageAnswer] = field(default_factory=_no_answers)
    """The index's answers, by normalised name."""

    def answered(self, answers: Mapping[str, PackageAnswer]) -> PackageCheck:
        """This check with the index's answers."""
        return replace(self, answers=MappingProxyType(dict(answers)))

    def allows(self, name: str) -> bool:
        """Whether the operator allowed ``name`` (any spelling)."""
        normal = normalise(name)
        return any(fnmatchcase(normal, normalise(pattern)) for pattern in self.allowed)

    def answer_for(self, normal_name: str) -> IndexAnswer:
        """What is known of a name the snapshot lacks."""
        if not self.live_index:
            return IndexAnswer.ABSENT
        found = self.answers.get(normal_name)
        return found.answer if found is not None else IndexAnswer.UNREACHABLE
