"""What a local run leaves behind when it is killed: folders swept, children tethered.

``workers/local/scratch.py`` and ``workers/local/tether.py``, in-process; the launcher
killed with SIGKILL is in ``tests/faults/test_launcher_death.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from workers.local import scratch
from workers.local.tether import tethered

SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]


def _folder(root: Path, name: str, owner: str | None) -> Path:
    folder = root / f"windags-{name}"
    folder.mkdir()
    if owner is not None:
        (folder / scratch.OWNER_FILE).write_text(owner)
    return folder


def _started_of(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]


def test_the_sweep_removes_only_folders_whose_owner_is_gone(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait(timeout=30)
    me = os.getpid()
    folders = {
        "dead-owner": _folder(tmp_path, "fleet-a", f"{dead.pid} 1"),
        "pid-reused": _folder(tmp_path, "redis-b", f"{me} 1"),  # this pid, another start
        "live-owner": _folder(tmp_path, "fleet-c", f"{me} {_started_of(me)}"),
        "no-owner": _folder(tmp_path, "fleet-d", None),  # kept logs, or an older version's
        "garbled": _folder(tmp_path, "redis-e", "not a pid"),
    }
    other = tmp_path / "someone-elses"
    (other / "x").mkdir(parents=True)
    removed = scratch.sweep(tmp_path)
    assert sorted(removed) == sorted([folders["dead-owner"], folders["pid-reused"]])
    assert sorted(p for p in tmp_path.iterdir()) == sorted(
        [folders["live-owner"], folders["no-owner"], folders["garbled"], other]
    )


def test_a_scratch_folder_is_owned_until_disowned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    folder = scratch.scratch_folder("fleet")
    assert folder.parent == tmp_path and folder.name.startswith("windags-fleet-")
    assert (folder / scratch.OWNER_FILE).read_text().split()[0] == str(os.getpid())
    scratch.disown(folder)
    assert not (folder / scratch.OWNER_FILE).exists() and folder.exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal")
def test_a_tethered_child_outlives_the_thread_that_asked_for_it_not_the_process() -> None:
    started: list[subprocess.Popen[bytes]] = []
    asker = threading.Thread(target=lambda: started.append(tethered(SLEEPER)))
    asker.start()
    asker.join()
    (child,) = started
    try:
        # The kernel ties the signal to the thread that forked: not the one that asked.
        with pytest.raises(subprocess.TimeoutExpired):
            child.wait(timeout=1)
        status = Path(f"/proc/{child.pid}/status").read_text()
        assert "\nPPid:\t" + str(os.getpid()) in status
    finally:
        child.kill()
        child.wait(timeout=10)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal")
def test_a_tethered_child_dies_with_the_process_that_started_it() -> None:
    script = (
        "import sys; from workers.local.tether import tethered; "
        f"child = tethered({SLEEPER!r}); print(child.pid, flush=True); "
        "import time; time.sleep(60)"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    parent.stdout.close()
    parent.kill()
    parent.wait(timeout=10)
    # Killed by the signal, the child is re-parented to this run (a subreaper): reap it.
    _, status = os.waitpid(child, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == 9
