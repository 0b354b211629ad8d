"""Fitted by ``python -m bench.fit_suspicion --write``: do not edit by hand.

Data: the dev half of the tunable HaluEval lines (abstractive: 7624 outputs, extractive: 7298
outputs, open: 7586 outputs); L2 0.01.
"""

from __future__ import annotations

#: Log-odds a check that ran adds by itself, per grounding policy.
BASELINE: dict[str, float] = {"abstractive": -1.944, "extractive": -0.8134, "open": -1.0774}
#: Per policy and suspect code: (weight per log(1 + count), weight per unit of penalty).
CODE_WEIGHTS: dict[str, dict[str, tuple[float, float]]] = {
    "abstractive": {
        "MoreUnsupported": (0.2394, 0.1412),
        "UnlinkedWording": (0.6395, 0.1906),
        "UnsupportedClaim": (0.0318, 0.0115),
        "UnsupportedWording": (0.9868, 1.6002),
    },
    "extractive": {
        "UnlinkedClaim": (0.702, 0.1769),
        "UnlinkedWording": (0.7732, 0.1566),
        "UnsupportedName": (1.3417, 1.4818),
        "UnsupportedNumber": (0.865, 0.8863),
        "UnsupportedWording": (2.0837, 1.5789),
    },
    "open": {
        "UnlinkedWording": (0.3728, 0.0071),
        "UnsupportedName": (0.7548, 0.5647),
        "UnsupportedNumber": (0.3087, 0.202),
        "UnsupportedWording": (0.5878, 0.4191),
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
        "UnsupportedWording": (0.845, 0.978),
    },
    "extractive": {
        "ContradictsInput": (0.0, 0.078),
        "Filler": (0.0, 0.001),
        "TooThin": (0.001, 0.0),
        "UnlinkedClaim": (0.0, 0.078),
        "UnlinkedWording": (0.0, 0.09),
        "UnsupportedName": (0.001, 0.273),
        "UnsupportedNumber": (0.001, 0.093),
        "UnsupportedQuote": (0.0, 0.012),
        "UnsupportedWording": (0.001, 0.461),
    },
    "open": {
        "ContradictsInput": (0.008, 0.081),
        "Filler": (0.001, 0.001),
        "MoreUnsupported": (0.001, 0.0),
        "TooThin": (0.001, 0.0),
        "UnlinkedClaim": (0.084, 0.054),
        "UnlinkedWording": (0.04, 0.076),
        "UnsupportedName": (0.508, 0.75),
        "UnsupportedNumber": (0.092, 0.123),
        "UnsupportedQuote": (0.002, 0.023),
        "UnsupportedWording": (0.731, 0.806),
    },
}
#: sha256 of the engine's findings on the whole fit set, and on its first
#: 12 dev lines per file (a test compares the latter: cheap enough for CI).
FIT_DIGEST = "51329b7e9eef705002e3b03803ebcac6462b0de759d1a8f4e3043c2f21d2da40"
SHORT_DIGEST = "205d788f272ef3a59026a7e56e9d2d104334a2a15443b3786402c99f44669942"
