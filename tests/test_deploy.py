"""Static checks of deploy/: Dockerfile, docker-compose, OTel Collector config, kustomize tree.

No cluster and no Docker engine are needed. Kustomizations are rendered by a small resolver
in this file (resources, components, strategic-merge patches, images, namespace); when a
`kubectl` binary is on PATH, a further test checks the resolver against `kubectl kustomize`.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import jsonschema
import kubernetes_validate
import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
DEPLOY = REPO / "deploy"
K8S = DEPLOY / "k8s"
OVERLAYS = sorted(p for p in (K8S / "overlays").iterdir() if (p / "kustomization.yaml").exists())
VARIANTS = [K8S / "base", *OVERLAYS]

QUEUES = {"stage1", "router", "stage2", "refs"}
# Kubernetes versions the manifests must validate against: an old supported one and the newest
# schema kubernetes-validate ships.
K8S_VERSIONS = ["1.30.0", kubernetes_validate.utils.latest_version()]
SOFT_SHUTDOWN_S = 30  # worker_soft_shutdown_timeout
PROBE = "celery -A workers.fleet.worker inspect ping -d {node}@$HOSTNAME --timeout 5"
# ConfigMap keys that are not worker settings.
NON_SETTINGS_KEYS = {"KEDA_REDIS_ADDRESS", "KEDA_REDIS_SENTINEL_ADDRESSES"}
#: KEDA's two triggers per queue: the queue's waiting list, and its reserved (in-flight) set.
TRIGGERS = ("waiting", "in_flight")

Doc = dict[str, Any]


# --------------------------------------------------------------------------- helpers


def load_docs(path: Path) -> list[Doc]:
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    for d in docs:
        assert isinstance(d, dict), f"{path}: a YAML document is not a mapping"
    return cast(list[Doc], docs)


def load_one(path: Path) -> Doc:
    docs = load_docs(path)
    assert len(docs) == 1, f"{path}: expected one document, got {len(docs)}"
    return docs[0]


def all_yaml_files() -> list[Path]:
    return sorted(p for p in DEPLOY.rglob("*") if p.suffix in {".yaml", ".yml"} and p.is_file())


def kustomization_files() -> list[Path]:
    return sorted(K8S.rglob("kustomization.yaml"))


def key(doc: Doc) -> tuple[str, str]:
    return (str(doc["kind"]), str(doc["metadata"]["name"]))


def sm_merge(base: Any, patch: Any, *, by_name: bool = True) -> Any:
    """Strategic merge: maps merge, null deletes, lists of named maps merge by name.

    Without ``by_name`` (a custom resource: kustomize knows no merge key of its lists) a
    list is replaced whole.
    """
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for k, v in patch.items():
            if v is None:
                out.pop(k, None)
            elif k in out:
                out[k] = sm_merge(out[k], v, by_name=by_name)
            else:
                out[k] = copy.deepcopy(v)
        return out
    named = (
        by_name
        and isinstance(base, list)
        and isinstance(patch, list)
        and all(isinstance(i, dict) and "name" in i for i in [*base, *patch])
    )
    if named:
        merged = [copy.deepcopy(i) for i in base]
        index = {i["name"]: n for n, i in enumerate(merged)}
        for item in patch:
            if item["name"] in index:
                merged[index[item["name"]]] = sm_merge(merged[index[item["name"]]], item)
            else:
                merged.append(copy.deepcopy(item))
        return merged
    return copy.deepcopy(patch)


def pod_templates(doc: Doc) -> Iterator[Doc]:
    if doc["kind"] in {"Deployment", "StatefulSet"}:
        yield cast(Doc, doc["spec"]["template"])


def containers(doc: Doc) -> Iterator[Doc]:
    for tpl in pod_templates(doc):
        yield from cast(list[Doc], tpl["spec"]["containers"])


SUPPORTED_KEYS = {
    "apiVersion",
    "kind",
    "resources",
    "components",
    "patches",
    "images",
    "namespace",
}


def _apply(directory: Path, kust: Doc, docs: list[Doc]) -> list[Doc]:
    unsupported = set(kust) - SUPPORTED_KEYS
    assert not unsupported, f"{directory}: resolver does not support {unsupported}"
    for entry in kust.get("patches", []):
        assert set(entry) == {"path"}, f"{directory}: only file patches without target: {entry}"
        for patch in load_docs(directory / entry["path"]):
            hits = [n for n, d in enumerate(docs) if key(d) == key(patch)]
            assert len(hits) == 1, f"{directory}/{entry['path']}: patch matches {len(hits)}"
            if patch.get("$patch") == "delete":
                del docs[hits[0]]
            else:
                doc = docs[hits[0]]
                docs[hits[0]] = sm_merge(doc, patch, by_name=not is_keda(doc))
    for image in kust.get("images", []):
        for doc in docs:
            for c in containers(doc):
                name, _, tag = str(c["image"]).partition(":")
                if name == image["name"]:
                    c["image"] = f"{image.get('newName', name)}:{image.get('newTag', tag)}"
    if "namespace" in kust:
        for doc in docs:
            if doc["kind"] != "Namespace":
                doc["metadata"]["namespace"] = kust["namespace"]
    return docs


def build(directory: Path, expected_kind: str = "Kustomization") -> list[Doc]:
    """Render a kustomization directory (the subset of kustomize this tree uses)."""
    kust = load_one(directory / "kustomization.yaml")
    assert kust["kind"] == expected_kind, f"{directory}: kind {kust['kind']}"
    docs: list[Doc] = []
    for res in kust.get("resources", []):
        path = directory / res
        docs += build(path) if path.is_dir() else copy.deepcopy(load_docs(path))
    for comp in kust.get("components", []):
        comp_dir = directory / comp
        comp_kust = load_one(comp_dir / "kustomization.yaml")
        assert comp_kust["kind"] == "Component", f"{comp_dir} is not a Component"
        for res in comp_kust.get("resources", []):
            docs += copy.deepcopy(load_docs(comp_dir / res))
        docs = _apply(comp_dir, {k: v for k, v in comp_kust.items() if k != "resources"}, docs)
    docs = _apply(
        directory, {k: v for k, v in kust.items() if k not in {"resources", "components"}}, docs
    )
    keys = [key(d) for d in docs]
    assert len(keys) == len(set(keys)), f"{directory}: duplicate resources {keys}"
    return docs


def by_kind(docs: list[Doc], kind: str) -> dict[str, Doc]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


def worker_config(docs: list[Doc]) -> dict[str, str]:
    return cast(dict[str, str], by_kind(docs, "ConfigMap")["windags-config"]["data"])


def is_keda(doc: Doc) -> bool:
    return str(doc["apiVersion"]).startswith("keda.sh/")


def celery_options(argv: list[str]) -> dict[str, str]:
    """`-Q`, `-n`, `--concurrency`... of a celery worker command line."""
    assert argv[:4] == ["celery", "-A", "workers.fleet.worker", "worker"], argv
    opts: dict[str, str] = {}
    rest = argv[4:]
    while rest:
        flag = rest.pop(0)
        assert flag.startswith("-"), f"stray argument {flag!r} in {argv}"
        opts[flag] = rest.pop(0) if rest and not rest[0].startswith("-") else ""
    return opts


def procfile() -> dict[str, list[str]]:
    text = (REPO / "Procfile").read_text()
    lines = dict(
        (name.strip(), cmd.strip())
        for name, _, cmd in (
            ln.partition(":")
            for ln in text.splitlines()
            if ln.strip() and not ln.lstrip().startswith("#")
        )
    )
    return {name: shlex.split(cmd) for name, cmd in lines.items() if name in QUEUES}


def component(doc: Doc) -> str:
    return str(doc["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"])


def worker_deployments(docs: list[Doc]) -> dict[str, Doc]:
    """Worker Deployments by queue name (the component label); the review page is not one."""
    deployments = by_kind(docs, "Deployment").values()
    return {component(d): d for d in deployments if component(d) in QUEUES}


def procfile_line(name: str) -> list[str]:
    for line in (REPO / "Procfile").read_text().splitlines():
        found, _, command = line.partition(":")
        if found.strip() == name:
            return shlex.split(command)
    raise AssertionError(f"no {name} line in the Procfile")


def queue_of(deployment: Doc) -> str:
    (c,) = deployment["spec"]["template"]["spec"]["containers"]
    return celery_options([*c.get("command", []), *c["args"]])["-Q"]


def hard_limit(config: dict[str, str], queue: str) -> int:
    return int(config.get(f"WINDAGS_{queue.upper()}_HARD_LIMIT_S", "0"))


def celery_queue_names() -> set[str]:
    try:
        from workers.fleet.queues import Queue
    except ModuleNotFoundError:  # not written yet: the mission's literal names
        return QUEUES
    return {str(q.value) for q in Queue}


@pytest.fixture(scope="module", params=VARIANTS, ids=lambda p: str(p.relative_to(K8S)))
def rendered(request: pytest.FixtureRequest) -> tuple[Path, list[Doc]]:
    path = cast(Path, request.param)
    return path, build(path)


# --------------------------------------------------------------------------- files


def test_every_yaml_under_deploy_parses() -> None:
    files = all_yaml_files()
    assert len(files) >= 20, files
    for path in files:
        load_docs(path)


def test_kustomizations_list_only_existing_files_and_every_file_is_used() -> None:
    used: set[Path] = set()
    for kfile in kustomization_files():
        kust = load_one(kfile)
        refs = [
            *kust.get("resources", []),
            *kust.get("components", []),
            *(p["path"] for p in kust.get("patches", [])),
        ]
        for ref in refs:
            target = (kfile.parent / ref).resolve()
            assert target.exists(), f"{kfile}: {ref} does not exist"
            if target.is_dir():
                assert (target / "kustomization.yaml").exists(), f"{kfile}: {ref} not kustomized"
            used.add(target)
    orphans = [
        p for p in K8S.rglob("*.yaml") if p.name != "kustomization.yaml" and p.resolve() not in used
    ]
    assert not orphans, f"YAML files no kustomization uses: {orphans}"


def test_autoscaling_components_are_never_combined() -> None:
    for kfile in kustomization_files():
        comps = {Path(c).name for c in load_one(kfile).get("components", [])}
        assert not {"keda", "hpa"} <= comps, f"{kfile} applies both KEDA and HPA"


# --------------------------------------------------------------------------- schemas


def raw_resource_files() -> list[Path]:
    """Files listed as `resources:` (full objects; patch files are partial by design)."""
    out = set()
    for kfile in kustomization_files():
        for ref in load_one(kfile).get("resources", []):
            path = kfile.parent / ref
            if path.is_file():
                out.add(path)
    return sorted(out)


def validate_k8s(doc: Doc, where: str) -> None:
    for version in K8S_VERSIONS:
        try:
            kubernetes_validate.validate(doc, version, strict=True)
        except kubernetes_validate.ValidationError as e:
            path = ".".join(str(p) for p in e.path)
            pytest.fail(
                f"{where}: {key(doc)} invalid for Kubernetes {version}: {path}: {e.message}"
            )
        except kubernetes_validate.SchemaNotFoundError as e:
            pytest.fail(f"{where}: {e.message}")


@pytest.mark.parametrize("path", raw_resource_files(), ids=lambda p: str(p.relative_to(K8S)))
def test_resource_files_conform_to_kubernetes_schemas(path: Path) -> None:
    for doc in load_docs(path):
        if is_keda(doc):
            check_scaled_object_shape(doc)
        else:
            validate_k8s(doc, str(path))


def test_rendered_variants_conform_to_kubernetes_schemas(rendered: tuple[Path, list[Doc]]) -> None:
    path, docs = rendered
    for doc in docs:
        if is_keda(doc):
            check_scaled_object_shape(doc)
        else:
            validate_k8s(doc, str(path))


def test_a_typo_fails_schema_validation() -> None:
    """The schema check is strict: an unknown (misspelt) field is an error."""
    deployment = copy.deepcopy(worker_deployments(build(K8S / "base"))["stage2"])
    spec = deployment["spec"]["template"]["spec"]
    spec["terminationGracePeriodSecond"] = spec.pop("terminationGracePeriodSeconds")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, K8S_VERSIONS[-1], strict=True)


# --------------------------------------------------------------------------- KEDA

_STR = {"type": "string"}
_INT_STR = {"type": "string", "pattern": "^[0-9]+$"}
_NUM_STR = {"type": "string", "pattern": "^[0-9]+(\\.[0-9]+)?$"}
#: KEDA's redis and redis-sentinel list scalers: the metadata each takes (as documented).
_LIST_METADATA: Doc = {
    "passwordFromEnv": _STR,
    "usernameFromEnv": _STR,
    "listName": _STR,
    "listLength": {"type": "string", "pattern": "^[1-9][0-9]*$"},
    "activationListLength": _INT_STR,
    "databaseIndex": _INT_STR,
    "enableTLS": {"enum": ["true", "false"]},
}
_ADDRESSES: dict[str, Doc] = {
    "redis": {
        "address": {"type": "string", "pattern": "^[^:/]+:[0-9]+$"},
        "addressFromEnv": _STR,
    },
    "redis-sentinel": {
        "addresses": {"type": "string", "pattern": "^[^:/,]+:[0-9]+(,[^:/,]+:[0-9]+)*$"},
        "addressesFromEnv": _STR,
        "sentinelMaster": _STR,
        "sentinelMasterFromEnv": _STR,
        "sentinelUsernameFromEnv": _STR,
        "sentinelPasswordFromEnv": _STR,
    },
}


def _trigger(kind: str) -> Doc:
    """One trigger of ``kind``: where Redis is (one of two ways), and the list to count."""
    where = [name for name in _ADDRESSES[kind] if name.startswith("address")]
    required = [{"required": [name]} for name in where]
    metadata: Doc = {
        "type": "object",
        "additionalProperties": False,
        "required": ["listName", "listLength"],
        "allOf": [{"oneOf": required}],
        "properties": {**_LIST_METADATA, **_ADDRESSES[kind]},
    }
    if kind == "redis-sentinel":
        master = [{"required": ["sentinelMaster"]}, {"required": ["sentinelMasterFromEnv"]}]
        metadata["allOf"].append({"oneOf": master})
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["type", "metadata"],
        "properties": {"type": {"const": kind}, "name": _STR, "metadata": metadata},
    }


SCALED_OBJECT_SCHEMA: Doc = {
    "type": "object",
    "additionalProperties": False,
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "keda.sh/v1alpha1"},
        "kind": {"const": "ScaledObject"},
        "metadata": {"type": "object", "required": ["name"]},
        "spec": {
            "type": "object",
            "additionalProperties": False,
            "required": ["scaleTargetRef", "triggers", "minReplicaCount", "maxReplicaCount"],
            "properties": {
                "scaleTargetRef": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["name"],
                    "properties": {
                        "name": _STR,
                        "kind": {"const": "Deployment"},
                        "apiVersion": {"const": "apps/v1"},
                        "envSourceContainerName": _STR,
                    },
                },
                "pollingInterval": {"type": "integer", "minimum": 1},
                "cooldownPeriod": {"type": "integer", "minimum": 0},
                "initialCooldownPeriod": {"type": "integer", "minimum": 0},
                "minReplicaCount": {"type": "integer", "minimum": 0},
                "maxReplicaCount": {"type": "integer", "minimum": 1},
                "advanced": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "restoreToOriginalReplicaCount": {"type": "boolean"},
                        "horizontalPodAutoscalerConfig": {
                            "type": "object",
                            "additionalProperties": False,
                            "properties": {"name": _STR, "behavior": {"type": "object"}},
                        },
                        "scalingModifiers": {
                            "type": "object",
                            "additionalProperties": False,
                            "required": ["formula", "target"],
                            "properties": {
                                "formula": _STR,
                                "target": _NUM_STR,
                                "activationTarget": _NUM_STR,
                                "metricType": {"enum": ["AverageValue", "Value"]},
                            },
                        },
                    },
                },
                "triggers": {
                    "type": "array",
                    "minItems": 1,
                    "items": {"oneOf": [_trigger("redis"), _trigger("redis-sentinel")]},
                },
            },
        },
    },
}


def check_scaled_object_shape(doc: Doc) -> None:
    jsonschema.validate(doc, SCALED_OBJECT_SCHEMA)
    spec = doc["spec"]
    assert spec["minReplicaCount"] <= spec["maxReplicaCount"], doc["metadata"]["name"]
    modifiers = spec.get("advanced", {}).get("scalingModifiers")
    if modifiers is not None:  # the formula names triggers, each named once
        names = [t.get("name") for t in spec["triggers"]]
        assert None not in names and len(set(names)) == len(names), names
        used = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", modifiers["formula"]))
        assert used <= set(names), (used, names)
    behavior = spec.get("advanced", {}).get("horizontalPodAutoscalerConfig", {}).get("behavior")
    if behavior is not None:  # KEDA hands it to an autoscaling/v2 HPA: validate it as one
        validate_k8s(
            {
                "apiVersion": "autoscaling/v2",
                "kind": "HorizontalPodAutoscaler",
                "metadata": {"name": "probe"},
                "spec": {
                    "scaleTargetRef": {"kind": "Deployment", "name": "x"},
                    "maxReplicas": 1,
                    "behavior": behavior,
                },
            },
            f"ScaledObject {doc['metadata']['name']} behavior",
        )


def test_scaled_object_check_rejects_a_misspelt_field() -> None:
    (so, *_) = load_docs(K8S / "components/keda/scaledobjects.yaml")
    bad = copy.deepcopy(so)
    bad["spec"]["triggers"][0]["metadata"]["listname"] = bad["spec"]["triggers"][0]["metadata"].pop(
        "listName"
    )
    with pytest.raises(jsonschema.ValidationError):
        check_scaled_object_shape(bad)


def keda_variants() -> list[tuple[Path, list[Doc]]]:
    out = [(p, build(p)) for p in OVERLAYS]
    return [(p, docs) for p, docs in out if by_kind(docs, "ScaledObject")]


def test_some_overlay_uses_keda_and_some_uses_hpa() -> None:
    assert keda_variants(), "no overlay renders KEDA ScaledObjects"
    assert any(by_kind(build(p), "HorizontalPodAutoscaler") for p in OVERLAYS)


def triggers_of(so: Doc) -> dict[str, Doc]:
    """A ScaledObject's triggers by name: ``waiting`` and ``in_flight``."""
    found = {t["name"]: t for t in so["spec"]["triggers"]}
    assert tuple(found) == TRIGGERS, (so["metadata"]["name"], tuple(found))
    return found


def scaled_objects_by_queue(docs: list[Doc]) -> dict[str, Doc]:
    config = worker_config(docs)
    return {
        queue_of_list(config, triggers_of(so)["waiting"]["metadata"]["listName"]): so
        for so in by_kind(docs, "ScaledObject").values()
    }


def sentinel_addresses(config: dict[str, str], meta: Doc) -> list[str]:
    """The Sentinels a redis-sentinel trigger asks; it names the workers' primary."""
    assert meta["sentinelMasterFromEnv"] == "WINDAGS_REDIS_SENTINEL_MASTER", meta
    assert config["WINDAGS_REDIS_SENTINEL_MASTER"], "the workers' primary name, read by KEDA too"
    return config[meta["addressesFromEnv"]].split(",")


def test_keda_scales_each_queue_deployment_on_its_own_list() -> None:
    for path, docs in keda_variants():
        deployments = by_kind(docs, "Deployment")
        config = worker_config(docs)
        list_names = []
        for name, so in by_kind(docs, "ScaledObject").items():
            target = so["spec"]["scaleTargetRef"]["name"]
            assert target in deployments, f"{path}: {name} targets missing Deployment {target}"
            triggers = triggers_of(so)
            queue = queue_of_list(config, triggers["waiting"]["metadata"]["listName"])
            assert queue in QUEUES, f"{path}: {name} waits on {queue}"
            assert queue == queue_of(deployments[target]), (
                f"{path}: {name} scales {target} on the wrong queue"
            )
            list_names.append(queue)
            kinds = {t["type"] for t in triggers.values()}
            assert len(kinds) == 1, f"{path}: {name} mixes {kinds}"
            for trigger in triggers.values():
                check_trigger_address(path, docs, trigger)
        assert sorted(list_names) == sorted(QUEUES), f"{path}: one ScaledObject per queue"


def check_trigger_address(path: Path, docs: list[Doc], trigger: Doc) -> None:
    """The Redis (or the Sentinels) KEDA polls is the one the workers use."""
    config, meta = worker_config(docs), trigger["metadata"]
    if trigger["type"] == "redis-sentinel":
        addresses = sentinel_addresses(config, meta)
        assert all(re.fullmatch(r"[^:/,]+:\d+", a) for a in addresses), addresses
        assert "KEDA_REDIS_ADDRESS" not in config, f"{path}: a single Redis beside Sentinels"
    else:
        address = config[meta["addressFromEnv"]]
        if "WINDAGS_REDIS_URL" in config:
            url = re.fullmatch(
                r"rediss?://(?:[^@]*@)?([^:/]+):(\d+)/(\d+)", config["WINDAGS_REDIS_URL"]
            )
            assert url, config["WINDAGS_REDIS_URL"]
            host, port, db = url.groups()
            assert meta["databaseIndex"] == db
            assert address.split(":")[1] == port
            assert address.split(".")[0] == host.split(".")[0]
        if "redis" in by_kind(docs, "Service"):  # KEDA resolves from ITS namespace
            ns = by_kind(docs, "ConfigMap")["windags-config"]["metadata"]["namespace"]
            assert address == f"redis.{ns}.svc.cluster.local:6379", (path, address)
    secret = by_kind(docs, "Secret").get("windags-secrets")
    if secret is not None and "passwordFromEnv" in meta:
        assert meta["passwordFromEnv"] in secret["stringData"]


def queue_of_list(config: dict[str, str], list_name: str) -> str:
    """The Celery queue whose list Redis names ``list_name`` under the config's key prefix."""
    from workers.keys import Keys

    broker = Keys(config["WINDAGS_KEY_PREFIX"]).broker
    assert list_name.startswith(broker), f"{list_name} is not under the key prefix ({broker})"
    return list_name.removeprefix(broker)


def test_keda_counts_each_queues_waiting_list_and_in_flight_set_under_the_key_prefix() -> None:
    """The names the workers write (``Keys.queue``, ``Keys.reserved``), prefix included."""
    from workers.keys import Keys

    celery_queues = celery_queue_names()
    assert celery_queues == QUEUES
    for path, docs in keda_variants():
        keys = Keys(worker_config(docs)["WINDAGS_KEY_PREFIX"])
        for queue, so in scaled_objects_by_queue(docs).items():
            names = {n: t["metadata"]["listName"] for n, t in triggers_of(so).items()}
            assert names == {"waiting": keys.queue(queue), "in_flight": keys.reserved(queue)}, path
        assert set(scaled_objects_by_queue(docs)) == celery_queues


#: ``in_flight / CAPACITY + waiting / LIST_LENGTH``: the replicas a queue needs.
FORMULA = re.compile(r"in_flight / (\d+) \+ waiting / (\d+)")


def replicas_wanted(so: Doc, waiting: int, in_flight: int) -> int:
    """What KEDA asks the HPA for: ceil(formula / target), within min and max."""
    modifiers = so["spec"]["advanced"]["scalingModifiers"]
    found = FORMULA.fullmatch(modifiers["formula"])
    assert found, modifiers["formula"]
    capacity, list_length = (int(n) for n in found.groups())
    metric = in_flight / capacity + waiting / list_length
    wanted = -(-metric // float(modifiers["target"]))  # ceil
    spec = so["spec"]
    return int(min(max(wanted, spec["minReplicaCount"]), spec["maxReplicaCount"]))


def test_keda_sizes_follow_the_documented_formula() -> None:
    """listLength = concurrency x target wait / latency; in flight per pod = concurrency x
    prefetch, from each Deployment's own command line (an overlay may patch it)."""
    for path, docs in keda_variants():
        deployments = worker_deployments(docs)
        for queue, so in scaled_objects_by_queue(docs).items():
            ann = so["metadata"]["annotations"]
            (c,) = deployments[queue]["spec"]["template"]["spec"]["containers"]
            options = celery_options(c["args"])
            concurrency = int(options["--concurrency"])
            capacity = concurrency * int(options["--prefetch-multiplier"])
            assert int(ann["windags.dev/concurrency-per-pod"]) == concurrency, (path, queue)
            list_length = round(
                concurrency
                * float(ann["windags.dev/target-wait-s"])
                / float(ann["windags.dev/mean-task-latency-s"])
            )
            triggers = triggers_of(so)
            assert int(triggers["waiting"]["metadata"]["listLength"]) == list_length, queue
            assert int(triggers["in_flight"]["metadata"]["listLength"]) == capacity, queue
            modifiers = so["spec"]["advanced"]["scalingModifiers"]
            assert modifiers == {
                "formula": f"in_flight / {capacity} + waiting / {list_length}",
                "target": "1",
                "activationTarget": "0",
                "metricType": "AverageValue",
            }, (path, queue)


def test_busy_pods_are_counted_as_needed_and_a_backlog_adds_pods() -> None:
    """What the triggers count: the old list-only trigger saw an idle queue when every
    message was reserved or running, and let KEDA shrink busy pods."""
    for _, docs in keda_variants():
        for queue, so in scaled_objects_by_queue(docs).items():
            modifiers = FORMULA.fullmatch(so["spec"]["advanced"]["scalingModifiers"]["formula"])
            assert modifiers
            capacity, list_length = (int(n) for n in modifiers.groups())
            top = so["spec"]["maxReplicaCount"]
            for busy in range(1, top + 1):  # busy pods, nothing waiting: all of them stay
                assert replicas_wanted(so, 0, busy * capacity) == busy, queue
            # A backlog of one listLength more than the busy pods hold adds one pod.
            assert replicas_wanted(so, list_length, capacity) == min(2, top), queue
            assert replicas_wanted(so, 0, 0) == so["spec"]["minReplicaCount"], queue


def test_stage2_scales_from_zero_and_outwaits_running_reviews() -> None:
    for _, docs in keda_variants():
        config = worker_config(docs)
        so = scaled_objects_by_queue(docs)["stage2"]
        assert so["spec"]["minReplicaCount"] == 0
        assert so["spec"]["maxReplicaCount"] >= 2
        assert so["spec"]["advanced"]["scalingModifiers"]["activationTarget"] == "0"
        assert replicas_wanted(so, 1, 0) == 1, "the first waiting review starts a pod"
        assert replicas_wanted(so, 0, 1) == 1, "a running review keeps its pod"
        assert so["spec"]["cooldownPeriod"] > int(config["WINDAGS_STAGE2_HARD_LIMIT_S"])


def test_the_sentinel_overlay_scales_through_the_sentinels() -> None:
    docs = build(K8S / "overlays/production-sentinel")
    config = worker_config(docs)
    for so in by_kind(docs, "ScaledObject").values():
        assert {t["type"] for t in so["spec"]["triggers"]} == {"redis-sentinel"}
    assert config["WINDAGS_REDIS_SENTINEL_MASTER"]
    assert "KEDA_REDIS_ADDRESS" not in config
    # Everything but the Redis address is production's.
    production = build(K8S / "overlays/production")
    assert worker_deployments(docs) == worker_deployments(production)
    for queue, so in scaled_objects_by_queue(docs).items():
        theirs = scaled_objects_by_queue(production)[queue]
        assert so["spec"]["advanced"] == theirs["spec"]["advanced"], queue
        lists = [t["metadata"]["listName"] for t in so["spec"]["triggers"]]
        assert lists == [t["metadata"]["listName"] for t in theirs["spec"]["triggers"]], queue


def test_each_worker_has_exactly_one_autoscaler(rendered: tuple[Path, list[Doc]]) -> None:
    path, docs = rendered
    targets = [s["spec"]["scaleTargetRef"]["name"] for s in by_kind(docs, "ScaledObject").values()]
    hpas = by_kind(docs, "HorizontalPodAutoscaler").values()
    for hpa in hpas:
        assert hpa["spec"]["scaleTargetRef"]["kind"] == "Deployment"
        assert hpa["spec"]["minReplicas"] >= 1
        targets.append(hpa["spec"]["scaleTargetRef"]["name"])
    assert len(targets) == len(set(targets)), f"{path}: a Deployment has two autoscalers"
    assert set(targets) <= set(by_kind(docs, "Deployment")), f"{path}: autoscaler without target"
    if path != K8S / "base":
        assert set(targets) == set(by_kind(docs, "Deployment")), f"{path}: unscaled Deployment"


# --------------------------------------------------------------------------- workers


def test_worker_commands_match_the_procfile(rendered: tuple[Path, list[Doc]]) -> None:
    """The Procfile's lines; with a model judge, Stage 1 and 2 on the launcher's I/O pool."""
    from workers.fleet.queues import Queue
    from workers.local.worker_commands import concurrency_for, model_judge_in, pool_for

    path, docs = rendered
    expected = procfile()
    model_judge = model_judge_in(
        {**worker_config(docs), "WINDAGS_ANTHROPIC_API_KEY": "from-the-secret"}
    )
    deployments = worker_deployments(docs)
    assert set(deployments) == QUEUES, path
    for queue, deployment in deployments.items():
        (c,) = deployment["spec"]["template"]["spec"]["containers"]
        assert "command" not in c, "keep the image ENTRYPOINT (tini) as PID 1: use args"
        got, want = celery_options(c["args"]), celery_options(expected[queue])
        pool = pool_for(Queue(queue), model_judge=model_judge)
        if pool != want["--pool"]:
            want |= {"--pool": pool, "--concurrency": str(concurrency_for(Queue(queue), pool))}
        assert got["-Q"] == queue, f"{path}: {deployment['metadata']['name']} consumes {got['-Q']}"
        for flag in ("-Q", "-n", "--pool", "--concurrency", "--prefetch-multiplier"):
            assert got.get(flag) == want.get(flag), f"{path}: {queue} {flag}"
        # Beat (the calibration refit) where the Procfile runs it: the router, on threads.
        assert ("-B" in c["args"]) == ("-B" in expected[queue]), f"{path}: {queue} beat"
        assert "-B" not in c["args"] or got["--pool"] == "threads", f"{path}: beat on gevent"


def test_production_runs_the_stages_that_call_claude_on_gevent() -> None:
    docs = build(K8S / "overlays/production")
    assert worker_config(docs)["WINDAGS_JUDGE_BACKEND"] == "anthropic"
    pools = {
        queue: celery_options(d["spec"]["template"]["spec"]["containers"][0]["args"])["--pool"]
        for queue, d in worker_deployments(docs).items()
    }
    assert pools == {"stage1": "gevent", "router": "threads", "stage2": "gevent", "refs": "gevent"}


def test_probes_ping_the_worker_itself(rendered: tuple[Path, list[Doc]]) -> None:
    _, docs = rendered
    for queue, deployment in worker_deployments(docs).items():
        (c,) = deployment["spec"]["template"]["spec"]["containers"]
        node = celery_options(c["args"])["-n"].split("@")[0]
        assert node == queue
        for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
            p = c[probe]
            assert p["exec"]["command"] == ["sh", "-c", PROBE.format(node=node)], (queue, probe)
            assert p["timeoutSeconds"] > 5, (queue, probe)  # above the ping's own timeout


def test_grace_periods_outlast_the_hard_limits(rendered: tuple[Path, list[Doc]]) -> None:
    path, docs = rendered
    config = worker_config(docs)
    for queue, deployment in worker_deployments(docs).items():
        grace = deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
        assert grace > hard_limit(config, queue) + SOFT_SHUTDOWN_S, (path, queue, grace)
    stage2 = worker_deployments(docs)["stage2"]["spec"]["template"]["spec"]
    assert stage2["terminationGracePeriodSeconds"] > (
        int(config["WINDAGS_STAGE2_HARD_LIMIT_S"]) + SOFT_SHUTDOWN_S
    )


def test_each_worker_exposes_and_announces_the_metrics_port_it_serves(
    rendered: tuple[Path, list[Doc]],
) -> None:
    path, docs = rendered
    port = int(worker_config(docs)["WINDAGS_PROMETHEUS_PORT"])
    for queue, deployment in worker_deployments(docs).items():
        template = deployment["spec"]["template"]
        (container,) = template["spec"]["containers"]
        ports = {p["name"]: p["containerPort"] for p in container.get("ports", [])}
        assert ports.get("metrics") == port, (path, queue, ports)
        annotations = template["metadata"].get("annotations", {})
        assert annotations.get("prometheus.io/port") == str(port), (path, queue)
        assert annotations.get("prometheus.io/scrape") == "true", (path, queue)


def test_config_maps_are_valid_settings(
    rendered: tuple[Path, list[Doc]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from workers.settings import Settings

    _, docs = rendered
    check_settings(worker_config(docs), Settings, monkeypatch)


def check_settings(env: dict[str, str], settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    fields = set(settings.model_fields)
    for name in [n for n in os.environ if n.startswith("WINDAGS_")]:
        monkeypatch.delenv(name)
    if "WINDAGS_REDIS_SENTINEL_MASTER" in env and "WINDAGS_REDIS_URL" not in env:
        # The URL (with its password) is in the Secret: the Sentinels KEDA is given.
        sentinels = env["KEDA_REDIS_SENTINEL_ADDRESSES"].split(",")
        monkeypatch.setenv("WINDAGS_REDIS_URL", ";".join(f"sentinel://{a}" for a in sentinels))
    for name, value in env.items():
        if name in NON_SETTINGS_KEYS:
            continue
        assert name.startswith("WINDAGS_"), name
        assert name.removeprefix("WINDAGS_").lower() in fields, f"unknown setting {name}"
        monkeypatch.setenv(name, str(value))
    settings()  # refuses limits that do not nest


def test_workers_read_config_and_secret(rendered: tuple[Path, list[Doc]]) -> None:
    _, docs = rendered
    for deployment in worker_deployments(docs).values():
        (c,) = deployment["spec"]["template"]["spec"]["containers"]
        refs = [(next(iter(e)), next(iter(e.values()))["name"]) for e in c["envFrom"]]
        assert refs == [("configMapRef", "windags-config"), ("secretRef", "windags-secrets")]
        for e in c.get("env", []):
            assert "ANTHROPIC" not in e["name"] and "value" not in e.get("valueFrom", {}), e


def test_anthropic_key_only_in_the_secret(rendered: tuple[Path, list[Doc]]) -> None:
    path, docs = rendered
    for doc in docs:
        if doc["kind"] == "Secret":
            value = doc["stringData"]["WINDAGS_ANTHROPIC_API_KEY"]
            assert not value.startswith("sk-ant-"), "a real-looking key is committed"
        else:
            assert "ANTHROPIC_API_KEY" not in json.dumps(doc), f"{path}: {key(doc)} has the key"
    if not path.name.startswith("production"):
        assert "windags-secrets" in by_kind(docs, "Secret")


def test_an_empty_key_placeholder_never_selects_the_anthropic_judge(
    rendered: tuple[Path, list[Doc]],
) -> None:
    """workers.judges.factory counts any set key, even "", as present under `auto`."""
    path, docs = rendered
    secret = by_kind(docs, "Secret").get("windags-secrets")
    if secret is not None and not secret["stringData"]["WINDAGS_ANTHROPIC_API_KEY"]:
        assert worker_config(docs)["WINDAGS_JUDGE_BACKEND"] == "builtin", path


def test_no_real_key_anywhere_under_deploy() -> None:
    for path in DEPLOY.rglob("*"):
        if path.is_file():
            assert not re.search(r"sk-ant-[A-Za-z0-9_-]{16,}", path.read_text()), path


def test_pods_run_as_non_root_with_limits(rendered: tuple[Path, list[Doc]]) -> None:
    path, docs = rendered
    for doc in docs:
        for tpl in pod_templates(doc):
            pod = tpl["spec"]
            assert pod["securityContext"]["runAsNonRoot"] is True, (path, key(doc))
            assert pod["securityContext"]["runAsUser"] != 0, key(doc)
            assert pod["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault"
            assert pod["automountServiceAccountToken"] is False
        for c in containers(doc):
            sc = c["securityContext"]
            assert sc["allowPrivilegeEscalation"] is False, key(doc)
            assert sc["readOnlyRootFilesystem"] is True, key(doc)
            assert "ALL" in sc["capabilities"]["drop"], key(doc)
            for kind in ("requests", "limits"):
                assert {"cpu", "memory"} <= set(c["resources"][kind]), (key(doc), kind)


def test_selectors_and_references_resolve(rendered: tuple[Path, list[Doc]]) -> None:
    path, docs = rendered
    config_maps, services = by_kind(docs, "ConfigMap"), by_kind(docs, "Service")
    pod_labels = [tpl["metadata"]["labels"] for d in docs for tpl in pod_templates(d)]
    for doc in docs:
        for tpl in pod_templates(doc):
            selector = doc["spec"]["selector"]["matchLabels"]
            assert selector.items() <= tpl["metadata"]["labels"].items(), key(doc)
            for vol in tpl["spec"].get("volumes", []):
                if "configMap" in vol:
                    assert vol["configMap"]["name"] in config_maps, (path, key(doc), vol)
        if doc["kind"] == "StatefulSet":
            assert doc["spec"]["serviceName"] in services, key(doc)
    for name, svc in services.items():
        assert any(svc["spec"]["selector"].items() <= lbl.items() for lbl in pod_labels), name


# --------------------------------------------------------------------------- Redis


def redis_conf(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, _, value = line.strip().partition(" ")
            out[name] = value
    return out


def test_in_cluster_redis_is_persistent_and_never_evicts() -> None:
    docs = build(K8S / "base")
    conf = redis_conf(by_kind(docs, "ConfigMap")["redis-config"]["data"]["redis.conf"])
    assert conf["appendonly"] == "yes"
    assert conf["appendfsync"] == "everysec"
    assert conf["maxmemory-policy"] == "noeviction"
    sts = by_kind(docs, "StatefulSet")["redis"]
    (claim,) = sts["spec"]["volumeClaimTemplates"]
    (c,) = sts["spec"]["template"]["spec"]["containers"]
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    assert mounts[claim["metadata"]["name"]] == conf["dir"] == "/data"
    assert c["args"] == ["redis-server", f"{mounts['config']}/redis.conf"]


@pytest.mark.parametrize("variant", ["production", "production-sentinel"])
def test_production_uses_external_redis_and_an_out_of_band_secret(variant: str) -> None:
    docs = build(K8S / "overlays" / variant)
    assert not by_kind(docs, "StatefulSet"), "production must not run the in-cluster Redis"
    assert not by_kind(docs, "Secret"), "production must not overwrite the real Secret"
    config = worker_config(docs)
    assert "WINDAGS_REDIS_URL" not in config, "the external URL has a password: Secret only"
    assert config["WINDAGS_JUDGE_BACKEND"] == "anthropic"
    assert config["WINDAGS_OTEL_ENABLED"] == "true"
    assert config["WINDAGS_OTEL_ENDPOINT"].endswith(":4318")
    for d in worker_deployments(docs).values():
        (c,) = d["spec"]["template"]["spec"]["containers"]
        assert not c["image"].startswith("windags-evaluator:"), "production pins a registry image"


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="no kubectl binary")
@pytest.mark.parametrize("variant", VARIANTS, ids=lambda p: str(p.relative_to(K8S)))
def test_resolver_agrees_with_kubectl_kustomize(variant: Path) -> None:
    run = subprocess.run(
        ["kubectl", "kustomize", str(variant)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    theirs = sorted((d for d in yaml.safe_load_all(run.stdout) if d), key=key)
    ours = sorted(build(variant), key=key)
    assert [key(d) for d in ours] == [key(d) for d in theirs]
    for a, b in zip(ours, theirs, strict=True):
        assert a == b, key(a)


# --------------------------------------------------------------------------- compose, OTel


def interpolate(value: Any) -> Any:
    """Compose `${VAR:-default}` with an empty environment."""
    if isinstance(value, str):
        return re.sub(r"\$\{[A-Z0-9_]+:-([^}]*)\}", r"\1", value)
    return value


def compose() -> Doc:
    return load_one(DEPLOY / "docker-compose.yml")


def test_compose_runs_redis_three_workers_and_a_collector() -> None:
    services = compose()["services"]
    assert {"redis", "stage1", "router", "stage2", "otel-collector"} <= set(services)
    expected = procfile()
    images = set()
    for queue in QUEUES:
        svc = services[queue]
        images.add(svc["image"])
        got, want = celery_options(svc["command"]), celery_options(expected[queue])
        for flag in ("-Q", "-n", "--pool", "--concurrency", "--prefetch-multiplier"):
            assert got.get(flag) == want.get(flag), (queue, flag)
        assert svc["healthcheck"]["test"] == [
            "CMD-SHELL",
            PROBE.format(node=queue).replace("$HOSTNAME", "$$HOSTNAME"),
        ]
        assert svc["build"]["dockerfile"] == "deploy/Dockerfile"
        assert (DEPLOY / svc["build"]["context"] / svc["build"]["dockerfile"]).exists()
        env = svc["environment"]
        assert env["WINDAGS_ANTHROPIC_API_KEY"] is None, "pass-through from the shell only"
        assert env["WINDAGS_REDIS_URL"].startswith("redis://redis:6379/")
        assert env["WINDAGS_OTEL_ENDPOINT"] == "http://otel-collector:4318"
        grace = int(svc["stop_grace_period"].removesuffix("s"))
        assert grace > hard_limit(env, queue) + SOFT_SHUTDOWN_S, queue
    assert len(images) == 1, "one image for all worker kinds"


def test_compose_serves_the_review_page_on_request_on_the_loopback_only() -> None:
    svc = compose()["services"]["review-ui"]
    assert svc["profiles"] == ["review"], "started with --profile review, not by every up"
    [line] = [
        ln for ln in (REPO / "Procfile").read_text().splitlines() if ln.startswith("review-ui:")
    ]
    assert svc["command"] == shlex.split(line.partition(":")[2])
    assert svc["ports"] == ["127.0.0.1:8400:8400"]
    env = svc["environment"]
    assert (
        env["WINDAGS_REDIS_URL"]
        == compose()["services"]["stage1"]["environment"]["WINDAGS_REDIS_URL"]
    )
    assert (
        env["WINDAGS_KEY_PREFIX"]
        == compose()["services"]["stage1"]["environment"]["WINDAGS_KEY_PREFIX"]
    )
    assert env["WINDAGS_REVIEW_UI_TOKEN"] == "${WINDAGS_REVIEW_UI_TOKEN:-}", "from the shell"
    assert "/healthz" in svc["healthcheck"]["test"][1]


def test_compose_worker_env_is_valid_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    from workers.settings import Settings

    env = compose()["services"]["stage2"]["environment"]
    check_settings(
        {k: interpolate(v) for k, v in env.items() if v is not None}, Settings, monkeypatch
    )


def test_compose_redis_is_persistent_and_never_evicts() -> None:
    redis = compose()["services"]["redis"]
    cmd = redis["command"]
    opts = {cmd[i]: cmd[i + 1] for i in range(1, len(cmd) - 1, 2)}
    assert cmd[0] == "redis-server"
    assert opts["--appendonly"] == "yes"
    assert opts["--appendfsync"] == "everysec"
    assert opts["--maxmemory-policy"] == "noeviction"
    assert any(v.endswith(":/data") for v in redis["volumes"])


def test_otel_collector_receives_otlp_and_prints_traces_and_metrics() -> None:
    svc = compose()["services"]["otel-collector"]
    assert str(svc["image"]).startswith("otel/opentelemetry-collector:")
    mount = next(v for v in svc["volumes"] if v.startswith("./otel-collector.yaml:"))
    assert f"--config={mount.split(':')[1]}" in svc["command"]
    cfg = load_one(DEPLOY / "otel-collector.yaml")
    protocols = cfg["receivers"]["otlp"]["protocols"]
    assert protocols["grpc"]["endpoint"].endswith(":4317")
    assert protocols["http"]["endpoint"].endswith(":4318")
    assert "batch" in cfg["processors"]
    assert cfg["exporters"]["debug"]["verbosity"] == "detailed"
    for signal in ("traces", "metrics"):
        pipeline = cfg["service"]["pipelines"][signal]
        assert pipeline["receivers"] == ["otlp"]
        assert "batch" in pipeline["processors"]
        assert "debug" in pipeline["exporters"]
        for kind in ("receivers", "processors", "exporters"):
            assert set(pipeline[kind]) <= set(cfg[kind]), (signal, kind)


# --------------------------------------------------------------------------- Dockerfile


def test_dockerfile_is_slim_non_root_and_runtime_only() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    lines = [
        ln.strip()
        for ln in text.replace("\\\n", " ").splitlines()
        if ln.strip() and not ln.lstrip().startswith("#")
    ]
    froms = [ln.split()[1] for ln in lines if ln.startswith("FROM ")]
    assert froms and all(f.startswith("python:3.11-slim") for f in froms), froms
    users = [ln.split()[1] for ln in lines if ln.startswith("USER ")]
    assert users and users[-1].split(":")[0] not in {"root", "0"}, users
    assert users[-1].split(":")[0].isdigit(), "numeric UID, so runAsNonRoot can verify it"
    installs = [ln for ln in lines if "pip install" in ln]
    assert any(re.search(r"pip install --no-cache-dir \.(\s|$)", ln) for ln in installs)
    assert not any("[dev]" in ln or "-e " in ln for ln in installs)
    entrypoint = json.loads(next(ln for ln in lines if ln.startswith("ENTRYPOINT "))[11:])
    assert entrypoint[0].endswith("tini")
    cmd = json.loads(next(ln for ln in lines if ln.startswith("CMD "))[4:])
    assert celery_options(cmd) == celery_options(procfile()["stage1"])
    # Everything the build COPYs survives the ignore file; the venv and .git do not.
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text().split()
    assert ignore[ignore.index("*") :][:1] == ["*"]
    for src in ("pyproject.toml", "README.md", "schemas/", "workers/"):
        assert f"!{src}" in ignore, src
    for ln in lines:
        if ln.startswith("COPY ") and "--from=" not in ln:
            for src in ln.split()[1:-1]:
                assert f"!{src.rstrip('/')}" in {i.rstrip("/") for i in ignore}, src


# --------------------------------------------------------------------------- review page


def test_every_variant_runs_the_review_page_as_the_procfile_does(
    rendered: tuple[Path, list[Doc]],
) -> None:
    path, docs = rendered
    others = [d for d in by_kind(docs, "Deployment").values() if component(d) not in QUEUES]
    assert [component(d) for d in others] == ["review-ui"], path
    (page,) = others
    (c,) = page["spec"]["template"]["spec"]["containers"]
    assert "command" not in c and c["args"] == procfile_line("review-ui")
    port = int(c["args"][c["args"].index("--port") + 1])
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    assert ports == {"http": port}
    for probe in ("readinessProbe", "startupProbe"):  # 503 while its Redis does not answer
        assert c[probe]["httpGet"] == {"path": "/healthz", "port": "http"}, probe
    assert c["livenessProbe"]["httpGet"] == {"path": "/livez", "port": "http"}  # never Redis
    refs = [(next(iter(e)), next(iter(e.values()))["name"]) for e in c["envFrom"]]
    assert refs == [("configMapRef", "windags-config"), ("secretRef", "windags-secrets")]
    service = by_kind(docs, "Service")["windags-review-ui"]
    assert service["spec"]["ports"][0]["targetPort"] == "http"


def test_a_shipped_review_token_is_long_enough_and_never_in_the_config_map(
    rendered: tuple[Path, list[Doc]],
) -> None:
    path, docs = rendered
    assert "WINDAGS_REVIEW_UI_TOKEN" not in worker_config(docs), path
    secret = by_kind(docs, "Secret").get("windags-secrets")
    if secret is not None:
        assert len(secret["stringData"]["WINDAGS_REVIEW_UI_TOKEN"]) >= 16
