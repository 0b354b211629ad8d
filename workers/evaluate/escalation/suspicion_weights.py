"""Fitted by ``python -m bench.fit_suspicion --write``: do not edit by hand.

Data: the dev half of the tunable HaluEval lines (abstractive: 7624 outputs, extractive: 7298
outputs, open: 7586 outputs); L2 0.01.
"""

from __future__ import annotations

#: Log-odds a check that ran adds by itself, per grounding policy.
BASELINE: dict[str, float] = {"abstractive": -1.9425, "extractive": -0.8125, "open": -1.0779}
#: Per policy and suspect code: (weight per log(1 + count), weight per unit of penalty).
CODE_WEIGHTS: dict[str, dict[str, tuple[float, float]]] = {
    "abstractive": {
        "MoreUnsupported": (0.2392, 0.1411),
        "UnlinkedWording": (0.6394, 0.19),
        "UnsupportedClaim": (0.0318, 0.0115),
        "UnsupportedWording": (0.9863, 1.599),
    },
    "extractive": {
        "UnlinkedClaim": (0.7028, 0.1773),
        "UnlinkedWording": (0.776, 0.157),
        "UnsupportedName": (1.3397, 1.4822),
        "UnsupportedNumber": (0.8643, 0.8882),
        "UnsupportedWording": (2.079, 1.5808),
    },
    "open": {
        "UnlinkedWording": (0.3645, 0.0068),
        "UnsupportedName": (0.7544, 0.566),
        "UnsupportedNumber": (0.309, 0.2023),
        "UnsupportedWording": (0.5898, 0.4234),
    },
}
#: Per policy applied and code: the share of right outputs and of hallucinated ones
#: it fires on (the data behind ``workers/evaluate/wall/certainty.py``'s table).
FIRING: dict[str, dict[str, tuple[float, float]]] = {
    "abstractive": {
        "ContradictsInput": (0.013, 0.027),
        "MoreUnsupported": (0.029, 0.042),
        "UnlinkedClaim": (0.212, 0.184),
        "UnlinkedWording": (0.801, 0.936),
        "UnsupportedClaim": (0.004, 0.007),
        "UnsupportedName": (0.265, 0.246),
        "UnsupportedNumber": (0.087, 0.066),
        "UnsupportedQuote": (0.002, 0.01),
        "UnsupportedWording": (0.844, 0.978),
    },
    "extractive": {
        "ContradictsInput": (0.0, 0.078),
        "Filler": (0.0, 0.001),
        "TooThin": (0.001, 0.0),
        "UnlinkedClaim": (0.0, 0.078),
        "UnlinkedWording": (0.0, 0.091),
        "UnsupportedName": (0.001, 0.272),
        "UnsupportedNumber": (0.001, 0.093),
        "UnsupportedQuote": (0.0, 0.011),
        "UnsupportedWording": (0.001, 0.46),
    },
    "open": {
        "ContradictsInput": (0.008, 0.081),
        "Filler": (0.001, 0.001),
        "MoreUnsupported": (0.001, 0.0),
        "TooThin": (0.001, 0.0),
        "UnlinkedClaim": (0.084, 0.053),
        "UnlinkedWording": (0.04, 0.075),
        "UnsupportedName": (0.508, 0.749),
        "UnsupportedNumber": (0.092, 0.123),
        "UnsupportedQuote": (0.002, 0.023),
        "UnsupportedWording": (0.729, 0.805),
    },
}
#: sha256 of the engine's findings on the whole fit set, and on its first
#: 12 dev lines per file (a test compares the latter: cheap enough for CI).
FIT_DIGEST = "016ba87ccf5afb5e7dfae6b391fa4fecec36a5cefd824d44e0b60e0122eb9334"
SHORT_DIGEST = "205d788f272ef3a59026a7e56e9d2d104334a2a15443b3786402c99f44669942"
