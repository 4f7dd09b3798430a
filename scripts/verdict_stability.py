#!/usr/bin/env python3
"""Runs interference-bench N times with the same arguments and reports, per (scenario, mode, tenant)
aggregate, the verdicts, P95 slowdowns with their CIs and median slowdowns of every run, whether any
tenant flipped between pass and fail, each verdict's resolution (the half-width of its interval) and
how far it got (rounds), the tenants more than 10 points from the cutoff left undecided, and each
run's wall time. Used for the re-run checks in docs/measurements/ (the verdicts issues).

    scripts/verdict_stability.py --runs 5 --out WORK -- build/interference-bench --suite quick --backend host
"""
import argparse
import json
import subprocess
import sys
import time
from pathlib import Path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", required=True, help="folder for each run's results and the summary")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- then the interference-bench command")
    a = ap.parse_args()
    cmd = [c for c in a.command if c != "--"]
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    runs = []
    for k in range(a.runs):
        run_dir = out / f"run{k + 1}"
        t0 = time.monotonic()
        r = subprocess.run(cmd + ["--out", str(run_dir)], capture_output=True, text=True)
        wall = time.monotonic() - t0
        doc = json.loads((run_dir / "results.json").read_text())
        blocks = [b for run in doc["runs"] for b in run["blocks"]]
        runs.append({"run": k + 1, "exit_code": r.returncode, "wall_s": round(wall, 1),
                     "blocks": len(blocks), "blocks_not_clean": sum(b["status"] != "clean" for b in blocks),
                     "aggregates": [{"scenario": x["scenario"], "mode": x["mode"], "tenant": x["tenant"],
                                     "verdict": x["verdict"],
                                     "p95_slowdown": (x["metrics"] or {}).get("p95_slowdown"),
                                     "median_slowdown": (x["metrics"] or {}).get("median_slowdown"),
                                     "decision": x.get("decision"),
                                     "cutoff": next(r_["cutoff"] for r_ in doc["runs"] if r_["scenario"] == x["scenario"])}
                                    for x in doc["aggregates"]]})
        print(f"run {k + 1}: exit {r.returncode}, {wall:.1f} s", file=sys.stderr)
    by_tenant = {}
    for run in runs:
        for x in run["aggregates"]:
            by_tenant.setdefault((x["scenario"], x["mode"], x["tenant"]), []).append(x)
    flips = [key for key, xs in by_tenant.items() if {"pass", "fail"} <= {x["verdict"] for x in xs}]
    summary = {"command": cmd, "runs": runs, "flipped_between_pass_and_fail": [list(k) for k in flips]}
    lines = ["| scenario | mode | tenant | " + " | ".join(f"run {r['run']}" for r in runs) + " |",
             "|---|---|---|" + "---|" * len(runs)]
    for (scen, mode, tenant), xs in by_tenant.items():
        cells = []
        for x in xs:
            e = x["p95_slowdown"] or {}
            ci = (f" {e['value'] * 100:+.0f}% [{e['ci_low'] * 100:+.0f}, {e['ci_high'] * 100:+.0f}]"
                  if e.get("ci_low") is not None else "")
            med = f", median {x['median_slowdown'] * 100:+.0f}%" if x["median_slowdown"] is not None else ""
            d = x.get("decision") or {}
            got = (f", ±{d['resolution'] * 100:.1f} pts, {d['rounds']} rounds"
                   if d.get("resolution") is not None else "")
            cells.append(f"{x['verdict']}{ci}{med}{got}")
        lines.append(f"| {scen} | {mode} | {tenant} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("wall time per run (s): " + ", ".join(str(r["wall_s"]) for r in runs) +
                 "; exit codes: " + ", ".join(str(r["exit_code"]) for r in runs) +
                 "; blocks not clean: " + ", ".join(f"{r['blocks_not_clean']}/{r['blocks']}" for r in runs))
    lines.append("flipped between pass and fail: " + (", ".join("/".join(k) for k in flips) if flips else "none"))
    widths = sorted(x["decision"]["resolution"] for run in runs for x in run["aggregates"]
                    if x.get("decision") and x["decision"].get("resolution") is not None)
    if widths:
        mid = widths[len(widths) // 2] if len(widths) % 2 else (widths[len(widths) // 2 - 1] + widths[len(widths) // 2]) / 2
        lines.append(f"interval half-width (points): median {mid * 100:.1f}, widest {widths[-1] * 100:.1f} "
                     f"over {len(widths)} verdicts")
    far_undecided = [(run["run"], x["tenant"]) for run in runs for x in run["aggregates"]
                     if x["p95_slowdown"] and x["p95_slowdown"].get("value") is not None
                     and abs(x["p95_slowdown"]["value"] - x["cutoff"]) > 0.10 and x["verdict"] not in ("pass", "fail")]
    lines.append("more than 10 points from the cutoff yet undecided: " +
                 (", ".join(f"run {k} {t}" for k, t in far_undecided) if far_undecided else "none"))
    walls = sorted(r["wall_s"] for r in runs)
    lines.append(f"median wall time: {walls[len(walls) // 2]:.1f} s")
    summary["far_from_cutoff_undecided"] = far_undecided
    (out / "stability.json").write_text(json.dumps(summary, indent=1) + "\n")
    (out / "stability.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 1 if flips else 0


if __name__ == "__main__":
    sys.exit(main())
