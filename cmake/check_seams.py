#!/usr/bin/env python3
"""Fails when a source file includes a header of a seam its own seam does not depend on.

usage: check_seams.py SEAMS_JSON SOURCE_DIR

SEAMS_JSON (written by cmake/seams.cmake) maps each seam to its folder (or single file) relative to
SOURCE_DIR, the seams it depends on and, for a seam only some may use, its users. A file belongs to the seam
with the longest matching folder; an include "X" of a project header belongs to the seam of X. Allowed: the
same seam, or any seam reachable through declared dependencies (a library's public dependencies are its
users' too), and of a seam with users only from those users: reports/ (writers) is included by the
conductors (cli, vet) and by no other seam of harness/, whatever it declares. A seam that declares a
dependency on a seam it is not a user of is refused too. Files outside every seam (tests, tools) are not
checked.

Also fails when a file of a seam outside harness/modes/ and harness/scenario/ names a sharing mode's enum value
(`Mode::mig`): a mode is one room, and everything else asks its row in harness/modes/mode_table.h (the scenario
parser reads a mode's word, so it may).
"""
import json
import re
import sys
from pathlib import Path

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([^"]+)"', re.M)
SUFFIXES = {".h", ".hpp", ".cpp", ".cu", ".cuh"}
# A value of the Mode enum (harness/scenario/scenario.h): `Mode::` after a word boundary, so that ComputeMode:: or
# VirtualizationMode:: are not taken for it.
MODE_VALUE = re.compile(r"\bMode::[A-Za-z_]\w*")
MODE_OWNERS = ("harness/modes/", "harness/scenario/")


def seam_of(path, seams):
    """The seam whose folder (or file) is the longest prefix of `path` (relative, '/'-separated)."""
    best = None
    for name, entry in seams.items():
        d = entry["dir"].rstrip("/")
        if (path == d or path.startswith(d + "/")) and (best is None or len(d) > len(seams[best]["dir"])):
            best = name
    return best


def closure(name, seams):
    seen, todo = set(), [name]
    while todo:
        n = todo.pop()
        for d in seams.get(n, {}).get("deps", []):
            if d not in seen:
                seen.add(d)
                todo.append(d)
    return seen


def users_of(name, seams):
    """The seams that may use `name`, or None when any may."""
    return seams.get(name, {}).get("users")


def declared_violations(seams):
    """Seams that declare a dependency on a seam whose users they are not."""
    out = []
    for name, entry in sorted(seams.items()):
        for dep in entry.get("deps", []):
            users = users_of(dep, seams)
            if users is not None and name not in users:
                out.append(f"seam {name} declares a dependency on seam {dep}, which only {', '.join(users)} may use "
                           f"(cmake/seams.cmake, CMakeLists.txt)")
    return out


def mode_value_violations(rel, text):
    """Where `text` (of file `rel`) names a mode's enum value outside the modes' own folders."""
    if rel.startswith(MODE_OWNERS):
        return []
    out = []
    for m in MODE_VALUE.finditer(text):
        line = text[: m.start()].count("\n") + 1
        out.append(f"{rel}:{line}: names {m.group(0)}, but only harness/modes/ (and the scenario parser, "
                   f"harness/scenario/) names a mode: ask the table of modes (harness/modes/mode_table.h)")
    return out


def violations(seams, root):
    root = Path(root)
    out = declared_violations(seams)
    dirs = {Path(e["dir"]).parts[0] for e in seams.values()}
    for top in sorted(dirs):
        for f in sorted((root / top).rglob("*")):
            if f.suffix not in SUFFIXES or not f.is_file():
                continue
            rel = f.relative_to(root).as_posix()
            own = seam_of(rel, seams)
            if own is None:
                continue
            allowed = closure(own, seams) | {own}
            text = f.read_text(errors="replace")
            out.extend(mode_value_violations(rel, text))
            for m in INCLUDE.finditer(text):
                target = seam_of(m.group(1), seams)
                if target is None or target == own:
                    continue
                line = text[: m.start()].count("\n") + 1
                users = users_of(target, seams)
                if users is not None and own not in users:
                    out.append(f"{rel}:{line}: includes {m.group(1)} (seam {target}), but only {', '.join(users)} may "
                               f"include seam {target}'s headers (cmake/seams.cmake, CMakeLists.txt)")
                elif target not in allowed:
                    out.append(f"{rel}:{line}: includes {m.group(1)} (seam {target}), but seam {own} depends only on "
                               f"{', '.join(sorted(closure(own, seams))) or 'nothing'} (cmake/seams.cmake, harness/CMakeLists.txt)")
    return out


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    seams = json.loads(Path(argv[1]).read_text())
    bad = violations(seams, argv[2])
    for line in bad:
        print(line, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
