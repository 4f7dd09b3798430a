#!/usr/bin/env python3
"""Lint of the Kubernetes manifests: what the OpenAPI schema accepts but the API server rejects, and our own
exit-code policy (deploy/k8s/README.md). A schema validator checks types and required fields; these rules
come from the Job and CronJob validation of the API server (pkg/apis/batch/validation) and the field
documentation of the batch/v1 API reference, each cited beside its check.

Usage: lint.py FILE.yaml [FILE.yaml ...]
Prints one line per finding, `FILE: PATH: problem`, where PATH is Kind/name.field.path. Exits 1 when there
are findings, 0 when clean, 2 when a file cannot be read or parsed. The cross-document checks (the node
count N in the nightly Job and in the merge's --expect-tasks) look at all files given together.
Needs python3 and python3-yaml only.
"""
import re
import sys

import yaml

# The documented mapping of the run's exit codes onto podFailurePolicy actions (deploy/k8s/README.md,
# "Exit codes"; docs/design.md section 10). 130 (interrupted) is our decision: retried once, like 4.
EXPECTED_ACTIONS = {1: "FailIndex", 2: "FailJob", 3: "FailIndex", 4: "Count", 5: "FailIndex", 130: "Count"}
EXPECTED_DISRUPTION = "Ignore"
# The nightly benchmark Job is the one whose pod template carries this label.
NIGHTLY_COMPONENT = "nightly-task"
BENCH_CONTAINER = "bench"
# A run across nodes (nodes-job.yaml) is the Job whose pod template carries this label; every pod waits for all
# of them at the join, so one pulling a multi-GB image must not lose it (issue 49).
NODES_COMPONENT = "nodes-task"
MIN_NODES_JOIN_TIMEOUT_S = 600

CRON_MACROS = {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
CRON_FIELD = re.compile(r"^(\*|\?|[0-9A-Za-z]+(-[0-9A-Za-z]+)?)(/[0-9]+)?(,(\*|[0-9A-Za-z]+(-[0-9A-Za-z]+)?)(/[0-9]+)?)*$")


class Findings:
    def __init__(self):
        self.lines = []

    def add(self, file, path, problem):
        self.lines.append(f"{file}: {path}: {problem}")


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def d(v):
    """v when it is a mapping, else {} (a wrong type is the schema validator's to report)."""
    return v if isinstance(v, dict) else {}


def lst(v):
    """v when it is a list, else []."""
    return v if isinstance(v, list) else []


def jobs_of(doc, name):
    """(path, JobSpec) for a Job or a CronJob's jobTemplate."""
    kind = doc.get("kind")
    spec = doc.get("spec")
    if not isinstance(spec, dict):
        return []
    if kind == "Job":
        return [(f"Job/{name}.spec", spec)]
    if kind == "CronJob":
        jt = spec.get("jobTemplate")
        if isinstance(jt, dict) and isinstance(jt.get("spec"), dict):
            return [(f"CronJob/{name}.spec.jobTemplate.spec", jt["spec"])]
    return []


def pod_specs_of(doc, name):
    """(path, PodSpec) of every pod template in a workload object."""
    out = []
    for path, job in jobs_of(doc, name):
        pod = d(job.get("template")).get("spec")
        if isinstance(pod, dict):
            out.append((f"{path}.template.spec", pod))
    kind = doc.get("kind")
    spec = doc.get("spec")
    if kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet") and isinstance(spec, dict):
        pod = d(spec.get("template")).get("spec")
        if isinstance(pod, dict):
            out.append((f"{kind}/{name}.spec.template.spec", pod))
    if kind == "Pod" and isinstance(spec, dict):
        out.append((f"Pod/{name}.spec", spec))
    return out


def check_schedule(f, file, path, schedule):
    # CronJobSpec.schedule: "The schedule in Cron format" (robfig/cron ParseStandard: 5 fields or a
    # @descriptor); since 1.27 TZ=/CRON_TZ= in the schedule is rejected in favour of spec.timeZone.
    if not isinstance(schedule, str):
        f.add(file, path, f"schedule must be a cron string, not {type(schedule).__name__}")
        return
    if not schedule.strip():
        f.add(file, path, "schedule is empty (a cron schedule is required)")
        return
    s = schedule.strip()
    if re.match(r"^(CRON_)?TZ=", s):
        f.add(file, path, "TZ or CRON_TZ in the schedule is rejected since Kubernetes 1.27: use spec.timeZone")
        return
    if s.startswith("@"):
        if s.split()[0] not in CRON_MACROS and not s.startswith("@every "):
            f.add(file, path, f"unknown schedule descriptor '{s}'")
        return
    fields = s.split()
    if len(fields) != 5:
        f.add(file, path, f"a cron schedule has 5 fields (minute hour day-of-month month day-of-week), "
                          f"'{s}' has {len(fields)}")
        return
    for field in fields:
        if not CRON_FIELD.match(field):
            f.add(file, path, f"cron field '{field}' is not valid")


def check_exit_codes(f, file, path, req, container_names):
    # PodFailurePolicyOnExitCodesRequirement (batch/v1 API reference): operator In or NotIn; values:
    # "The list of values must be ordered and must not contain duplicates. Value '0' cannot be used for the
    # In operator. At least one element is required. At most 255 elements are allowed." containerName:
    # "should match one the container or initContainer names in the pod template" (validated).
    if not isinstance(req, dict):
        return
    op = req.get("operator")
    if op not in ("In", "NotIn"):
        f.add(file, f"{path}.operator", f"operator must be In or NotIn, not {op!r}")
    values = req.get("values")
    if not isinstance(values, list):
        f.add(file, f"{path}.values", "values is required (a list of exit codes)")
        return
    if not values:
        f.add(file, f"{path}.values", "values needs at least one exit code")
    if len(values) > 255:
        f.add(file, f"{path}.values", f"at most 255 values are allowed, there are {len(values)}")
    ints = [v for v in values if is_int(v)]
    if len(set(ints)) != len(ints):
        dups = sorted({v for v in ints if ints.count(v) > 1})
        f.add(file, f"{path}.values", f"values must not contain duplicates ({', '.join(map(str, dups))})")
    if any(a > b for a, b in zip(ints, ints[1:])):
        f.add(file, f"{path}.values", "values must be sorted in ascending order")
    if op == "In" and 0 in ints:
        f.add(file, f"{path}.values", "value 0 cannot be used with operator In")
    name = req.get("containerName")
    if name is not None and container_names is not None and name not in container_names:
        f.add(file, f"{path}.containerName",
              f"containerName '{name}' is not a container or initContainer of the pod template")


def check_job(f, file, path, job, cron=False):
    pod = d(d(job.get("template")).get("spec"))
    names = {str(c.get("name")) for key in ("containers", "initContainers") for c in lst(pod.get(key))
             if isinstance(c, dict)}
    mode = job.get("completionMode", "NonIndexed")
    completions = job.get("completions")
    bpi = job.get("backoffLimitPerIndex")
    mfi = job.get("maxFailedIndexes")
    policy = job.get("podFailurePolicy")

    # JobSpec.completionMode Indexed: "the Job is considered complete when there is one successfully
    # completed Pod for each index" -> completions is required (validateJobSpec: "when completion mode
    # is Indexed" spec.completions Required).
    if mode == "Indexed" and completions is None:
        f.add(file, f"{path}.completions", "completionMode Indexed requires completions")
    # JobSpec.backoffLimitPerIndex: "It can only be set when Job's completionMode=Indexed, and the Pod's
    # restart policy is Never."
    if bpi is not None:
        if mode != "Indexed":
            f.add(file, f"{path}.backoffLimitPerIndex", "backoffLimitPerIndex requires completionMode Indexed")
        if pod.get("restartPolicy") != "Never":
            f.add(file, f"{path}.template.spec.restartPolicy",
                  "backoffLimitPerIndex requires restartPolicy Never on the pod template")
    # JobSpec.maxFailedIndexes: "It can only be specified when backoffLimitPerIndex is set. It can be null
    # or up to completions."
    if mfi is not None:
        if bpi is None:
            f.add(file, f"{path}.maxFailedIndexes", "maxFailedIndexes requires backoffLimitPerIndex")
        if is_int(mfi) and is_int(completions) and mfi > completions:
            f.add(file, f"{path}.maxFailedIndexes",
                  f"maxFailedIndexes ({mfi}) must be less than or equal to completions ({completions})")
    # JobSpec.podFailurePolicy: "This field cannot be used in combination with restartPolicy=OnFailure"
    # (validation: the pod template's restartPolicy must be Never).
    if isinstance(policy, dict):
        if pod.get("restartPolicy") != "Never":
            f.add(file, f"{path}.template.spec.restartPolicy",
                  "podFailurePolicy requires restartPolicy Never on the pod template")
        rules = policy.get("rules")
        if not isinstance(rules, list):
            f.add(file, f"{path}.podFailurePolicy.rules", "rules is required")
            rules = []
        if len(rules) > 20:
            f.add(file, f"{path}.podFailurePolicy.rules", f"at most 20 rules are allowed, there are {len(rules)}")
        for i, rule in enumerate(rules):
            rpath = f"{path}.podFailurePolicy.rules[{i}]"
            if not isinstance(rule, dict):
                continue
            # PodFailurePolicyRule: "One of onExitCodes and onPodConditions, but not both, can be used in
            # each rule."
            has_codes = rule.get("onExitCodes") is not None
            has_conds = rule.get("onPodConditions") is not None
            if has_codes == has_conds:
                f.add(file, rpath, "a rule needs exactly one of onExitCodes and onPodConditions"
                      + (", it has both" if has_codes else ", it has neither"))
            action = rule.get("action")
            if action not in ("FailJob", "FailIndex", "Ignore", "Count"):
                f.add(file, f"{rpath}.action", f"action must be FailJob, FailIndex, Ignore or Count, not {action!r}")
            # PodFailurePolicyRule.action FailIndex: "indicates that the pod's index is marked as Failed and
            # will not be restarted" (validation: only when backoffLimitPerIndex is set).
            if action == "FailIndex" and bpi is None:
                f.add(file, f"{rpath}.action", "action FailIndex requires backoffLimitPerIndex")
            if has_codes:
                check_exit_codes(f, file, f"{rpath}.onExitCodes", rule["onExitCodes"], names)
            if has_conds:
                conds = rule["onPodConditions"]
                if isinstance(conds, list) and len(conds) > 20:
                    f.add(file, f"{rpath}.onPodConditions", "at most 20 condition patterns are allowed")
                for j, c in enumerate(lst(conds)):
                    if isinstance(c, dict) and c.get("status", "True") not in ("True", "False", "Unknown"):
                        f.add(file, f"{rpath}.onPodConditions[{j}].status",
                              "status must be True, False or Unknown")
    # JobTemplateSpec: "`selector` will be auto-generated" - a CronJob's job template must not set one.
    if cron and job.get("selector") is not None:
        f.add(file, f"{path}.selector", "a CronJob's jobTemplate must not set selector (it is generated)")


def check_affinity(f, file, path, pod):
    # PodAffinityTerm.topologyKey: "Empty topologyKey is not allowed." (required).
    aff = d(pod.get("affinity"))
    for kind in ("podAffinity", "podAntiAffinity"):
        block = d(aff.get(kind))
        for i, term in enumerate(lst(block.get("requiredDuringSchedulingIgnoredDuringExecution"))):
            if isinstance(term, dict) and not term.get("topologyKey"):
                f.add(file, f"{path}.affinity.{kind}.requiredDuringSchedulingIgnoredDuringExecution[{i}].topologyKey",
                      "topologyKey is required and must not be empty")
        for i, w in enumerate(lst(block.get("preferredDuringSchedulingIgnoredDuringExecution"))):
            term = w.get("podAffinityTerm") if isinstance(w, dict) else None
            if isinstance(term, dict) and not term.get("topologyKey"):
                f.add(file, f"{path}.affinity.{kind}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
                            ".podAffinityTerm.topologyKey", "topologyKey is required and must not be empty")


def gpu_limit(container):
    return d(d(container.get("resources")).get("limits")).get("nvidia.com/gpu")


def check_shared_memory(f, file, path, pod):
    # Policy (issue 49): a container's /dev/shm is 64 MiB unless a volume replaces it; NCCL's shared-memory
    # transport, MPS and CUDA IPC need more, so a pod with GPUs mounts a memory-backed emptyDir there.
    volumes = {v.get("name"): v for v in lst(pod.get("volumes")) if isinstance(v, dict)}
    for i, c in enumerate(lst(pod.get("containers"))):
        if not isinstance(c, dict) or gpu_limit(c) is None:
            continue
        shm = [m for m in lst(c.get("volumeMounts")) if isinstance(m, dict) and m.get("mountPath") == "/dev/shm"]
        backed = [m for m in shm if d(d(volumes.get(m.get("name"))).get("emptyDir")).get("medium") == "Memory"]
        if not backed:
            f.add(file, f"{path}.containers[{i}].volumeMounts",
                  "policy: a pod with GPUs needs a memory-backed /dev/shm (an emptyDir of medium Memory mounted "
                  "there; the default is 64 MiB)")


def option_value(args, name):
    """The value of `name` in a container's args (--name VALUE or --name=VALUE), or None."""
    args = [a for a in lst(args) if isinstance(a, str)]
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(name + "="):
            return a[len(name) + 1:]
    return None


def check_nodes_join_timeout(f, file, path, pod):
    # Policy (issue 49): every node of a run across nodes waits at the join for all the others (node 0 for their
    # hellos, the others to reach it), and a pod that pulls a multi-GB image starts minutes after the first; the
    # binary's default --join-timeout of 60 s loses that race on both sides.
    for i, c in enumerate(lst(pod.get("containers"))):
        if not isinstance(c, dict) or c.get("name") != BENCH_CONTAINER:
            continue
        value = option_value(c.get("args"), "--join-timeout")
        try:
            seconds = float(value) if value is not None else 60.0
        except ValueError:
            seconds = 0.0
        if seconds < MIN_NODES_JOIN_TIMEOUT_S:
            f.add(file, f"{path}.containers[{i}].args",
                  f"policy: --join-timeout {value or 'unset (60 s)'} is under {MIN_NODES_JOIN_TIMEOUT_S} s: a node "
                  "pulling its image joins late")


def simulate(rules, exit_code=None, condition=None, container=BENCH_CONTAINER):
    """The action of the first rule that matches a pod failure (the Job controller's order), or None
    (no rule matches: the default handling, which counts the failure)."""
    for rule in lst(rules):
        if not isinstance(rule, dict):
            continue
        codes = rule.get("onExitCodes")
        if isinstance(codes, dict) and exit_code is not None:
            name = codes.get("containerName")
            values = lst(codes.get("values"))
            if name is None or name == container:
                hit = exit_code in values if codes.get("operator") == "In" else exit_code not in values
                if exit_code != 0 and hit:
                    return rule.get("action")
        conds = rule.get("onPodConditions")
        if isinstance(conds, list) and condition is not None:
            for c in conds:
                if isinstance(c, dict) and c.get("type") == condition and c.get("status", "True") == "True":
                    return rule.get("action")
    return None


def check_nightly_policy(f, file, path, job):
    """Our own rules for the nightly benchmark Job (deploy/k8s/README.md)."""
    pod = d(d(job.get("template")).get("spec"))
    rules = lst(d(job.get("podFailurePolicy")).get("rules"))
    if not rules:
        f.add(file, f"{path}.podFailurePolicy", "policy: the nightly Job needs the documented podFailurePolicy")
    else:
        for code, want in sorted(EXPECTED_ACTIONS.items()):
            got = simulate(rules, exit_code=code)
            if got != want:
                f.add(file, f"{path}.podFailurePolicy",
                      f"policy: exit code {code} must map to {want}, it maps to {got or 'no rule (Count)'}")
        got = simulate(rules, exit_code=130, condition="DisruptionTarget")
        if got != EXPECTED_DISRUPTION:
            f.add(file, f"{path}.podFailurePolicy",
                  f"policy: a DisruptionTarget pod must map to {EXPECTED_DISRUPTION} before any exit-code rule, "
                  f"it maps to {got or 'no rule (Count)'}")
    if job.get("completionMode") != "Indexed":
        f.add(file, f"{path}.completionMode", "policy: the nightly Job must be Indexed (one index per GPU node)")
    n = job.get("completions")
    if job.get("parallelism") != n:
        f.add(file, f"{path}.parallelism",
              f"policy: parallelism ({job.get('parallelism')}) must equal completions ({n}): every node at once")
    if job.get("maxFailedIndexes") != n:
        f.add(file, f"{path}.maxFailedIndexes",
              f"policy: maxFailedIndexes ({job.get('maxFailedIndexes')}) must equal completions ({n}), "
              f"so that a failing node does not stop the others")
    if job.get("backoffLimitPerIndex") != 1:
        f.add(file, f"{path}.backoffLimitPerIndex", "policy: backoffLimitPerIndex must be 1 (exit 4 retried once)")
    anti = lst(d(d(pod.get("affinity")).get("podAntiAffinity")).get(
        "requiredDuringSchedulingIgnoredDuringExecution"))
    if not any(isinstance(t, dict) and t.get("topologyKey") == "kubernetes.io/hostname" for t in anti):
        f.add(file, f"{path}.template.spec.affinity.podAntiAffinity",
              "policy: required pod anti-affinity on kubernetes.io/hostname is needed (one pod per node)")
    bench = [c for c in lst(pod.get("containers")) if isinstance(c, dict) and c.get("name") == BENCH_CONTAINER]
    if not bench:
        f.add(file, f"{path}.template.spec.containers", f"policy: no container named '{BENCH_CONTAINER}'")
        return n
    c = bench[0]
    cpath = f"{path}.template.spec.containers[{lst(pod.get('containers')).index(c)}]"
    limits = d(d(c.get("resources")).get("limits"))
    if "nvidia.com/gpu" not in limits:
        f.add(file, f"{cpath}.resources.limits", "policy: the bench container needs an nvidia.com/gpu limit")
    env = {e.get("name"): e for e in lst(c.get("env")) if isinstance(e, dict)}
    ref = d(d(d(env.get("NODE_NAME")).get("valueFrom")).get("fieldRef"))
    if ref.get("fieldPath") != "spec.nodeName":
        f.add(file, f"{cpath}.env", "policy: NODE_NAME must come from the downward API (fieldRef spec.nodeName)")
    return n


def merge_expect_tasks(doc):
    """--expect-tasks N of the merge container, or None."""
    for _, pod in pod_specs_of(doc, ""):
        for c in lst(pod.get("containers")):
            argv = [str(a) for a in lst(c.get("command")) + lst(c.get("args"))] if isinstance(c, dict) else []
            for i, a in enumerate(argv):
                if a == "--expect-tasks" and i + 1 < len(argv):
                    return argv[i + 1]
                if a.startswith("--expect-tasks="):
                    return a.split("=", 1)[1]
    return None


def check_device_plugin_config(f, file, path, text):
    # NVIDIA k8s-device-plugin config file (README "Shared Access to GPUs"): version v1; "Time-slicing and
    # MPS are mutually exclusive"; replicas is a count of shared accesses per GPU; MPS supports only
    # nvidia.com/gpu (full GPUs).
    try:
        cfg = yaml.safe_load(text)
    except yaml.YAMLError as e:
        f.add(file, path, f"device-plugin config does not parse: {str(e).splitlines()[0]}")
        return
    if not isinstance(cfg, dict) or "version" not in cfg:
        return  # not a device-plugin config
    if cfg.get("version") != "v1":
        f.add(file, f"{path}.version", "device-plugin config version must be v1")
    sharing = d(cfg.get("sharing"))
    if "timeSlicing" in sharing and "mps" in sharing:
        f.add(file, f"{path}.sharing", "device-plugin: timeSlicing and mps are mutually exclusive")
    for kind in ("timeSlicing", "mps"):
        block = sharing.get(kind)
        if block is None:
            continue
        resources = d(block).get("resources")
        if not isinstance(resources, list) or not resources:
            f.add(file, f"{path}.sharing.{kind}.resources", "device-plugin: resources needs at least one entry")
            continue
        for i, r in enumerate(resources):
            rp = f"{path}.sharing.{kind}.resources[{i}]"
            if not isinstance(r, dict) or not is_int(r.get("replicas")) or r.get("replicas") < 1:
                f.add(file, f"{rp}.replicas", "device-plugin: replicas must be a whole number >= 1")
            if kind == "mps" and isinstance(r, dict) and r.get("name") != "nvidia.com/gpu":
                f.add(file, f"{rp}.name", "device-plugin: MPS sharing supports only nvidia.com/gpu")


def lint_doc(f, file, doc, cross):
    if not isinstance(doc, dict):
        return
    kind = doc.get("kind")
    name = d(doc.get("metadata")).get("name", "?")
    if kind == "CronJob":
        check_schedule(f, file, f"CronJob/{name}.spec.schedule", d(doc.get("spec")).get("schedule"))
    for path, job in jobs_of(doc, name):
        check_job(f, file, path, job, cron=(kind == "CronJob"))
        labels = d(d(d(job.get("template")).get("metadata")).get("labels"))
        if labels.get("app.kubernetes.io/component") == NIGHTLY_COMPONENT:
            cross["nightly"].append((file, path, check_nightly_policy(f, file, path, job)))
    for path, pod in pod_specs_of(doc, name):
        check_affinity(f, file, path, pod)
        check_shared_memory(f, file, path, pod)
    for path, job in jobs_of(doc, name):
        template = d(job.get("template"))
        if d(d(template.get("metadata")).get("labels")).get("app.kubernetes.io/component") == NODES_COMPONENT:
            check_nodes_join_timeout(f, file, f"{path}.template.spec", d(template.get("spec")))
    n = merge_expect_tasks(doc)
    if n is not None:
        cross["merge"].append((file, f"{kind}/{name}", n))
    if kind == "ConfigMap":
        for key, text in d(doc.get("data")).items():
            if isinstance(text, str) and ("sharing" in text or "version:" in text):
                check_device_plugin_config(f, file, f"ConfigMap/{name}.data.{key}", text)


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    f = Findings()
    cross = {"nightly": [], "merge": []}
    for file in argv:
        try:
            with open(file, encoding="utf-8") as fh:
                docs = list(yaml.safe_load_all(fh))
        except (OSError, UnicodeDecodeError) as e:
            print(f"{file}: cannot read: {e}", file=sys.stderr)
            return 2
        except yaml.YAMLError as e:
            print(f"{file}: not YAML: {str(e).splitlines()[0]}", file=sys.stderr)
            return 2
        for doc in docs:
            try:
                lint_doc(f, file, doc, cross)
            except (TypeError, AttributeError, ValueError) as e:  # a shape no API type has
                name = d(d(doc).get("metadata")).get("name", "?")
                f.add(file, f"{d(doc).get('kind', '?')}/{name}",
                      f"malformed object ({type(e).__name__}: {e}); run a schema validator on it")
    # The node count N: the nightly Job's completions and the merge's --expect-tasks must agree, or the
    # merge expects the wrong number of tasks (a missing node unseen, or phantom ones).
    for nfile, npath, n in cross["nightly"]:
        for mfile, mpath, m in cross["merge"]:
            if str(n) != str(m):
                f.add(mfile, mpath, f"policy: --expect-tasks {m} differs from the nightly Job's completions {n} "
                                    f"({nfile}: {npath})")
    for line in f.lines:
        print(line)
    return 1 if f.lines else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
