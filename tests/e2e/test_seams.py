"""The seam check (cmake/check_seams.py): a wrong-way include fails the build, the real tree passes."""
import json
import os
import subprocess
import sys
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2]
CHECK = SOURCE / "cmake" / "check_seams.py"
TABLE = {
    "core": {"dir": "harness/core", "deps": []},
    "stats": {"dir": "harness/stats", "deps": ["core"]},
    "run": {"dir": "harness/run", "deps": ["stats"]},
    "tool": {"dir": "harness/run/tool.cpp", "deps": ["run"]},
}


def check(table, root):
    (root / "seams.json").write_text(json.dumps(table))
    return subprocess.run([sys.executable, str(CHECK), str(root / "seams.json"), str(root)], capture_output=True,
                          text=True)


def tree(tmp_path, files):
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def test_an_include_against_the_declared_direction_is_refused_with_its_file_and_line(tmp_path):
    root = tree(tmp_path, {"harness/core/clock.h": "#pragma once\n",
                           "harness/stats/stats.h": '#pragma once\n#include "harness/core/clock.h"\n',
                           "harness/core/clock.cpp": '#include "harness/core/clock.h"\n\n#include "harness/stats/stats.h"\n'})
    r = check(TABLE, root)
    assert r.returncode == 1
    assert r.stderr.startswith("harness/core/clock.cpp:3: includes harness/stats/stats.h (seam stats), but seam core"), r.stderr
    assert r.stderr.count("\n") == 1


def test_dependencies_are_transitive_and_a_file_can_be_its_own_seam(tmp_path):
    root = tree(tmp_path, {"harness/core/clock.h": "#pragma once\n",
                           "harness/run/orchestrator.cpp": '#include "harness/core/clock.h"\n',  # run -> stats -> core
                           "harness/run/tool.cpp": '#include "harness/run/orchestrator.h"\n'})
    assert check(TABLE, root).returncode == 0
    bad = dict(TABLE, run={"dir": "harness/run", "deps": []})  # run may no longer reach core
    r = check(bad, root)
    assert r.returncode == 1 and "harness/run/orchestrator.cpp:1:" in r.stderr and "tool.cpp" not in r.stderr


def test_system_and_outside_headers_are_not_judged(tmp_path):
    root = tree(tmp_path, {"harness/core/a.cpp": '#include <vector>\n#include "build_info.h"\n#include "tests/x.h"\n'})
    assert check(TABLE, root).returncode == 0


# reports/ (the writers) as cmake/seams.cmake declares it: only the conductors (cli, vet) may use it.
WRITERS = {
    "core": {"dir": "harness/core", "deps": []},
    "results": {"dir": "harness/results", "deps": ["core"]},
    "reports": {"dir": "reports", "deps": ["results", "core"], "users": ["cli", "vet"]},
    "modes": {"dir": "harness/modes", "deps": ["results"]},
    "vet": {"dir": "harness/vet", "deps": ["modes", "reports"]},
    "cli": {"dir": "harness/cli", "deps": ["vet", "reports"]},
}


def test_only_the_conductors_include_the_writers(tmp_path):
    root = tree(tmp_path, {"reports/json_writer.h": '#pragma once\n#include "harness/results/results.h"\n',
                           "harness/results/results.h": "#pragma once\n",
                           "harness/cli/app.cpp": '#include "reports/json_writer.h"\n',
                           "harness/vet/platform.cpp": '#include "reports/json_writer.h"\n'})
    assert check(WRITERS, root).returncode == 0
    (root / "harness/modes/mode_setup.cpp").parent.mkdir(parents=True)
    (root / "harness/modes/mode_setup.cpp").write_text('#include "harness/results/results.h"\n#include "reports/json_writer.h"\n')
    r = check(WRITERS, root)
    assert r.returncode == 1
    assert r.stderr == ("harness/modes/mode_setup.cpp:2: includes reports/json_writer.h (seam reports), but only cli, vet "
                        "may include seam reports's headers (cmake/seams.cmake, CMakeLists.txt)\n"), r.stderr
    # declaring the dependency does not make it allowed: the declaration itself is refused too
    declared = dict(WRITERS, modes={"dir": "harness/modes", "deps": ["results", "reports"]})
    r = check(declared, root)
    assert r.returncode == 1
    assert "seam modes declares a dependency on seam reports, which only cli, vet may use" in r.stderr
    assert "harness/modes/mode_setup.cpp:2: includes reports/json_writer.h" in r.stderr


def test_a_mode_is_named_only_in_its_room(tmp_path):
    """Outside harness/modes/ (and the scenario parser) a file that names Mode::mig fails the build; other enums
    ending in Mode do not."""
    table = {"core": {"dir": "harness/core", "deps": []},
             "scenario": {"dir": "harness/scenario", "deps": ["core"]},
             "modes": {"dir": "harness/modes", "deps": ["scenario"]},
             "run": {"dir": "harness/run", "deps": ["modes"]}}
    root = tree(tmp_path, {"harness/scenario/scenario.cpp": "bool mig(Mode m) { return m == Mode::mig; }\n",
                           "harness/modes/mig.cpp": "ModeRow r; r.mode = Mode::mig;\n",
                           "harness/run/planned_scenarios.cpp": "// asks runs_fixed(s.mode)\nComputeMode::prohibited;\n"
                                                      "VirtualizationMode::none;\n"})
    assert check(table, root).returncode == 0, check(table, root).stderr
    (root / "harness/run/planned_scenarios.cpp").write_text("int blocks(const Scenario& s) {\n"
                                                  "  return s.mode == ib::Mode::mig ? 2 : 1;\n}\n")
    r = check(table, root)
    assert r.returncode == 1
    assert r.stderr == ("harness/run/planned_scenarios.cpp:2: names Mode::mig, but only harness/modes/ (and the scenario parser, "
                        "harness/scenario/) names a mode: ask the table of modes (harness/modes/mode_table.h)\n"), r.stderr


def built_table():
    """The seams as cmake/seams.cmake declared them for this build (seams.json in the build folder)."""
    return json.loads((Path(os.environ["IB_BINARY"]).parent / "seams.json").read_text())


def test_the_real_declaration_lets_only_the_conductors_include_the_writers(tmp_path):
    table = built_table()
    assert table["reports"]["users"] == ["cli", "vet"]
    for seam, entry in table.items():
        assert seam in ("cli", "vet") or "reports" not in entry["deps"], seam
    root = tree(tmp_path, {"harness/cli/app.cpp": '#include "reports/json_writer.h"\n',
                           "harness/vet/platform.cpp": '#include "reports/json_writer.h"\n',
                           "harness/modes/mode_setup.cpp": '#include "harness/results/results_reader.h"\n',
                           "harness/fleet/inputs.cpp": '#include "harness/results/results_reader.h"\n'})
    assert check(table, root).returncode == 0, check(table, root).stderr
    (root / "harness/modes/mode_setup.cpp").write_text('#include "harness/results/results_reader.h"\n'
                                                       '#include "reports/json_writer.h"\n')
    r = check(table, root)
    assert r.returncode == 1
    assert r.stderr == ("harness/modes/mode_setup.cpp:2: includes reports/json_writer.h (seam reports), but only cli, vet "
                        "may include seam reports's headers (cmake/seams.cmake, CMakeLists.txt)\n"), r.stderr


def test_the_tree_as_committed_passes(tmp_path):
    table = Path(os.environ["IB_BINARY"]).parent / "seams.json"  # written by cmake into the build folder
    r = subprocess.run([sys.executable, str(CHECK), str(table), str(SOURCE)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
