"""Kubernetes: the refs pods, which fetch what a model wrote, reach no cluster-internal range."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from tests.test_deploy import VARIANTS, build, by_kind
from workers.lookups.addresses import BLOCKED

INTERNAL = [ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")]
INTERNAL += [ipaddress.ip_network(n) for n in ("100.64.0.0/10", "169.254.0.0/16", "127.0.0.0/8")]


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda p: p.name)
def test_the_refs_pods_egress_excepts_every_cluster_internal_range(variant: Path) -> None:
    policies = by_kind(build(variant), "NetworkPolicy")
    refs = [
        p
        for p in policies.values()
        if p["spec"]["podSelector"]["matchLabels"].get("app.kubernetes.io/component") == "refs"
    ]
    (policy,) = refs
    assert policy["spec"]["policyTypes"] == ["Egress"]
    blocks = [
        peer["ipBlock"]
        for rule in policy["spec"]["egress"]
        for peer in rule.get("to", [])
        if "ipBlock" in peer
    ]
    public_v4 = next(b for b in blocks if b["cidr"] == "0.0.0.0/0")
    excepted = [ipaddress.ip_network(c) for c in public_v4["except"]]
    for internal in INTERNAL:
        assert any(internal.subnet_of(e) for e in excepted), internal  # type: ignore[arg-type]
    public_v6 = next(b for b in blocks if b["cidr"] == "::/0")
    assert {"fc00::/7", "fe80::/10", "::1/128"} <= set(public_v6["except"])
    # Every IPv4 range the fetcher refuses and that a pod could route to is excepted too.
    routable = [n for n in BLOCKED if n.version == 4 and n.prefixlen <= 16]
    for net in routable:
        assert any(net.subnet_of(e) for e in excepted), net  # type: ignore[arg-type]
