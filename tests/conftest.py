"""Suite-wide test configuration.

Under CI, hypothesis runs derandomized: the same examples every run, so a landing is
judged on the code, not on the draw. Local runs keep exploring new examples.

No test reaches past loopback (``tests/network_guard.py``): a connection or a name
look-up beyond it fails the test, and the run's processes inherit an empty
``WINDAGS_PACKAGE_INDEX_URL`` (no package index but a test's own).

A run holds Redis databases of its own (``tests/redis_leases.py``), so that another run
of the suite on the same machine neither empties nor reads them, and it ends by checking
that no process it started is still alive (``tests/processes.py``): one that is fails the
run, named, and is stopped.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import settings

from tests.infrastructure import leased_database
from tests.network_guard import loopback_only
from tests.processes import mark_this_run, settled_leftovers, stop
from tests.redis_leases import LEASES

#: Fixtures shared by the model-judge tests (server, toolless, captured).
pytest_plugins = ["tests.model_servers"]

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

mark_this_run()
# Workers and CLIs the tests start read no public index (a test that wants one starts it).
os.environ["WINDAGS_PACKAGE_INDEX_URL"] = ""


@pytest.fixture(autouse=True)
def _loopback_only() -> Iterator[None]:
    """Fail any test that tried to reach an address or resolve a name beyond loopback."""
    with loopback_only() as attempts:
        yield
    assert attempts == [], f"the test tried to reach beyond loopback: {attempts[:5]}"


@pytest.fixture(scope="session")
def cli_redis_url() -> str:
    """The database the console-script tests use: db 12 unless WINDAGS_TEST_REDIS_URL says.

    Leased for this run; no Redis there skips the test on a laptop and fails it under CI.
    """
    return leased_database(os.environ.get("WINDAGS_TEST_REDIS_URL", "redis://127.0.0.1:6379/12"))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Drop the run's database leases; fail the run if a process it started lives on."""
    LEASES.release()
    left = settled_leftovers()
    if not left:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    lines = [f"  pid {p.pid}: {p.command}" for p in left]
    message = "\n".join(["processes the test run started were still alive (now stopped):", *lines])
    if reporter is not None:
        reporter.ensure_newline()
        reporter.write_line(message, red=True)
    else:
        print(message)
    stop(left)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
