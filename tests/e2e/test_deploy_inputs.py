"""Bad input to the deploy scripts (issue 37, item 12): deploy/ib-task.sh, deploy/slurm/ib-submit.sh and
deploy/k8s/render.py each refuse it in one line with exit 2, and what they write is what their readers take.
No binary, no Slurm and no cluster: ib-task.sh runs a stand-in made in the test's folder, ib-submit.sh
runs with --dry-run, render.py writes YAML to stdout."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

SOURCE = Path(os.environ.get("IB_SOURCE_DIR", Path(__file__).resolve().parents[2]))
DEPLOY = SOURCE / "deploy"
TASK_SH = DEPLOY / "ib-task.sh"
SUBMIT = DEPLOY / "slurm" / "ib-submit.sh"
RENDER = DEPLOY / "k8s" / "render.py"


def assert_refused(r, *says):
    """Exit 2 and exactly one line on stderr saying each of `says`, no traceback."""
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    for s in says:
        assert s in lines[0], lines[0]


# --- deploy/ib-task.sh --------------------------------------------------------------------------------------

def run_task(tmp_path, index):
    """ib-task.sh as an Indexed Job's pod on node-a with JOB_COMPLETION_INDEX=index, a stand-in binary."""
    stub = tmp_path / "stand-in"
    stub.write_text("#!/bin/sh\nexit 0\n")
    stub.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM", "JOB_", "KUBERNETES", "IB_"))}
    env.update(NODE_NAME="node-a", JOB_COMPLETION_INDEX=index, JOB_NAME="ib-nightly-1")
    return subprocess.run(["bash", str(TASK_SH), "--fleet-dir", str(tmp_path / "fleet"), "--binary", str(stub),
                           "--", "--suite", "quick"], env=env, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("index,number", [("007", 7), ("000", 0)])
def test_task_index_with_leading_zeros_is_a_json_number(tmp_path, index, number):
    r = run_task(tmp_path, index)
    assert r.returncode == 0, r.stderr
    tasks = tmp_path / "fleet" / "tasks"
    assert [p.name for p in tasks.iterdir()] == ["node-a.%d" % number]
    task = json.loads((tasks / ("node-a.%d" % number) / "task.json").read_text())  # 007 is no JSON
    assert task["task_index"] == number and type(task["task_index"]) is int and task["exit_code"] == 0


@pytest.mark.parametrize("index", ["1.5", "7\n8", "99999999999999999999"])
def test_a_task_index_that_is_not_an_integer_in_range_is_one_line(tmp_path, index):
    r = run_task(tmp_path, index)
    assert_refused(r, "ib-task: task index")
    assert not (tmp_path / "fleet" / "tasks").exists()


# --- deploy/slurm/ib-submit.sh --------------------------------------------------------------------------------

def submit(tmp_path, *args):
    r = subprocess.run(["bash", str(SUBMIT), "--dry-run", "--nodes", "n1,n2", *args], capture_output=True,
                       text=True, timeout=60, stdin=subprocess.DEVNULL, cwd=tmp_path,
                       env={k: v for k, v in os.environ.items() if not k.startswith(("SLURM", "IB_"))})
    return r, [line for line in r.stderr.splitlines() if line.startswith("sbatch ")]


@pytest.mark.parametrize("args", [["--out=/x"], ["--suite", "quick", "--out=/x"], ["--out", "/x"]])
def test_submit_refuses_an_out_in_either_form(tmp_path, args):
    r, calls = submit(tmp_path, "--", *args)
    assert_refused(r, "ib-submit:", "--out is the wrapper's")
    assert calls == []


def test_submit_passes_an_out_of_the_users_program(tmp_path):
    # After the run's own `--` the words are the program's argv (--victim-command): its --out is its own.
    r, calls = submit(tmp_path, "--", "--victim-command", "--", "python3", "train.py", "--out", "/x", "--out=/y")
    assert r.returncode == 0, r.stderr
    assert len(calls) == 2, calls


@pytest.mark.parametrize("args", [["--tasks", "99999999999999999999"], ["--tasks", "1002"],
                                  ["--tasks", "1002", "--pin"], ["--tasks", "0"], ["--tasks", "3\n4"],
                                  ["--tasks", "5001", "--max-array-size", "5000"],
                                  ["--max-array-size", "4000002"], ["--max-array-size", "x"]])
def test_submit_refuses_tasks_beyond_the_array_size(tmp_path, args):
    r, calls = submit(tmp_path, *args)
    assert_refused(r, "ib-submit:", "--max-array-size" if args[0] == "--max-array-size" else "--tasks")
    assert calls == []


def test_submit_takes_tasks_up_to_the_array_size(tmp_path):
    r, calls = submit(tmp_path, "--tasks", "1001")
    assert r.returncode == 0, r.stderr
    assert "--array=0-1000 " in calls[0], calls
    r, calls = submit(tmp_path, "--tasks", "5000", "--max-array-size", "5000")
    assert r.returncode == 0, r.stderr
    assert "--array=0-4999 " in calls[0], calls


# --- deploy/k8s/render.py -------------------------------------------------------------------------------------

def render(*args):
    return subprocess.run([sys.executable, str(RENDER), *map(str, args)], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)


def docs_of(r):
    assert r.returncode == 0, r.stderr
    return [d for d in yaml.safe_load_all(r.stdout) if d]


def nightly_container(docs):
    job = next(d for d in docs if d["metadata"]["name"] == "ib-nightly")
    return job["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]


def test_render_refuses_run_args_with_an_unclosed_quote():
    assert_refused(render("--nodes", 2, "--run-args", "--suite 'nightly --backend cuda"),
                   "render.py: --run-args", "No closing quotation")


def test_render_refuses_a_nodes_file_that_is_not_utf8(tmp_path):
    nodes = tmp_path / "nodes"
    nodes.write_bytes(b"gpu-a\ngpu-\xff\n")
    assert_refused(render("--nodes", 2, "--expect-nodes", nodes), "render.py: --expect-nodes", str(nodes),
                   "not UTF-8")


def test_render_ignores_comments_and_blank_lines_in_the_nodes_file(tmp_path):
    nodes = tmp_path / "nodes"
    nodes.write_text("# the GPU nodes of rack 3\ngpu-a\n\n   # gpu-x is out for repair\ngpu-b.rack3\n  \n")
    docs = docs_of(render("--nodes", 2, "--expect-nodes", nodes))
    cm = next(d for d in docs if d["kind"] == "ConfigMap")
    assert cm["data"]["nodes"] == "gpu-a\ngpu-b.rack3\n"


def test_render_refuses_a_node_named_twice(tmp_path):
    nodes = tmp_path / "nodes"
    nodes.write_text("gpu-a\ngpu-b\ngpu-a\n")
    assert_refused(render("--nodes", 3, "--expect-nodes", nodes), f"--expect-nodes {nodes}:3", "'gpu-a'",
                   "twice")


@pytest.mark.parametrize("name", ["gpu a", "GPU-A", "gpu_a", "-gpu", "gpu-", "a..b",
                                  pytest.param("a" * 254, id="254-characters")])
def test_render_refuses_a_name_that_is_no_kubernetes_node_name(tmp_path, name):
    nodes = tmp_path / "nodes"
    nodes.write_text(f"gpu-ok\n{name}\n")
    assert_refused(render("--nodes", 2, "--expect-nodes", nodes), f"--expect-nodes {nodes}:2",
                   "not a Kubernetes node name")


@pytest.mark.parametrize("image", ["", " "])
def test_render_refuses_an_empty_image(image):
    assert_refused(render("--nodes", 2, "--image", image), "render.py: --image is empty")


@pytest.mark.parametrize("run_args", ["--out=/x", "--suite nightly --out /results/x", "--mode all --out=/x"])
def test_render_refuses_run_args_with_an_out(run_args):
    assert_refused(render("--nodes", 2, "--run-args=" + run_args), "render.py: --run-args", "--out is the pod's")


def test_render_passes_an_out_of_the_users_program():
    docs = docs_of(render("--nodes", 2, "--run-args=--victim-command -- python3 train.py --out /x"))
    args = nightly_container(docs)["args"]
    assert args[args.index("--") + 1:] == ["--victim-command", "--", "python3", "train.py", "--out", "/x"]
