"""`matrix --predict` (issue 50, docs/matrix.md "--predict", docs/methodology.md "Predicted co-location") through
the binary: each workload's curve against host-bubble's ladder, its pressure beside the fixed reporter, every cell
predicted from the two, a sampled pair measured and the error reported; and its refusal on the cuda backend.

The known answer: a CPU-bound workload (host-compute) and a sleeping one (host-idle) pinned to one core. The idle
one presses on nothing: the reporter beside it is not slowed, so its pressure is near level 0 and every cell of
its column (anything beside host-idle) is predicted near +0%, a pass. The hog takes half the core from whatever shares it:
the reporter beside it is slowed about as much as beside the bubble at its top level, and the hog beside a copy of
itself is predicted well above the cutoff. A model that swapped victim and aggressor, read the wrong curve or
skipped the inversion gets one of these wrong; the margins (a pass against +100% or so) hold on a busy machine.
By hand: 2 workloads, k = 3 levels: k + N k + N = 3 + 6 + 2 = 11 profiling runs, the full matrix's N(N+1)/2 = 3."""
import json

import pytest

from conftest import skip_unless_measured

HOG = "host-compute:n=96:reps=4"
IDLE = "host-idle:sample_ms=8"
LEVELS = 3


@pytest.fixture(scope="module")
def predicted(tmp_path_factory):
    from conftest import Runner
    tmp = tmp_path_factory.mktemp("matrix-predict")
    runner = Runner(tmp)
    out = tmp / "m"
    r = runner.run("matrix", "--backend", "host", "--workloads", f"{HOG},{IDLE}", "--cpus", "0", "--predict",
                   "--predict-sample", "1", "--duration", "1", "--warmup", "0.2", "--rounds", "4", "--out", str(out),
                   timeout=300)
    yield r, out, json.loads((out / "matrix.json").read_text())
    assert runner.leftover_processes() == []


def skip_unless_every_run_measured(out):
    """Each child run's aggregates (the ladders, the pressures, the sample): skipped in the tool's own words when
    foreign load left one of their phases without a clean block."""
    for results in sorted((out / "predict").glob("*/run/results.json")):
        for aggregate in json.loads(results.read_text())["aggregates"]:
            skip_unless_measured(aggregate)


@pytest.mark.serial
@pytest.mark.measurement
@pytest.mark.long
def test_every_cell_is_predicted_from_the_documented_runs_and_the_sample_is_measured(predicted):
    r, out, doc = predicted
    assert r.returncode in (0, 1, 5), r.stderr[-2000:]
    assert f"{LEVELS + 2 * LEVELS + 2 + 1} runs (--predict)" in r.stderr  # said before anything ran
    p = doc["prediction"]
    assert p["runs"] == LEVELS + 2 * LEVELS + 2 and p["full_matrix_runs"] == 3
    assert p["levels"] == [0.3, 0.6, 1.0] and p["bubble"]["workload"] == "host-bubble"
    # Past here the cells need figures: a contaminated profile leaves error cells and nothing to sample.
    skip_unless_every_run_measured(out)
    assert len(p["sampled_pairs"]) == 1
    sample = p["sampled_pairs"][0]
    sampled_cells = {(sample["a"], sample["b"]), (sample["b"], sample["a"])}
    for c in doc["cells"]:
        key = (c["victim"], c["aggressor"])
        assert c["source"] == ("measured" if key in sampled_cells else "predicted"), c
    # The sampled pair's run is the pair's own (its planned pair now measured) and its cells are that run's.
    pair = next(x for x in doc["pairs"] if (x["a"], x["b"]) == (sample["a"], sample["b"]))
    assert pair["run"]["outcome"] == sample["run"]["outcome"] == "measured", pair
    # Each measured cell with a figure was checked against what the model said, and the error is over those.
    checks = {(c["victim"], c["aggressor"]): c for c in p["checks"]}
    assert set(checks) <= sampled_cells and checks, p["checks"]
    for key, check in checks.items():
        cell = next(c for c in doc["cells"] if (c["victim"], c["aggressor"]) == key)
        assert check["measured"] == pytest.approx(cell["p95_slowdown"]["value"])
        assert check["error_points"] == pytest.approx(100 * (check["predicted"] - check["measured"]))
    assert p["error"]["cells"] == len(checks)
    assert p["error"]["mean_abs_error_points"] == pytest.approx(
        sum(abs(c["error_points"]) for c in checks.values()) / len(checks))
    md = (out / "matrix.md").read_text()
    assert "(predicted)" in md and "## Prediction" in md and "**Error: " in md


@pytest.mark.serial
@pytest.mark.measurement
@pytest.mark.long
def test_the_idle_aggressor_is_predicted_harmless_and_the_hog_is_not(predicted):
    r, out, doc = predicted
    skip_unless_every_run_measured(out)
    names = [w["name"] for w in doc["workloads"]]
    hog, idle = names.index(HOG), names.index(IDLE)
    p = doc["prediction"]
    pressures = [w["pressure"] for w in p["workloads"]]
    assert None not in pressures, p["workloads"]
    assert pressures[idle] < pressures[hog], pressures
    cells = {(c["victim"], c["aggressor"]): c for c in doc["cells"]}
    for victim in (hog, idle):
        c = cells[(victim, idle)]
        # Anything beside the sleeping workload: its curve read near level 0, a pass (a model reading the idle
        # workload's own curve at the hog's pressure, the cell transposed, gives +60% or more here).
        if c["source"] == "predicted":
            assert c["p95_slowdown"]["value"] <= doc["cutoff"] and c["verdict"] == "pass", c
    c = cells[(hog, hog)]
    if c["source"] == "predicted":  # two CPU-bound copies on one core: about +100%
        assert c["p95_slowdown"]["value"] > doc["cutoff"] and c["verdict"] == "fail", c


def test_predict_on_the_cuda_backend_is_refused_in_one_line(runner, tmp_path):
    out = tmp_path / "m"
    r = runner.run("matrix", "--backend", "cuda", "--predict", "--workloads", "gemm,copy", "--out", str(out))
    assert r.returncode == 3, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "calibrated pressure" in lines[0] and "without --predict" in lines[0], r.stderr
    assert not out.exists()  # refused before the output folder is made
