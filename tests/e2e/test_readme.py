"""The README is one a newcomer reads in ten minutes (issue 47): at most 300 lines, still holding the two commands
word for word (the main job, and the tests), with the reference in docs/; and every command's --help describes
each of its options, so that a command can be used without the docs."""
import json
import re
from pathlib import Path

import pytest

from conftest import SOURCE_DIR

ROOT = Path(SOURCE_DIR).resolve()
README = ROOT / "README.md"
MAX_LINES = 300
# The two commands, byte for byte: a newcomer copies them, CI and the measurements cite them.
MAIN_JOB = ("scripts/install-deps.sh && cmake --preset default && cmake --build --preset default && "
            "build/interference-bench --suite quick --backend auto --duration 3")
TESTS = ("scripts/install-deps.sh --tests && cmake --preset test && cmake --build --preset test && "
         "ctest --preset test")
COMMANDS = ["list", "probe", "sustain", "baseline", "vet", "selftest", "mig-sweep", "history", "compare", "report",
            "merge", "cleanup"]


def shell_blocks(text):
    return re.findall(r"^```sh\n(.*?)^```", text, re.M | re.S)


def test_the_readme_is_at_most_300_lines():
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"README.md has {lines} lines; move reference text into docs/ (docs/commands.md, ...)"


def test_the_readme_keeps_the_two_commands_each_alone_in_a_shell_block():
    blocks = [b.strip() for b in shell_blocks(README.read_text(encoding="utf-8"))]
    assert MAIN_JOB in blocks and TESTS in blocks


def test_the_two_commands_name_presets_and_a_script_that_exist():
    presets = json.loads((ROOT / "CMakePresets.json").read_text(encoding="utf-8"))
    for kind in ("configurePresets", "buildPresets", "testPresets"):
        names = {p["name"] for p in presets.get(kind, [])}
        for command in (MAIN_JOB, TESTS):
            flag = {"configurePresets": r"cmake --preset (\S+)", "buildPresets": r"cmake --build --preset (\S+)",
                    "testPresets": r"ctest --preset (\S+)"}[kind]
            for name in re.findall(flag, command):
                assert name in names, f"{command}: no {kind[:-1]} {name!r} in CMakePresets.json"
    assert (ROOT / "scripts" / "install-deps.sh").stat().st_mode & 0o111


def undescribed_options(help_text):
    """The options a CLI11 --help lists without a description. CLI11 writes the description on the option's own
    line from column 30 (or right after a longer name and type) or, after a name and type of 30 characters or
    more, on the next line indented by 30; an option without one is its name and type alone, shorter than that."""
    lines = help_text.splitlines()
    bare = []
    for i, line in enumerate(lines):
        if not re.match(r"^  -", line):
            continue
        same_line = len(line.rstrip()) > 31
        next_line = i + 1 < len(lines) and re.match(r"^ {30}\S", lines[i + 1])
        if not (same_line or next_line):
            bare.append(line.strip())
    return bare


@pytest.mark.parametrize("command", [None] + COMMANDS)
def test_every_option_of_every_command_has_a_help_text(runner, command):
    r = runner.run("--help") if command is None else runner.run(command, "--help")
    assert r.returncode == 0, r.stderr
    assert "Options:" in r.stdout
    assert undescribed_options(r.stdout) == []


def test_the_check_for_undescribed_options_finds_one():
    described = ("Options:\n  --json                      Print the checks as JSON\n"
                 "  --device INT:INT in [0 - 63]\n                              CUDA/NVML device index\n")
    assert undescribed_options(described) == []
    assert undescribed_options(described + "  --rank INT\n") == ["--rank INT"]
