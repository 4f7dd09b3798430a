#!/usr/bin/env python3
"""Writes the benchmark's manifests (results-pvc.yaml, nightly-cronjob.yaml, merge-cronjob.yaml) for a
cluster, to stdout, for `kubectl apply -n NAMESPACE -f -`:

  render.py --nodes N [--image IMAGE] [--expect-nodes FILE] [--run-args "ARGS"]

--nodes N         the number of GPU nodes: completions, parallelism and maxFailedIndexes of the nightly
                  Job and --expect-tasks of the merge (the four places lint.py checks agree).
--image IMAGE     the image with /opt/interference-bench (deploy/k8s/README.md, "The image"); not empty.
--expect-nodes F  a file of node names, one a line (UTF-8; blank lines and lines starting with # are
                  ignored, as the merge does): adds the ConfigMap ib-fleet-nodes and passes
                  --expect-nodes to the merge, so a missing node is named, not only counted. Each name
                  must be a Kubernetes node name (an RFC 1123 subdomain: lowercase letters, digits, '-'
                  and '.', starting and ending alphanumeric, at most 253 characters), each once.
--run-args ARGS   the arguments of `interference-bench run` on every node (default: those shipped,
                  `--suite nightly --backend cuda --mode all`), split like a shell would. --out is the
                  pod's (--out X and --out=X are refused; after a `--` in ARGS, the program's argv of
                  --victim-command, an --out is the program's).
Every refusal is one line on stderr naming the option or file and what is wrong, exit 2.
The device plugin's configs (device-plugin-sharing.yaml) belong in the plugin's namespace: apply that file
on its own. Needs python3 and python3-yaml only.
"""
import argparse
import re
import shlex
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
FILES = ("results-pvc.yaml", "nightly-cronjob.yaml", "merge-cronjob.yaml")
# A Kubernetes node name: an RFC 1123 subdomain (k8s.io/apimachinery IsDNS1123Subdomain).
LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
NODE_NAME = re.compile(r"%s(\.%s)*" % (LABEL, LABEL))


class Refusal(Exception):
    """Bad input: its text is the one line said before exit 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, not argparse's usage and line
        raise Refusal(message)


def shown(text, limit=80):
    """A value for a one-line message: repr's escapes (no line break), at most `limit` characters."""
    r = repr(text)
    return r if len(r) <= limit else r[:limit - 3] + "..."


def read_nodes(path):
    """The node names of an --expect-nodes file; Refusal on what the merge or Kubernetes would not take."""
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as e:
        raise Refusal(f"--expect-nodes {path}: cannot be read: {e.strerror or e}")
    except UnicodeDecodeError as e:
        raise Refusal(f"--expect-nodes {path}: not UTF-8 text (byte {e.start})")
    names, seen = [], {}
    for n, line in enumerate(text.splitlines(), 1):
        name = line.strip()
        if not name or name.startswith("#"):
            continue
        if len(name) > 253 or not NODE_NAME.fullmatch(name):
            raise Refusal(f"--expect-nodes {path}:{n}: {shown(name)} is not a Kubernetes node name (an RFC 1123 "
                          "subdomain: lowercase letters, digits, '-' and '.', at most 253 characters)")
        if name in seen:
            raise Refusal(f"--expect-nodes {path}:{n}: {shown(name)} is named twice (first on line {seen[name]})")
        seen[name] = n
        names.append(name)
    return names


def split_run_args(text):
    """--run-args split like a shell would; Refusal on an unclosed quote or an --out of the run's."""
    try:
        args = shlex.split(text)
    except ValueError as e:
        raise Refusal(f"--run-args {shown(text)}: cannot be split like a shell would ({e})")
    for a in args:
        if a == "--":
            break  # what follows is the program's argv (--victim-command)
        if a == "--out" or a.startswith("--out="):
            raise Refusal(f"--run-args: {shown(a)}: --out is the pod's (each task writes its own results folder)")
    return args


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
        if image is not None:
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
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, required=True)
    ap.add_argument("--image")
    ap.add_argument("--expect-nodes", type=Path)
    ap.add_argument("--run-args")
    try:
        a = ap.parse_args(argv)
        if a.nodes < 1:
            raise Refusal("--nodes must be at least 1")
        if a.image is not None and not a.image.strip():
            raise Refusal("--image is empty (give the image with /opt/interference-bench, or leave --image out)")
        names = None
        if a.expect_nodes is not None:
            names = read_nodes(a.expect_nodes)
            if len(names) != a.nodes:
                raise Refusal(f"--expect-nodes {a.expect_nodes} names {len(names)} nodes, --nodes is {a.nodes}")
        run_args = split_run_args(a.run_args) if a.run_args is not None else None
    except Refusal as e:
        sys.stderr.write(f"render.py: {e}\n")
        return 2
    sys.stdout.write(yaml.safe_dump_all(render(a.nodes, a.image, names, run_args), sort_keys=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
