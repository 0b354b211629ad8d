"""Did you mean ...: the popular project nearest a name the index lacks.

Hallucinated names are mostly plausible compounds of real projects' words
(``flask-jwt-autorefresh``) or near misses of real names (``reqeusts``). A compound is
nearest the popular project that shares most of its words, then the most similar
(``difflib``'s ratio); a near miss, with no word in common, the most similar popular name
of about its length. The more downloaded wins a tie.
"""

from __future__ import annotations

import difflib
from collections import defaultdict
from functools import cache

from workers.evaluate.wall.packages.snapshot import popular, popular_rank

#: Least similarity of a suggestion sharing a word, and of a near miss sharing none.
WORD_CUTOFF = 0.4
NEAR_MISS_CUTOFF = 0.75
#: Length difference within which a popular name is a near-miss candidate.
_LENGTH_SLACK = 2


@cache
def _by_word() -> dict[str, tuple[str, ...]]:
    index: dict[str, list[str]] = defaultdict(list)
    for name in popular():
        for word in _words(name):
            index[word].append(name)
    return {word: tuple(names) for word, names in index.items()}


@cache
def _by_length() -> dict[int, tuple[str, ...]]:
    index: dict[int, list[str]] = defaultdict(list)
    for name in popular():
        index[len(name)].append(name)
    return {length: tuple(names) for length, names in index.items()}


def _words(name: str) -> set[str]:
    return {w for w in name.split("-") if len(w) > 1}


def nearest_popular(normal_name: str) -> str | None:
    """The popular project most like ``normal_name``, or None when none is close."""
    words = _words(normal_name)
    index, rank = _by_word(), popular_rank()
    sharing = {n for w in words for n in index.get(w, ())} - {normal_name}
    matcher = difflib.SequenceMatcher(b=normal_name)

    def similarity(name: str) -> float:
        matcher.set_seq1(name)
        return matcher.ratio()

    scored = [(len(words & _words(n)), similarity(n), n) for n in sharing]
    best = max(
        ((shared, ratio, n) for shared, ratio, n in scored if ratio >= WORD_CUTOFF),
        key=lambda s: (s[0], round(s[1], 3), -rank[s[2]]),
        default=None,
    )
    if best is not None:
        return best[2]
    size, lengths = len(normal_name), _by_length()
    near = [
        n
        for length in range(size - _LENGTH_SLACK, size + _LENGTH_SLACK + 1)
        for n in lengths.get(length, ())
        if n != normal_name
    ]
    close = difflib.get_close_matches(normal_name, near, n=8, cutoff=NEAR_MISS_CUTOFF)
    return min(close, key=lambda n: (-round(similarity(n), 3), rank[n]), default=None)
