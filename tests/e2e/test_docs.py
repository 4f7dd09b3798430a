"""A fresh clone's documentation stands on its own (issue 47): every relative link of README.md, docs/ and
deploy/**/README.md names a file of the repository (and a heading of it, when the link has an anchor), and no
file points at the design reference that once lived outside the repository (docs/design.md is it now)."""
import os
import re
import subprocess
from pathlib import Path

from conftest import SOURCE_DIR

ROOT = Path(SOURCE_DIR).resolve()
# Spelled in pieces so that this file does not match itself.
OUTSIDE = re.compile(re.escape("DESIGN" + ".md") + "|" + re.escape(".." + "/shared"))
SKIPPED_DIRS = {".git", "node_modules", "__pycache__"}


def repository_files():
    """The tracked files (git ls-files), or every file outside build folders where there is no git."""
    if (ROOT / ".git").exists():
        out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True).stdout
        return [ROOT / p for p in out.decode().split("\0") if p]
    found = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("build")]
        found += [Path(folder) / f for f in files]
    return found


def linking_pages():
    pages = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md")) + sorted((ROOT / "deploy").rglob("README.md"))
    return [p for p in pages if p.is_file()]


def without_fences(text):
    """The text with fenced code blocks blanked (a `#` comment in one is no heading), lines kept."""
    return re.sub(r"^(```|~~~).*?^\1[^\n]*$", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S | re.M)


def without_code(text):
    """The text with fenced blocks and inline code spans blanked (a link shown as code is not a link)."""
    return re.sub(r"(`+)(?:(?!\1).)+?\1", "", without_fences(text))


LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.M)


def links(page):
    text = without_code(page.read_text(encoding="utf-8"))
    for m in list(LINK.finditer(text)) + list(REFERENCE.finditer(text)):
        line = text.count("\n", 0, m.start()) + 1
        yield line, m.group(1)


def slug(heading):
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces to hyphens."""
    heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    heading = re.sub(r"[`*_]", "", heading).strip().lower()
    heading = re.sub(r"[^\w\- ]", "", heading)
    return heading.replace(" ", "-")


def anchors(page):
    seen, found = {}, set()
    for m in re.finditer(r"^#{1,6}\s+(.*?)\s*#*\s*$", without_fences(page.read_text(encoding="utf-8")), re.M):
        base = slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found


def broken_links():
    broken = []
    for page in linking_pages():
        where = page.relative_to(ROOT)
        for line, target in links(page):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if ROOT != dest and ROOT not in dest.parents:
                broken.append(f"{where}:{line}: {target}: outside the repository")
            elif not dest.exists():
                broken.append(f"{where}:{line}: {target}: no such file")
            elif anchor and dest.suffix == ".md" and dest.is_file() and anchor.lower() not in anchors(dest):
                broken.append(f"{where}:{line}: {target}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    return broken


def test_every_relative_link_of_the_readme_and_docs_names_a_file_of_the_repository():
    pages = linking_pages()
    assert ROOT / "README.md" in pages and ROOT / "docs" / "design.md" in pages
    assert sum(1 for p in pages for _ in links(p)) > 20  # the parser finds the links that are there
    assert broken_links() == []


def test_no_file_points_at_the_design_reference_outside_the_repository():
    hits = []
    for f in repository_files():
        try:
            text = f.read_text(encoding="utf-8")
        except (UnicodeDecodeError, IsADirectoryError, FileNotFoundError):
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                hits.append(f"{f.relative_to(ROOT)}:{n}: {line.strip()[:120]}")
    assert hits == [], "cite docs/design.md instead:\n" + "\n".join(hits)


def test_the_design_reference_keeps_its_fourteen_numbered_sections():
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    numbers = [int(n) for n in re.findall(r"^## (\d+)\. \S", text, re.M)]
    assert numbers == list(range(1, 15))
