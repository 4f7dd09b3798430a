#!/usr/bin/env python3
"""Writes the benchmark's manifests (results-pvc.yaml, nightly-cronjob.yaml, merge-cronjob.yaml) for a
cluster, to stdout, for `kubectl apply -n NAMESPACE -f -`:

  render.py --nodes N [--image IMAGE] [--expect-nodes FILE] [--run-args "ARGS"]

--nodes N         the number of GPU nodes: completions, parallelism and maxFailedIndexes of the nightly
                  Job and --expect-tasks of the merge (the four places lint.py checks agree).
--image IMAGE     the image with /opt/interference-bench (deploy/k8s/README.md, "The image").
--expect-nodes F  a file of node names, one a line: adds the ConfigMap ib-fleet-nodes and passes
                  --expect-nodes to the merge, so a missing node is named, not only counted.
--run-args ARGS   the arguments of `interference-bench run` on every node (default: those shipped,
                  `--suite nightly --backend cuda --mode all`), split like a shell would.
The device plugin's configs (device-plugin-sharing.yaml) belong in the plugin's namespace: apply that file
on its own. Needs python3 and python3-yaml only.
"""
import argparse
import shlex
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
FILES = ("results-pvc.yaml", "nightly-cronjob.yaml", "merge-cronjob.yaml")


def containers(doc):
    pod = doc["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    return pod, pod["containers"]


def render(nodes, image=None, expect_nodes=None, run_args=None):
    docs = []
    for name in FILES:
        docs.extend(d for d in yaml.safe_load_all((HERE / name).read_text()) if d)
    for doc in docs:
        meta_name = doc["metadata"]["name"]
        if doc["kind"] != "CronJob":
            continue
        pod, conts = containers(doc)
        if image:
            for c in conts:
                c["image"] = image
        if meta_name == "ib-nightly":
            job = doc["spec"]["jobTemplate"]["spec"]
            job["completions"] = job["parallelism"] = job["maxFailedIndexes"] = nodes
            if run_args is not None:
                args = conts[0]["args"]
                conts[0]["args"] = args[:args.index("--") + 1] + run_args
        if meta_name == "ib-fleet-merge":
            args = conts[0]["args"]
            args[args.index("--expect-tasks") + 1] = str(nodes)
            if expect_nodes is not None:
                args += ["--expect-nodes", "/etc/ib-fleet/nodes"]
                conts[0].setdefault("volumeMounts", []).append(
                    {"name": "fleet-nodes", "mountPath": "/etc/ib-fleet", "readOnly": True})
                pod.setdefault("volumes", []).append({"name": "fleet-nodes", "configMap": {"name": "ib-fleet-nodes"}})
    if expect_nodes is not None:
        docs.append({"apiVersion": "v1", "kind": "ConfigMap",
                     "metadata": {"name": "ib-fleet-nodes", "labels": {"app.kubernetes.io/name": "interference-bench"}},
                     "data": {"nodes": "".join(n + "\n" for n in expect_nodes)}})
    return docs


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, required=True)
    ap.add_argument("--image")
    ap.add_argument("--expect-nodes", type=Path)
    ap.add_argument("--run-args")
    a = ap.parse_args(argv)
    if a.nodes < 1:
        ap.error("--nodes must be at least 1")
    names = None
    if a.expect_nodes is not None:
        try:
            names = [ln.strip() for ln in a.expect_nodes.read_text().splitlines() if ln.strip()]
        except OSError as e:
            ap.error(f"cannot read {a.expect_nodes}: {e}")
        if len(names) != a.nodes:
            ap.error(f"{a.expect_nodes} names {len(names)} nodes, --nodes is {a.nodes}")
    run_args = shlex.split(a.run_args) if a.run_args is not None else None
    sys.stdout.write(yaml.safe_dump_all(render(a.nodes, a.image, names, run_args), sort_keys=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
