"""A declared environment (``contract.requirements``): which imports it provides.

A distribution provides the modules the mapping knows it ships, its own name with ``_``
for ``-`` (``typing-extensions``: ``typing_extensions``), the same without a ``python``
or ``py`` affix (``python-dotenv``: ``dotenv``, ``pyyaml``: ``yaml``), and a namespace
import spelling its name (``google-cloud-storage``: ``google.cloud.storage``). Generous on
purpose: an import this lets through is at worst unchecked, an import it misses would be
a definite finding against an output that is right.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.requirements import Requirement

from workers.evaluate.wall.packages.names import normalise
from workers.evaluate.wall.packages.snapshot import modules_of

_PREFIXES = ("python-", "py-", "py")
_SUFFIXES = ("-python", "-py", "-python3", "3")


@dataclass(frozen=True, slots=True)
class Environment:
    """The distributions a request declares, by normal form."""

    distributions: frozenset[str]

    @classmethod
    def declared(cls, requirements: tuple[str, ...]) -> Environment:
        """The environment of validated requirement strings."""
        return cls(frozenset(normalise(Requirement(r).name) for r in requirements))

    def provides(self, module: str) -> bool:
        """Whether some declared distribution ships the dotted ``module``."""
        parts = module.split(".")
        spelled = {normalise("-".join(parts[:end])) for end in range(1, len(parts) + 1)}
        if spelled & self.distributions:
            return True
        top = parts[0]
        return any(top in modules_of(d) or _bare(d) == normalise(top) for d in self.distributions)


def _bare(distribution: str) -> str:
    """The name without a ``python``/``py`` affix (``python-dotenv``: ``dotenv``)."""
    for prefix in _PREFIXES:
        if distribution.startswith(prefix) and len(distribution) > len(prefix) + 1:
            return distribution.removeprefix(prefix)
    for suffix in _SUFFIXES:
        if distribution.endswith(suffix) and len(distribution) > len(suffix) + 1:
            return distribution.removesuffix(suffix)
    return distribution
