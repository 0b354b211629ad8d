"""The shell's own verdict: ``bash -n`` reads a script without running a word of it.

tree-sitter-bash reads most scripts, fast and in process, but rejects valid ones too
(``for arg do``, ``$((`` read as arithmetic where bash reads a subshell): on the real
scripts the bench reads, one in ten. So a script it accepts is accepted, and one it
rejects is handed to the bash the worker runs on (every image of the fleet has one) for
the verdict; so is one it accepts only by reading a redirection's target on a later line
(``cat >``, then ``file``: bash wants the target on the operator's line). Only what
``bash -n`` refuses is a syntax error, with bash's message and line. ``-n`` reads
commands and executes none; the script comes on standard input, with no startup files,
an empty environment and a time limit. Without a bash on the machine, no shell finding
is made.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from functools import lru_cache

from workers.evaluate.code.grammars import Grammar, node_spans
from workers.evaluate.parsed import ParseFailure

#: Longest a ``bash -n`` may take before its verdict is given up (then nothing is found).
TIMEOUT_S = 10.0
_MESSAGE = re.compile(r"^/dev/stdin: line (\d+): (.*)$", re.M)
#: A redirection operator, then a line break that no backslash continues.
_BROKEN_REDIRECT = re.compile(r"\A[0-9]*(?:&>>?|>[>|&]?|<[>&]?)[ \t]*\n")


def redirect_across_lines(script: str) -> bool:
    """Whether tree-sitter-bash read a redirection whose target stands on a later line."""
    if "\n" not in script or not any(c in script for c in "<>"):
        return False
    encoded = script.encode("utf-8", errors="surrogatepass")
    return any(
        _BROKEN_REDIRECT.match(encoded[start:end].decode("utf-8", errors="replace"))
        for start, end in node_spans(Grammar.BASH, script, "file_redirect")
    )


@lru_cache(maxsize=1)
def _bash() -> str | None:
    return shutil.which("bash")


def bash_failure(script: str) -> ParseFailure | None:
    """What ``bash -n`` refuses in ``script``, or None (also when no bash can be run)."""
    bash = _bash()
    if bash is None:
        return None
    try:
        done = subprocess.run(
            [bash, "--norc", "--noprofile", "-n", "/dev/stdin"],
            input=script.encode("utf-8", errors="surrogateescape"),
            capture_output=True,
            env={"LC_ALL": "C"},
            timeout=TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode == 0:
        return None
    errors = done.stderr.decode("utf-8", errors="replace")
    first = _MESSAGE.search(errors)
    if first is None:
        return ParseFailure(errors.strip().splitlines()[0][:300] if errors.strip() else "")
    return ParseFailure(first.group(2)[:300], int(first.group(1)), 1)
