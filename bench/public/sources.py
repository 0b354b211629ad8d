"""The public benchmarks by name, each with its loader."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from bench.public import (
    cpython_stdlib,
    cpython_test,
    halueval,
    humaneval,
    jsonschema_suite,
    pypi_readmes,
    site_packages,
    sqlglot_fixtures,
)
from bench.public.case import Loaded

Loader = Callable[[int | None], Loaded]

LOADERS: dict[str, Loader] = {
    cpython_stdlib.BENCHMARK: cpython_stdlib.load,
    cpython_test.BENCHMARK: cpython_test.load,
    humaneval.BENCHMARK: humaneval.load,
    jsonschema_suite.BENCHMARK: jsonschema_suite.load,
    sqlglot_fixtures.BENCHMARK: sqlglot_fixtures.load,
    pypi_readmes.BENCHMARK: pypi_readmes.load,
    site_packages.BENCHMARK: site_packages.load,
    **{name: partial(halueval.load, name) for name in halueval.LAYOUTS},
}


def load(
    name: str,
    limit: int | None,
    grounding: str = halueval.INFERRED,
    shape: halueval.Shape | None = None,
    layout: str = halueval.BENCHMARK_LAYOUT,
) -> Loaded:
    """Build one benchmark's cases; a loader that fails marks the source unavailable.

    ``grounding``, ``shape`` and ``layout`` say what HaluEval's requests declare, where
    they carry their input and how a task that carries it is written (``halueval.load``);
    other sources ignore them.
    """
    try:
        if name in halueval.LAYOUTS:
            return halueval.load(name, limit, grounding, shape or halueval.Shape.SOURCES, layout)
        return LOADERS[name](limit)
    except Exception as exc:  # a broken data package must not stop the other sources
        loaded = Loaded(name)
        loaded.unavailable = f"{type(exc).__name__}: {exc}"
        return loaded
