"""Economics on the public cases: real Stage 1 evidence, Stage 2 modelled, every policy scored."""

from __future__ import annotations

import json
import random
from pathlib import Path

from bench import economics_public
from bench.economics_public import KEYS, POLICIES, STAGE2_SETTINGS, Router, label
from bench.public.heldout import Half
from schemas.result import Stage1Result
from tests.infrastructure import unavailable
from workers.settings import DEFAULT_PRICING

#: Sources built from installed packages and a fetched archive: code, SQL and text.
NAMES = ("humaneval", "sqlglot-fixtures", "halueval-qa")
BUDGET = 6


def test_a_tiny_run_writes_every_setting_and_policy_and_never_and_always_add_up(
    tmp_path: Path,
) -> None:
    data = economics_public.run(seeds=1, budget=BUDGET, names=NAMES, out_dir=tmp_path)
    if not data["benchmarks"]:
        unavailable(f"public data: {data['unavailable']}")
    written = json.loads((tmp_path / "economics_public.json").read_text())
    assert written["stage2"] == json.loads(json.dumps(data["stage2"]))
    assert {h.value for h in Half} == set(written["cases"])
    assert set(written["stage2"]) == {label(s) for s in STAGE2_SETTINGS}
    settings = zip(written["stage2"].values(), STAGE2_SETTINGS, strict=True)
    for setting, (catch, false_alarm) in settings:
        assert (setting["catch_rate"], setting["false_alarm_rate"]) == (catch, false_alarm)
        policies = setting["policies"]
        assert set(policies) == set(POLICIES)
        assert all(set(figures) == set(KEYS) for figures in policies.values())
        never, always = policies["never"], policies["always"]
        assert never["stage2_spend_usd"] == never["escalation_rate"] == 0.0
        assert never["waste_averted_usd"] == never["net_usd"] == 0.0
        assert always["escalation_rate_of_passes"] == 1.0  # every Stage 1 pass, nothing else
        for name, figures in policies.items():
            assert figures["stage2_spend_usd"] <= always["stage2_spend_usd"] + 1e-9, name
            net = figures["waste_averted_usd"] - figures["stage2_spend_usd"]
            assert abs(figures["net_usd"] - net) < 1e-3, name
        assert policies["oracle"]["stage2_false_alarms"] == 0.0
        # The bound is given the learned router's spend, never more.
        bound = policies[economics_public.SAME_SPEND]["stage2_spend_usd"]
        assert bound <= policies["learned"]["stage2_spend_usd"] + 1e-9
    text = (tmp_path / "economics_public.json").read_text()
    if not written["unavailable"]:
        assert str(Path.cwd()) not in text and str(Path.home()) not in text


def test_stage2_is_modelled_by_its_catch_and_false_alarm_rates() -> None:
    cases, _ = economics_public.public_cases(("humaneval",), BUDGET)
    if not cases:
        unavailable("humaneval data")
    price = DEFAULT_PRICING["claude-sonnet-4-5"]
    stage1s: dict[tuple[int, bool], Stage1Result] = {}
    placed = economics_public.place(cases, stage1s, random.Random(1), Router(price))
    draws = [0.5] * len(cases)
    perfect = economics_public.judged(placed, cases, draws, (1.0, 0.0))
    assert [n.ceiling_flags for n in perfect] == [c.defective for c in cases]
    blind = economics_public.judged(placed, cases, draws, (0.0, 1.0))
    assert [n.ceiling_flags for n in blind] == [not c.defective for c in cases]
    for node, case in zip(perfect, cases, strict=True):
        same = [c.defective for c in cases if c.half is case.half]
        assert node.true_fail == sum(same) / len(same)
    # Stage 1 ran once per case and critical path, and the cache is what the nodes carry.
    assert len(stage1s) <= 2 * len(cases)
    assert all(
        n.stage1 is stage1s[(i, n.request.feeds_critical_path)] for i, n in enumerate(placed)
    )
