"""Labelled public data sets, loaded from installed packages at run time, and their report."""

from bench.public.case import Case, Expect, Loaded
from bench.public.heldout import is_held_out
from bench.public.sources import LOADERS, load

__all__ = ["LOADERS", "Case", "Expect", "Loaded", "is_held_out", "load"]
