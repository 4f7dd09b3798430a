"""The Kubernetes deployment (deploy/k8s/, docs/design.md section 10), validated offline: every shipped manifest
against the Kubernetes 1.33 OpenAPI schemas (the npm package kubernetes-models, pinned in
tests/k8s/package.json and package-lock.json, installed once into a cache outside the tree), our lint
(deploy/k8s/lint.py) on the shipped manifests and on one bad manifest per rule (tests/k8s/bad/), the
podFailurePolicy against the documented exit-code table, and the pod scripts (night folder, retries,
merge) on a fake binary and on the real one. Skipped, with the reason, only when node or npm is missing or the npm registry
cannot be reached for the first install."""
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from pathlib import Path

import pytest
import yaml

SOURCE = Path(os.environ.get("IB_SOURCE_DIR", Path(__file__).resolve().parents[2]))
K8S = SOURCE / "deploy" / "k8s"
TESTS = SOURCE / "tests" / "k8s"
BAD = TESTS / "bad"
PY = sys.executable
MANIFESTS = sorted(K8S.glob("*.yaml"))
# Where the pinned npm packages are installed: outside the source tree (a fresh checkout installs once, then
# every run is offline), keyed by the lock file so a new pin installs afresh.
NPM_ROOT = Path(os.environ.get("IB_K8S_NPM_DIR", "/tmp/ib-npm-k8s"))
OFFLINE_HINTS = ("ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "ECONNREFUSED", "ECONNRESET", "ENETUNREACH",
                 "EHOSTUNREACH", "network", "proxy", "ENOTCACHED")

sys.path.insert(0, str(K8S))
import lint  # noqa: E402  deploy/k8s/lint.py: its expected table and its simulation of the rules


def lint_run(*files):
    return subprocess.run([PY, str(K8S / "lint.py"), *map(str, files)], capture_output=True, text=True, timeout=60)


@lru_cache(maxsize=None)
def npm_dir():
    """The folder whose node_modules holds the pinned kubernetes-models; installs it on first use."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        pytest.skip("node and npm are needed for the schema validation (Node.js >= 14); not found on PATH")
    lock = (TESTS / "package-lock.json").read_bytes()
    key = hashlib.sha256(lock + (TESTS / "package.json").read_bytes()).hexdigest()[:16]
    target = NPM_ROOT / key
    stamp = target / ".installed"
    NPM_ROOT.mkdir(parents=True, exist_ok=True)
    with open(NPM_ROOT / ".lock", "w") as lk:  # CTest runs these tests in parallel processes
        fcntl.flock(lk, fcntl.LOCK_EX)
        if stamp.exists():
            return target
        tmp = NPM_ROOT / f"{key}.tmp-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        for name in ("package.json", "package-lock.json"):
            shutil.copy(TESTS / name, tmp / name)
        env = dict(os.environ, npm_config_update_notifier="false", npm_config_fund="false",
                   npm_config_audit="false")
        try:
            r = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--prefer-offline", "--cache",
                                str(NPM_ROOT / "cache"), "--loglevel", "error"], cwd=tmp, env=env,
                               capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired:
            shutil.rmtree(tmp, ignore_errors=True)
            pytest.skip("npm ci of tests/k8s/package-lock.json took over 5 minutes (registry unreachable?)")
        if r.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            out = r.stdout + r.stderr
            hits = [ln.strip() for ln in out.splitlines() if any(h in ln for h in OFFLINE_HINTS)]
            if hits:
                pytest.skip("npm registry unreachable for the first install of kubernetes-models "
                            f"(tests/k8s/package-lock.json): {hits[0][:200]}")
            pytest.fail(f"npm ci failed ({r.returncode}):\n{out}")
        shutil.rmtree(target, ignore_errors=True)
        tmp.rename(target)
        stamp.write_text("ok\n")
    return target


def load(path):
    return [d for d in yaml.safe_load_all(Path(path).read_text()) if d is not None]


def validate(items, tmp_path):
    """Schema-validates [(file, index, object)]; returns the validator's rc and its results by (file, index)."""
    root = npm_dir()
    src = tmp_path / f"objects-{len(list(tmp_path.glob('objects-*')))}.json"
    src.write_text(json.dumps([{"file": str(f), "index": i, "object": o} for f, i, o in items]))
    r = subprocess.run(["node", str(TESTS / "validate.mjs"), str(root), str(src)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode in (0, 1), r.stderr
    results = {(o["file"], o["index"]): o for o in map(json.loads, r.stdout.splitlines())}
    assert len(results) == len(items), r.stdout + r.stderr
    return r.returncode, results


def objects_of(files):
    return [(str(f), i, o) for f in files for i, o in enumerate(load(f))]


def doc(kind, name=None, files=MANIFESTS):
    for f in files:
        for d in load(f):
            if d.get("kind") == kind and (name is None or d["metadata"]["name"] == name):
                return d
    raise AssertionError(f"no {kind}/{name} in {files}")


def nightly_job(d=None):
    return (d or doc("CronJob", "ib-nightly"))["spec"]["jobTemplate"]["spec"]


# --- schema ------------------------------------------------------------------------------------------------


def test_schema_accepts_shipped_manifests(tmp_path):
    assert {p.name for p in MANIFESTS} >= {"nightly-cronjob.yaml", "merge-cronjob.yaml", "results-pvc.yaml",
                                           "device-plugin-sharing.yaml", "nodes-job.yaml"}
    items = objects_of(MANIFESTS)
    rc, results = validate(items, tmp_path)
    bad = [f"{o['file']}#{o['index']} {o['kind']}/{o['name']}: {o['error']}" for o in results.values() if not o["ok"]]
    assert rc == 0 and not bad, "\n".join(bad)
    assert {o["kind"] for o in results.values()} == {"CronJob", "PersistentVolumeClaim", "ConfigMap", "Service", "Job"}


def test_schema_rejects_broken_manifests(tmp_path):
    """The validator is real: a wrong type, a missing required field, a wrong enum value, an unknown kind."""
    cron = doc("CronJob", "ib-nightly")
    broken = {}
    d = json.loads(json.dumps(cron)); nightly_job(d)["completions"] = "two"
    broken["completions"] = d
    d = json.loads(json.dumps(cron)); nightly_job(d)["backoffLimitPerIndex"] = "once"
    broken["backoffLimitPerIndex"] = d
    d = json.loads(json.dumps(cron)); nightly_job(d)["podFailurePolicy"]["rules"][1]["onExitCodes"]["values"] = ["2"]
    broken["values"] = d
    d = json.loads(json.dumps(cron)); nightly_job(d)["completionMode"] = "Numbered"
    broken["completionMode"] = d
    d = json.loads(json.dumps(cron)); del nightly_job(d)["template"]["spec"]["containers"]
    broken["containers"] = d
    d = json.loads(json.dumps(cron)); del d["spec"]["schedule"]
    broken["schedule"] = d
    cm = json.loads(json.dumps(doc("ConfigMap"))); cm["data"]["mps"] = {"version": "v1"}
    broken["mps"] = cm
    broken["kind"] = {"apiVersion": "batch/v1", "kind": "NightlyJob", "metadata": {"name": "x"}}
    d = json.loads(json.dumps(cron)); nightly_job(d)["backoffLimitPerindex"] = 1  # a typo: an unknown field
    broken["backoffLimitPerindex"] = d
    items = [("broken", i, o) for i, o in enumerate(broken.values())]
    rc, results = validate(items, tmp_path)
    assert rc == 1
    for i, field in enumerate(broken):
        o = results[("broken", i)]
        assert not o["ok"], f"the schema accepted a broken {field}"
        assert field in o["error"] or (field == "kind" and "unknown kind" in o["error"]), o["error"]
    assert results[("broken", len(broken) - 1)]["error"] == \
        'strict decoding error: unknown field "spec.jobTemplate.spec.backoffLimitPerindex"'


# Maps whose keys are the user's own (labels, resource names, ConfigMap keys, a Service's label selector): any
# key is allowed there.
FREE_MAPS = {"labels", "annotations", "matchLabels", "limits", "requests", "data", "nodeSelector", "selector"}


def object_paths(node, path=()):
    """Every object (dict) of a manifest that is an API type, by its path of keys and list indices."""
    if isinstance(node, dict):
        if not (path and path[-1] in FREE_MAPS):
            yield path
            for k, v in node.items():
                yield from object_paths(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from object_paths(v, path + (i,))


def test_strict_fields_reach_every_object(tmp_path):
    """An unknown field in any object of any shipped manifest is reported, with its path: the strict check
    follows every type (the OpenAPI schemas alone accept unknown fields)."""
    items, wants = [], []
    for f in MANIFESTS:
        for d in load(f):
            for path in object_paths(d):
                d2 = json.loads(json.dumps(d))
                node = d2
                for k in path:
                    node = node[k]
                node["zzUnknown"] = 1
                items.append(("strict", len(items), d2))
                dotted = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path + ("zzUnknown",))
                wants.append(f'strict decoding error: unknown field "{dotted.lstrip(".")}"')
    assert len(items) > 60
    rc, results = validate(items, tmp_path)
    assert rc == 1
    missed = [w for i, w in enumerate(wants) if results[("strict", i)]["error"] != w]
    assert not missed, "\n".join(missed[:10])


def test_schema_knows_job_failure_fields(tmp_path):
    """The pinned schema is one of Kubernetes >= 1.33: it has podFailurePolicy, backoffLimitPerIndex,
    maxFailedIndexes and podReplacementPolicy with their types (were they unknown to it, the strict check
    would report them, and a wrong type would go unseen)."""
    schema = (npm_dir() / "node_modules" / "kubernetes-models" / "_schemas" / "IoK8sApiBatchV1JobSpec.js").read_text()
    for field in ("podFailurePolicy", "backoffLimitPerIndex", "maxFailedIndexes", "podReplacementPolicy",
                  "successPolicy"):
        assert field in schema, field
    items = []
    for field, value in (("maxFailedIndexes", "all"), ("podReplacementPolicy", "Sometimes"),
                         ("podFailurePolicy", {"rules": [{"action": "FailIndex"}]})):
        d = json.loads(json.dumps(doc("CronJob", "ib-nightly")))
        nightly_job(d)[field] = value
        items.append(("typed", len(items), d))
    d = json.loads(json.dumps(doc("CronJob", "ib-nightly")))
    nightly_job(d)["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"] = 1
    items.append(("typed", len(items), d))
    rc, results = validate(items, tmp_path)
    assert [results[("typed", i)]["ok"] for i in range(len(items))] == [False, False, True, False], results
    # The third is schema-valid (a rule without a requirement): lint.py is what catches it.


def test_bad_manifests_pass_schema(tmp_path):
    """Every bad manifest of the lint tests is schema-valid (the lint catches what the schema cannot), but
    those marked `# schema: invalid` (an enum the schema knows too; lint.py runs without the schema)."""
    files = sorted(BAD.glob("*.yaml"))
    assert len(files) >= 20
    invalid = {str(f) for f in files if "\n# schema: invalid\n" in f.read_text()}
    assert len(invalid) == 2
    rc, results = validate(objects_of(files), tmp_path)
    wrong = [f"{o['file']}: {o['error'] or 'accepted'}" for o in results.values() if o["ok"] == (o["file"] in invalid)]
    assert rc == 1 and not wrong, "\n".join(wrong)


# --- lint --------------------------------------------------------------------------------------------------


def test_lint_clean_on_shipped_manifests():
    r = lint_run(*MANIFESTS)
    assert r.returncode == 0 and r.stdout == "" and r.stderr == "", r.stdout + r.stderr


def expected_findings(path):
    return [m.group(1) for m in re.finditer(r"^# expect: (.+)$", path.read_text(), re.M)]


def test_lint_reports_each_bad_manifest():
    files = sorted(BAD.glob("*.yaml"))
    seen = set()
    for f in files:
        want = expected_findings(f)
        assert want, f"{f} has no '# expect:' line"
        r = lint_run(f)
        assert r.returncode == 1, f"{f}: rc {r.returncode}\n{r.stdout}{r.stderr}"
        lines = r.stdout.splitlines()
        for line in lines:
            assert line.startswith(f"{f}: "), line
            assert any(line.endswith(": " + w) or f": {w} (" in line for w in want), \
                f"{f}: an unexpected finding: {line}"
        for w in want:
            assert any(w in line for line in lines), f"{f}: '{w}' not reported:\n{r.stdout}"
            seen.add(w)
    # One bad manifest per rule of the brief, at least.
    for rule in ("podFailurePolicy requires restartPolicy Never", "at most 255 values", "sorted in ascending order",
                 "must not contain duplicates", "value 0 cannot be used with operator In",
                 "exactly one of onExitCodes and onPodConditions", "action FailIndex requires backoffLimitPerIndex",
                 "completionMode Indexed requires completions", "backoffLimitPerIndex requires completionMode Indexed",
                 "maxFailedIndexes requires backoffLimitPerIndex", "must be less than or equal to completions",
                 "a cron schedule has 5 fields", "topologyKey is required", "exit code 1 must map to FailIndex",
                 "exit code 2 must map to FailJob", "exit code 130 must map to Count",
                 "DisruptionTarget pod must map to Ignore", "--expect-tasks 3 differs",
                 "a pod with GPUs needs a memory-backed /dev/shm", "--join-timeout 60 is under 600 s"):
        assert any(rule in w for w in seen), f"no bad manifest for: {rule}"


def test_lint_exit_codes_on_unreadable_input(tmp_path):
    r = lint_run(tmp_path / "absent.yaml")
    assert r.returncode == 2 and "cannot read" in r.stderr and r.stdout == ""
    (tmp_path / "broken.yaml").write_text("kind: Job\nspec: [unclosed\n")
    r = lint_run(tmp_path / "broken.yaml")
    assert r.returncode == 2 and "not YAML" in r.stderr
    r = lint_run()
    assert r.returncode == 2
    # Objects of shapes no API type has: findings, never a traceback.
    r = lint_run(TESTS / "malformed.yaml")
    assert r.returncode == 1 and "Traceback" not in r.stderr and r.stderr == "", r.stderr
    assert "CronJob/w.spec.schedule: schedule must be a cron string, not int" in r.stdout
    # Several files at once: findings of each, exit 1.
    r = lint_run(BAD / "exit-codes-unsorted.yaml", *MANIFESTS, BAD / "schedule-tz.yaml")
    assert r.returncode == 1 and len(r.stdout.splitlines()) == 2, r.stdout


# --- the documented exit-code table ----------------------------------------------------------------------------


def readme_table():
    """{exit code or 'DisruptionTarget': action} from deploy/k8s/README.md's section "Exit codes"."""
    text = (K8S / "README.md").read_text()
    m = re.search(r"^## Exit codes\n(.*?)(?=^## )", text, re.M | re.S)
    assert m, "deploy/k8s/README.md has no '## Exit codes' section"
    table = {}
    for line in m.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if len(cells) < 3:
            continue
        key, action = cells[0].strip("`"), re.sub(r"[`*]", "", cells[2]).split()
        if re.fullmatch(r"\d+", key):
            table[int(key)] = action[0] if action else ""
        elif "DisruptionTarget" in key:
            table["DisruptionTarget"] = action[0]
    return table


def test_pod_failure_policy_matches_documented_table():
    table = readme_table()
    assert table.get("DisruptionTarget") == "Ignore"
    codes = {k: v for k, v in table.items() if isinstance(k, int) and k != 0}
    assert set(codes) == {1, 2, 3, 4, 5, 130}, table
    assert codes == lint.EXPECTED_ACTIONS
    job = nightly_job()
    rules = job["podFailurePolicy"]["rules"]
    for code, action in codes.items():
        assert lint.simulate(rules, exit_code=code) == action, code
    # A disrupted pod is ignored whatever it exited with (the rule comes first).
    for code in (1, 2, 4, 130, 137):
        assert lint.simulate(rules, exit_code=code, condition="DisruptionTarget") == "Ignore"
    assert lint.simulate(rules, exit_code=137) is None  # the default: counted, retried once
    assert job["backoffLimitPerIndex"] == 1 and job["maxFailedIndexes"] == job["completions"] == job["parallelism"]
    assert job["template"]["spec"]["restartPolicy"] == "Never"
    # The merge Job: a verdict or bad input is final, nothing retried.
    merge = doc("CronJob", "ib-fleet-merge")["spec"]["jobTemplate"]["spec"]
    for code in (1, 2, 5):
        assert lint.simulate(merge["podFailurePolicy"]["rules"], exit_code=code, container="merge") == "FailJob"


# --- the manifests' contents ----------------------------------------------------------------------------------


def test_nightly_job_shape():
    cron = doc("CronJob", "ib-nightly")
    assert "namespace" not in cron["metadata"] and all("namespace" not in d["metadata"] for f in MANIFESTS
                                                       for d in load(f))
    job = nightly_job(cron)
    pod = job["template"]["spec"]
    assert job["completionMode"] == "Indexed"
    assert pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0][
        "matchExpressions"][0] == {"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}
    term = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert term["topologyKey"] == "kubernetes.io/hostname"
    assert term["labelSelector"]["matchLabels"].items() <= job["template"]["metadata"]["labels"].items()
    c = pod["containers"][0]
    assert c["name"] == "bench" and c["resources"]["limits"]["nvidia.com/gpu"] == 1
    env = {e["name"]: e for e in c["env"]}
    assert env["NODE_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName"
    assert env["JOB_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.labels['batch.kubernetes.io/job-name']"
    assert c["command"] == ["/opt/interference-bench/deploy/k8s/ib-k8s-task.sh"]
    assert env["IB_BINARY"]["value"] == "/opt/interference-bench/bin/interference-bench"
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    vols = {v["name"]: v for v in pod["volumes"]}
    assert vols["results"]["persistentVolumeClaim"]["claimName"] == doc("PersistentVolumeClaim")["metadata"]["name"]
    assert mounts["results"] == "/results" and c["args"][:2] == ["--results-root", "/results"]
    assert doc("PersistentVolumeClaim")["spec"]["accessModes"] == ["ReadWriteMany"]
    # The merge runs after the nightly window: its schedule is later than start + activeDeadlineSeconds.
    merge = doc("CronJob", "ib-fleet-merge")
    start = [int(x) for x in cron["spec"]["schedule"].split()[:2]]
    at = [int(x) for x in merge["spec"]["schedule"].split()[:2]]
    assert cron["spec"]["timeZone"] == merge["spec"]["timeZone"]
    assert (at[1] * 60 + at[0]) - (start[1] * 60 + start[0]) > job["activeDeadlineSeconds"] / 60
    assert cron["spec"]["concurrencyPolicy"] == "Forbid"


def test_device_plugin_configs_match_modes():
    cm = doc("ConfigMap", "ib-device-plugin-configs")
    cfgs = {k: yaml.safe_load(v) for k, v in cm["data"].items()}
    assert set(cfgs) == {"exclusive", "time-slicing", "mps"}
    assert all(c["version"] == "v1" for c in cfgs.values())
    assert "sharing" not in cfgs["exclusive"]
    ts = cfgs["time-slicing"]["sharing"]
    assert set(ts) == {"timeSlicing"}
    assert ts["timeSlicing"]["resources"] == [{"name": "nvidia.com/gpu", "replicas": 4}]
    mps = cfgs["mps"]["sharing"]
    assert set(mps) == {"mps"} and mps["mps"]["resources"] == [{"name": "nvidia.com/gpu", "replicas": 4}]
    readme = (K8S / "README.md").read_text()
    assert "NVIDIA/k8s-device-plugin#491" in readme and "Kubernetes >= 1.33" in readme


def test_render_sets_the_node_count(tmp_path):
    (tmp_path / "nodes").write_text("gpu-a\ngpu-b\ngpu-c\ngpu-d\ngpu-e\n")
    r = subprocess.run([PY, str(K8S / "render.py"), "--nodes", "5", "--image", "registry.example/ib:1.2",
                        "--expect-nodes", str(tmp_path / "nodes"), "--run-args", "--suite default --backend cuda"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "rendered.yaml"
    out.write_text(r.stdout)
    lr = lint_run(out)
    assert lr.returncode == 0, lr.stdout
    files = [out]
    job = nightly_job(doc("CronJob", "ib-nightly", files))
    assert job["completions"] == job["parallelism"] == job["maxFailedIndexes"] == 5
    merge = doc("CronJob", "ib-fleet-merge", files)["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    args = merge["containers"][0]["args"]
    assert args[args.index("--expect-tasks") + 1] == "5" and args[-2:] == ["--expect-nodes", "/etc/ib-fleet/nodes"]
    assert doc("ConfigMap", "ib-fleet-nodes", files)["data"]["nodes"].split() == ["gpu-a", "gpu-b", "gpu-c", "gpu-d",
                                                                                     "gpu-e"]
    bench = job["template"]["spec"]["containers"][0]
    assert bench["image"] == "registry.example/ib:1.2"
    assert bench["args"] == ["--results-root", "/results", "--", "--suite", "default", "--backend", "cuda"]
    rc, results = validate(objects_of(files), tmp_path)
    assert rc == 0, results
    # A nodes file that disagrees with --nodes is refused.
    r = subprocess.run([PY, str(K8S / "render.py"), "--nodes", "4", "--expect-nodes", str(tmp_path / "nodes")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "names 5 nodes" in r.stderr


# --- the pod scripts on a fake binary -------------------------------------------------------------------------

FAKE = """#!/usr/bin/env bash
# Fake interference-bench: records its arguments, makes --out, exits $FAKE_RC.
printf '%s\\n' "$@" >>"$FAKE_LOG"
for ((i = 1; i <= $#; i++)); do
  if [ "${!i}" = --out ]; then j=$((i + 1)); mkdir -p "${!j}"; echo '{}' >"${!j}/fake.json"; fi
done
exit "${FAKE_RC:-0}"
"""


def fake_binary(tmp_path):
    b = tmp_path / "fake-ib"
    b.write_text(FAKE)
    b.chmod(0o755)
    return b


def run_task(tmp_path, root, node, index, job_name, rc, *run_args):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM", "JOB_", "NIGHT"))}
    env.update(NODE_NAME=node, JOB_COMPLETION_INDEX=str(index), JOB_NAME=job_name, FAKE_RC=str(rc),
               FAKE_LOG=str(tmp_path / "log"), IB_BINARY=str(fake_binary(tmp_path)),
               IB_TASK_WRAPPER=str(SOURCE / "deploy" / "ib-task.sh"))
    return subprocess.run([str(K8S / "ib-k8s-task.sh"), "--results-root", str(root), "--", *run_args],
                          env=env, capture_output=True, text=True, timeout=60)


def test_task_script_night_folder_and_retries(tmp_path):
    if not (SOURCE / "deploy" / "ib-task.sh").exists():
        pytest.skip("deploy/ib-task.sh (the per-task wrapper) is not in this tree")
    root = tmp_path / "results"
    root.mkdir()
    # The CronJob names its Jobs <name>-<scheduled time in minutes since the epoch>.
    minutes = int(datetime.now(timezone.utc).timestamp()) // 60 - 7
    night = datetime.fromtimestamp(minutes * 60, timezone.utc).strftime("%Y-%m-%dT%H%MZ")
    job = f"ib-nightly-{minutes}"
    fleet = root / "nights" / night
    r = run_task(tmp_path, root, "gpu-a", 11, job, 0, "--suite", "nightly")
    assert r.returncode == 0, r.stderr
    task = json.loads((fleet / "tasks" / "gpu-a.11" / "task.json").read_text())
    assert task["node"] == "gpu-a" and task["task_index"] == 11 and task["exit_code"] == 0
    assert task["scheduler"] == "kubernetes" and task["job_id"] == job
    log = (tmp_path / "log").read_text().split("\n")
    assert log[:5] == ["run", "--out", str(fleet / "tasks" / "gpu-a.11" / "results"), "--suite", "nightly"]
    # Index 1 fails with a workload error (4) on gpu-a, and its retry runs on gpu-b: the earlier attempt is
    # moved aside (gpu-a.11 is another index and stays), the retry writes a fresh task folder.
    r = run_task(tmp_path, root, "gpu-a", 1, job, 4)
    assert r.returncode == 4
    r = run_task(tmp_path, root, "gpu-b", 1, job, 0)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (fleet / "tasks").iterdir()) == ["gpu-a.11", "gpu-b.1"]
    assert json.loads((fleet / "attempts" / "gpu-a.1.1" / "task.json").read_text())["exit_code"] == 4
    # A second retry on the same node (after a disruption: not counted, so no failure count to go by).
    r = run_task(tmp_path, root, "gpu-b", 1, job, 5)
    assert r.returncode == 5
    assert sorted(p.name for p in (fleet / "attempts").iterdir()) == ["gpu-a.1.1", "gpu-b.1.1"]
    assert json.loads((fleet / "tasks" / "gpu-b.1" / "task.json").read_text())["exit_code"] == 5
    # A Job made by hand (kubectl create job --from=cronjob/ib-nightly) gets its own folder by name.
    r = run_task(tmp_path, root, "gpu-a", 0, "ib-manual-1", 0)
    assert r.returncode == 0 and (root / "nights" / "ib-manual-1" / "tasks" / "gpu-a.0" / "task.json").exists()
    # A number that is no time near now (a date someone put in the name) is a name, not a schedule.
    r = run_task(tmp_path, root, "gpu-a", 0, "ib-nightly-20261202", 0)
    assert r.returncode == 0 and (root / "nights" / "ib-nightly-20261202" / "tasks" / "gpu-a.0").is_dir()
    assert sorted(p.name for p in (root / "nights").iterdir()) == sorted([night, "ib-manual-1", "ib-nightly-20261202"])
    # Wrong set-ups are exit 2 (FailJob): no index, no volume.
    r = run_task(tmp_path, root, "gpu-a", "", job, 0)
    assert r.returncode == 2 and "JOB_COMPLETION_INDEX" in r.stderr
    r = run_task(tmp_path, tmp_path / "no-volume", "gpu-a", 0, job, 0)
    assert r.returncode == 2 and "results volume" in r.stderr


def run_merge(tmp_path, root, rc, night=None, tasks="2"):
    env = {k: v for k, v in os.environ.items() if k != "NIGHT"}
    env.update(FAKE_RC=str(rc), FAKE_LOG=str(tmp_path / "mlog"), IB_BINARY=str(fake_binary(tmp_path)))
    if night:
        env["NIGHT"] = night
    (tmp_path / "mlog").unlink(missing_ok=True)
    r = subprocess.run([str(K8S / "ib-k8s-merge.sh"), "--results-root", str(root), "--expect-tasks", tasks,
                        "--max-age-hours", "20"], env=env, capture_output=True, text=True, timeout=60)
    log = (tmp_path / "mlog").read_text().splitlines() if (tmp_path / "mlog").exists() else None
    return r, log


def test_merge_script_merges_the_newest_night(tmp_path):
    root = tmp_path / "results"
    nights = root / "nights"
    now = datetime.now(timezone.utc)
    old = (now - timedelta(hours=30)).strftime("%Y-%m-%dT%H%MZ")
    new = (now - timedelta(hours=3)).strftime("%Y-%m-%dT%H%MZ")
    (nights / old / "tasks").mkdir(parents=True)
    (nights / "ib-manual-1" / "tasks").mkdir(parents=True)
    # Only yesterday's night: tonight's never started, which is a failure, not a re-merge.
    r, log = run_merge(tmp_path, root, 0)
    assert r.returncode == 1 and log is None and "never started" in r.stderr
    (nights / new).mkdir()  # tonight's pods all stayed Pending: no tasks folder at all
    r, log = run_merge(tmp_path, root, 1)
    assert r.returncode == 1, r.stderr
    assert log == ["merge", str(nights / new / "tasks"), "--expect-tasks", "2", "--out", str(nights / new / "fleet")]
    assert (nights / new / "tasks").is_dir() and (nights / "LATEST").read_text() == new + "\n"
    # Merged again (a replaced pod, a re-run by hand): the earlier report is kept aside.
    r, log = run_merge(tmp_path, root, 0)
    assert r.returncode == 0 and (nights / new / "fleet.1" / "fake.json").exists()
    # A night named by hand; bad input passes through and LATEST stays.
    r, log = run_merge(tmp_path, root, 2, night="ib-manual-1")
    assert r.returncode == 2 and log[1] == str(nights / "ib-manual-1" / "tasks")
    assert (nights / "LATEST").read_text() == new + "\n"
    r, log = run_merge(tmp_path, root, 0, tasks="0")
    assert r.returncode == 2 and log is None


def test_task_and_merge_scripts_with_the_real_binary(tmp_path):
    """The pod scripts around the real binary and deploy/ib-task.sh: a run refused as bad input (exit 2,
    at once), retried on the same node, and the merge of the night with one index missing."""
    binary = os.environ.get("IB_BINARY", "")
    wrapper = SOURCE / "deploy" / "ib-task.sh"
    if not wrapper.exists():
        pytest.skip("deploy/ib-task.sh (the per-task wrapper) is not in this tree")
    root = tmp_path / "results"
    root.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM", "JOB_", "NIGHT"))}
    env.update(NODE_NAME="node-a", JOB_COMPLETION_INDEX="0", JOB_NAME="ib-manual-1", IB_BINARY=binary,
               IB_TASK_WRAPPER=str(wrapper))
    for _ in range(2):
        r = subprocess.run([str(K8S / "ib-k8s-task.sh"), "--results-root", str(root), "--", "--warmup", "0"],
                           env=env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 2, r.stderr
    night = root / "nights" / "ib-manual-1"
    assert json.loads((night / "attempts" / "node-a.0.1" / "task.json").read_text())["exit_code"] == 2
    r = subprocess.run([str(K8S / "ib-k8s-merge.sh"), "--results-root", str(root), "--expect-tasks", "2"],
                       env=dict(env, NIGHT="ib-manual-1"), capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, r.stderr
    fleet = json.loads((night / "fleet" / "fleet.json").read_text())
    members = {m["name"]: m for m in fleet["members"]}
    assert set(members) == {"node-a.0", "task 1"}, members.keys()
    assert members["node-a.0"]["status"] == "bad_input" and members["node-a.0"]["job_id"] == "ib-manual-1"
    assert members["node-a.0"]["scheduler"] == "kubernetes" and members["task 1"]["status"] == "missing"
    assert (root / "nights" / "LATEST").read_text() == "ib-manual-1\n"
