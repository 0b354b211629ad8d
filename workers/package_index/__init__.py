"""The package index, asked over the network: the adapter behind the pure package check.

Its answers reach the engine as data (``PackageCheck.answered``); the engine never
imports this room.
"""

from workers.package_index.client import PackageIndex, package_check

__all__ = ["PackageIndex", "package_check"]
