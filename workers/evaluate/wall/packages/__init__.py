"""Packages that exist: imports, install commands and requirements checked against the index.

Pure: the index's project names come from a snapshot shipped in this folder (``data/``,
rebuilt by ``snapshot_build``); live answers for newer names reach it as data
(``PackageCheck.answers``), looked up by ``workers/package_index``.
"""

from workers.evaluate.wall.packages.check import (
    PACKAGE_CODES,
    check_packages,
    package_findings,
    packages_to_confirm,
)
from workers.evaluate.wall.packages.policy import PackageCheck

__all__ = [
    "PACKAGE_CODES",
    "PackageCheck",
    "check_packages",
    "package_findings",
    "packages_to_confirm",
]
