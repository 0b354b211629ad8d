"""Fitted by ``python -m bench.fit_suspicion --write``: do not edit by hand.

Data: the dev half of the tunable HaluEval lines (abstractive: 7624 outputs, extractive: 7298
outputs, open: 7586 outputs); L2 0.01.
"""

from __future__ import annotations

#: Log-odds a check that ran adds by itself, per grounding policy.
BASELINE: dict[str, float] = {"abstractive": -1.9425, "extractive": -0.8105, "open": -1.0779}
#: Per policy and suspect code: (weight per log(1 + count), weight per unit of penalty).
CODE_WEIGHTS: dict[str, dict[str, tuple[float, float]]] = {
    "abstractive": {
        "MoreUnsupported": (0.2392, 0.1411),
        "UnlinkedWording": (0.6394, 0.19),
        "UnsupportedClaim": (0.0318, 0.0115),
        "UnsupportedWording": (0.9863, 1.599),
    },
    "extractive": {
        "UnlinkedClaim": (0.7031, 0.1773),
        "UnlinkedWording": (0.776, 0.1569),
        "UnsupportedName": (1.3389, 1.4814),
        "UnsupportedNumber": (0.8593, 0.8785),
        "UnsupportedWording": (2.0818, 1.5799),
    },
    "open": {
        "UnlinkedWording": (0.3645, 0.0068),
        "UnsupportedName": (0.7544, 0.566),
        "UnsupportedNumber": (0.309, 0.2023),
        "UnsupportedWording": (0.5898, 0.4234),
    },
}
