"""scripts/install-deps.sh, run for real against stand-ins for apt-get, apt-cache, dpkg-query, sudo, id,
systemd-detect-virt, cmake and scontrol (first, and with a handful of real tools, alone on PATH: the real
apt-get cannot be reached) that answer as Debian 12, Debian 13, Ubuntu 22.04 and Ubuntu 24.04 do, from the
table below. Every apt-get call is logged; the tests assert what was asked for, and every line that says
why something was skipped or refused. Needs no binary (IB_BINARY is not used) and runs in a few seconds.

The distributions' versions (DISTROS): the version-sensitive ones (CMake, fmt, CLI11, nlohmann-json,
SQLiteCpp, clang and its fuzzer runtime, GoogleTest, chromium) are those of packages.debian.org and
packages.ubuntu.com for bookworm, trixie, jammy and noble (main/universe and their -updates/-security,
as of 2025); Debian 12's are also what `apt-cache policy` answers on a bookworm machine. The others are
the releases' versions as we know them; no assertion depends on them.
"""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE = Path(os.environ.get("IB_SOURCE_DIR", Path(__file__).resolve().parents[2]))
SCRIPT = SOURCE / "scripts" / "install-deps.sh"
BASH = shutil.which("bash") or "/bin/bash"

RUN_SET = ["build-essential", "cmake", "ninja-build", "pkg-config", "git", "python3", "libcli11-dev",
           "nlohmann-json3-dev", "libfmt-dev", "libpugixml-dev", "libsqlite3-dev", "libpcre2-dev",
           "libjs-chart.js"]
TEST_SET = ["libgtest-dev", "libgmock-dev", "googletest", "libbenchmark-dev", "python3-pytest",
            "python3-jsonschema", "python3-pil", "python3-junitparser", "python3-yaml", "nodejs", "prometheus", "clang",
            "slurm-wlm", "munge", "sysbench", "pv", "mbw"]

# Ubuntu's chromium / chromium-browser: transitional debs that install the snap.
SNAP_STUB_SHOW = """Package: {name}
Version: {version}
Pre-Depends: debconf, snapd
Description: Transitional package - chromium-browser -> chromium snap
"""

DISTROS = {
    "debian12": {
        "os_release": 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\n'
                      'VERSION="12 (bookworm)"\nVERSION_CODENAME=bookworm\nID=debian\n',
        "packages": {
            "build-essential": "12.9", "cmake": "3.25.1-1", "ninja-build": "1.11.1-2~deb12u1",
            "pkg-config": "1.8.1-1", "git": "1:2.39.5-0+deb12u3", "python3": "3.11.2-1+b1",
            "libcli11-dev": "2.1.2+ds-1", "nlohmann-json3-dev": "3.11.2-2", "libfmt-dev": "9.1.0+ds1-2",
            "libpugixml-dev": "1.13-0.2", "libsqlite3-dev": "3.40.1-2+deb12u2", "libpcre2-dev": "10.42-1+deb12u2",
            "libjs-chart.js": "3.9.1+~0.2.1-2", "libsqlitecpp-dev": "3.2.1-1",
            "libgloo-dev": "0.0~git20220518.5b14351-3",
            "libgtest-dev": "1.12.1-0.2", "libgmock-dev": "1.12.1-0.2", "googletest": "1.12.1-0.2",
            "libbenchmark-dev": "1.7.1-1", "python3-pytest": "7.2.1-2", "python3-jsonschema": "4.10.3-1",
            "python3-junitparser": "2.8.0-1", "python3-yaml": "6.0-3+b2",
            "python3-pil": "9.4.0-1.1+deb12u1", "nodejs": "18.19.0+dfsg-6~deb12u2",
            "prometheus": "2.42.0+ds-5+b5", "clang": "1:14.0-55.7~deb12u1",
            "libclang-rt-14-dev": "1:14.0.6-12", "libclang-common-14-dev": "1:14.0.6-12",
            # bookworm also carries llvm-toolchain-19 (for rustc/firefox): not the default clang's runtime.
            "libclang-rt-19-dev": "1:19.1.7-3~deb12u1",
            "chromium": "156.0.8078.114-1~deb12u1",
            "slurm-wlm": "22.05.8-4+deb12u3", "munge": "0.5.15-2+deb12u1",
            "sysbench": "1.0.20+ds-5", "pv": "1.6.20-1", "mbw": "1.2.2-1.1",
        },
        "fuzzer_in": "libclang-rt-14-dev",
    },
    "debian13": {
        "os_release": 'PRETTY_NAME="Debian GNU/Linux 13 (trixie)"\nNAME="Debian GNU/Linux"\nVERSION_ID="13"\n'
                      'VERSION="13 (trixie)"\nVERSION_CODENAME=trixie\nID=debian\n',
        "packages": {
            "build-essential": "12.12", "cmake": "3.31.6-2", "ninja-build": "1.12.1-1", "pkg-config": "1.8.1-4",
            "git": "1:2.47.2-0.2", "python3": "3.13.5-1", "libcli11-dev": "2.4.1+ds-2",
            "nlohmann-json3-dev": "3.11.3-1", "libfmt-dev": "10.1.1+ds1-4", "libpugixml-dev": "1.15-1",
            "libsqlite3-dev": "3.46.1-7", "libpcre2-dev": "10.45-1", "libjs-chart.js": "4.4.7+~cs4.1.3-1",
            "libsqlitecpp-dev": "3.3.2-1", "libgloo-dev": "0.0~git20231202.5354032-3",
            "libgtest-dev": "1.16.0-1", "libgmock-dev": "1.16.0-1", "googletest": "1.16.0-1",
            "libbenchmark-dev": "1.9.1-1", "python3-pytest": "8.3.5-2", "python3-jsonschema": "4.19.2-6",
            "python3-junitparser": "3.2.0-1", "python3-yaml": "6.0.2-1+b2",
            "python3-pil": "11.1.0-5", "nodejs": "20.19.2+dfsg-1",
            "prometheus": "2.53.3+ds1-2", "clang": "1:19.0-63",
            "libclang-rt-19-dev": "1:19.1.7-3+b1", "libclang-common-19-dev": "1:19.1.7-3+b1",
            "chromium": "139.0.7258.154-1~deb13u1",
            "slurm-wlm": "24.11.5-4", "munge": "0.5.16-1",
            "sysbench": "1.0.20+ds-8", "pv": "1.9.31-1", "mbw": "2.0-1",
        },
        "fuzzer_in": "libclang-rt-19-dev",
    },
    "ubuntu2204": {
        "os_release": 'PRETTY_NAME="Ubuntu 22.04.5 LTS"\nNAME="Ubuntu"\nVERSION_ID="22.04"\n'
                      'VERSION="22.04.5 LTS (Jammy Jellyfish)"\nVERSION_CODENAME=jammy\nID=ubuntu\nID_LIKE=debian\n',
        "packages": {
            "build-essential": "12.9ubuntu3", "cmake": "3.22.1-1ubuntu1.22.04.2", "ninja-build": "1.10.1-1",
            "pkg-config": "0.29.2-1ubuntu3", "git": "1:2.34.1-1ubuntu1.12", "python3": "3.10.6-1~22.04.1",
            "libcli11-dev": "2.1.2+ds-1", "nlohmann-json3-dev": "3.10.5-2", "libfmt-dev": "8.1.1+ds1-2",
            "libpugixml-dev": "1.12.1-1", "libsqlite3-dev": "3.37.2-2ubuntu0.3", "libpcre2-dev": "10.39-3ubuntu0.1",
            "libjs-chart.js": "2.9.4+dfsg-2",
            # no libsqlitecpp-dev in jammy
            "libgloo-dev": "0.0~git20200918.3dc0328-4",
            "libgtest-dev": "1.11.0-3", "libgmock-dev": "1.11.0-3", "googletest": "1.11.0-3",
            "libbenchmark-dev": "1.6.1-1", "python3-pytest": "6.2.5-1ubuntu2", "python3-jsonschema": "3.2.0-0ubuntu2",
            "python3-junitparser": "2.4.2-1", "python3-yaml": "5.4.1-1ubuntu1",
            "python3-pil": "9.0.1-1ubuntu0.3", "nodejs": "12.22.9~dfsg-1ubuntu3.6",
            "prometheus": "2.31.2+ds1-1ubuntu1.22.04.3", "clang": "1:14.0-55~exp2",
            # jammy's clang 14 has its fuzzer runtime in libclang-common-14-dev; there is no libclang-rt-14-dev
            "libclang-common-14-dev": "1:14.0.0-1ubuntu1.1",
            "chromium-browser": "1:85.0.4183.83-0ubuntu2.22.04.1",
            "slurm-wlm": "21.08.5-2ubuntu1", "munge": "0.5.14-6",
            "sysbench": "1.0.20+ds-2", "pv": "1.6.20-1", "mbw": "1.2.2-1build1",
        },
        "fuzzer_in": "libclang-common-14-dev",
        "snap_stubs": ["chromium-browser"],
    },
    "ubuntu2404": {
        "os_release": 'PRETTY_NAME="Ubuntu 24.04.2 LTS"\nNAME="Ubuntu"\nVERSION_ID="24.04"\n'
                      'VERSION="24.04.2 LTS (Noble Numbat)"\nVERSION_CODENAME=noble\nID=ubuntu\nID_LIKE=debian\n',
        "packages": {
            "build-essential": "12.10ubuntu1", "cmake": "3.28.3-1build7", "ninja-build": "1.11.1-2",
            "pkg-config": "1.8.1-2build1", "git": "1:2.43.0-1ubuntu7.2", "python3": "3.12.3-0ubuntu2",
            "libcli11-dev": "2.4.1+ds-1", "nlohmann-json3-dev": "3.11.3-1", "libfmt-dev": "9.1.0+ds1-2",
            "libpugixml-dev": "1.14-0.1build1", "libsqlite3-dev": "3.45.1-1ubuntu2.3", "libpcre2-dev": "10.42-4ubuntu2.1",
            "libjs-chart.js": "3.9.1+~0.2.1-2", "libsqlitecpp-dev": "3.3.1-1",
            "libgloo-dev": "0.0~git20230519.597accf-2build3",
            "libgtest-dev": "1.14.0-1", "libgmock-dev": "1.14.0-1", "googletest": "1.14.0-1",
            "libbenchmark-dev": "1.8.3-3", "python3-pytest": "7.4.4-1", "python3-jsonschema": "4.10.3-2ubuntu1",
            "python3-junitparser": "2.8.0-2", "python3-yaml": "6.0.1-2build2",
            "python3-pil": "10.2.0-1ubuntu1", "nodejs": "18.19.1+dfsg-6ubuntu5",
            "prometheus": "2.45.3+ds-2ubuntu0.3", "clang": "1:18.0-59~exp2",
            "libclang-rt-18-dev": "1:18.1.3-1ubuntu1", "libclang-common-18-dev": "1:18.1.3-1ubuntu1",
            "chromium": "2:1snap1-0ubuntu2", "chromium-browser": "2:1snap1-0ubuntu2",
            "slurm-wlm": "23.11.4-1.2ubuntu5", "munge": "0.5.15-4build1",
            "sysbench": "1.0.20+ds-6build2", "pv": "1.8.5-2build1", "mbw": "1.2.2-1.1build1",
        },
        "fuzzer_in": "libclang-rt-18-dev",
        "snap_stubs": ["chromium", "chromium-browser"],
    },
    # Not one the script knows: tried, with a warning; too old for the build in three ways, and no CLI11.
    "debian11": {
        "os_release": 'PRETTY_NAME="Debian GNU/Linux 11 (bullseye)"\nNAME="Debian GNU/Linux"\nVERSION_ID="11"\n'
                      'VERSION="11 (bullseye)"\nVERSION_CODENAME=bullseye\nID=debian\n',
        "packages": {
            "build-essential": "12.9", "cmake": "3.18.4-2+deb11u1", "ninja-build": "1.10.1-1",
            "pkg-config": "0.29.2-1", "git": "1:2.30.2-1+deb11u2", "python3": "3.9.2-3",
            "nlohmann-json3-dev": "3.9.1-1", "libfmt-dev": "7.1.3+ds1-5", "libpugixml-dev": "1.11.4-1",
            "libsqlite3-dev": "3.34.1-3", "libpcre2-dev": "10.36-2+deb11u1", "libjs-chart.js": "2.9.4+dfsg-1",
        },
        "fuzzer_in": None,
    },
}

# The answer of the rt package per distribution (N from the clang package's version).
CLANG_RT = {"debian12": "libclang-rt-14-dev", "debian13": "libclang-rt-19-dev",
            "ubuntu2204": "libclang-common-14-dev", "ubuntu2404": "libclang-rt-18-dev"}

# apt-get: Python (called once or twice per run). It keeps the machine's state (what is installed, whether
# the package lists are there) and renders, after every change, the answers the cheap shell stand-ins below
# read: apt-cache and dpkg-query are asked a dozen times per run and must not start an interpreter each time.
APT_GET = r"""#!{python} -S
import json, os, sys
STATE = os.environ["FAKE_STATE"]
with open(STATE) as f:
    s = json.load(f)

def render():
    root = s["answers"]
    lists = s["updated"] or s["lists_before_update"]
    for sub in ("policy", "show", "files"):
        os.makedirs(os.path.join(root, sub), exist_ok=True)
        for old in os.listdir(os.path.join(root, sub)):
            os.remove(os.path.join(root, sub, old))
    def put(sub, name, text):
        with open(os.path.join(root, sub, name), "w") as f:
            f.write(text)
    sources = "Package files:\n 100 /var/lib/dpkg/status\n     release a=now\n"
    if lists:
        sources += " 500 http://archive.example %s/main amd64 Packages\n     release n=%s\n" % (s["codename"], s["codename"])
    put("", "sources", sources)
    put("", "status", "".join("%s\tinstall ok installed\t%s\n" % (p, v) for p, v in s["installed"].items()))
    for p, v in s["installed"].items():
        put("files", p, "\n".join(s["files"].get(p, ["/usr/share/doc/%s/copyright" % p])) + "\n")
    for p in set(s["installed"]) | (set(s["repo"]) if lists else set()):
        cand = s["repo"][p] if lists and p in s["repo"] else s["installed"].get(p)
        put("policy", p, "%s:\n  Installed: %s\n  Candidate: %s\n  Version table:\n" % (p, s["installed"].get(p, "(none)"), cand))
        put("show", p, s["show"].get(p) or "Package: %s\nVersion: %s\nDescription: %s\n" % (p, cand, p))

def save():
    with open(STATE, "w") as f:
        json.dump(s, f)
    render()

args = sys.argv[1:]
if args == ["--render"]:
    render(); sys.exit(0)
with open(s["log"], "a") as f:
    f.write(json.dumps({{"tool": "apt-get", "args": args, "via_sudo": os.environ.get("FAKE_VIA_SUDO") == "1",
                        "frontend": os.environ.get("DEBIAN_FRONTEND")}}) + "\n")
words, i = [], 0
while i < len(args):
    if args[i] == "-o":
        i += 2; continue
    if not args[i].startswith("-"):
        words.append(args[i])
    i += 1
if words[:1] == ["update"]:
    s["updated"] = True; save(); sys.exit(0)
if words[:1] == ["install"]:
    lists = s["updated"] or s["lists_before_update"]
    bad = [p for p in words[1:] if p in s["fail_install"] or p not in s["repo"] or not lists]
    if bad:
        sys.stderr.write("E: Unable to locate or install %s\n" % " ".join(bad)); sys.exit(100)
    for p in words[1:]:
        s["installed"][p] = s["repo"][p]
    save(); sys.exit(0)
sys.exit(100)
"""

APT_CACHE = """#!/bin/sh
# apt-cache policy [PKG...] and show PKG...: the answers apt-get's stand-in rendered (one cat per call)
A=$FAKE_ANSWERS
if [ "$1" = policy ] && [ $# -eq 1 ]; then exec cat "$A/sources"; fi
cmd=$1; shift
[ "$cmd" = policy ] || [ "$cmd" = show ] || exit 100
files=""
for p in "$@"; do [ ! -f "$A/$cmd/$p" ] || files="$files $A/$cmd/$p"; done
if [ -z "$files" ]; then
  [ "$cmd" = policy ] && exit 0
  echo "E: No packages found" >&2; exit 100
fi
exec cat $files
"""

DPKG_QUERY = r"""#!/bin/sh
# dpkg-query -W -f=FORMAT PKG... (the one FORMAT the script uses) and -L PKG, from the rendered answers
A=$FAKE_ANSWERS
if [ "$1" = -L ]; then [ -f "$A/files/$2" ] && exec cat "$A/files/$2"; exit 1; fi
[ "$1" = -W ] && [ "$2" = '-f=${Package}\t${Status}\t${Version}\n' ] || { echo "unexpected: $*" >&2; exit 2; }
shift 2
exec awk -F '\t' -v want="$*" '
  BEGIN { n = split(want, w, " "); for (i = 1; i <= n; i++) W[w[i]] = 1 }
  ($1 in W) { print; seen[$1] = 1 }
  END { rc = 0; for (p in W) if (!(p in seen)) { print "dpkg-query: no packages found matching " p > "/dev/stderr"; rc = 1 }
        exit rc }' "$A/status"
"""

SUDO = """#!/bin/sh
# stand-in for sudo: logs, then runs the command (as the same user), marked as having come through sudo
printf '{"tool": "sudo", "args": ["%s"]}\\n' "$1" >> "$FAKE_LOG"
export FAKE_VIA_SUDO=1
exec "$@"
"""

REAL_TOOLS = ["env", "sed", "grep", "cat", "sh", "awk"]


def upstream(version):
    """1:14.0-55.7~deb12u1 -> 14.0"""
    return re.match(r"(?:\d+:)?([\d.]+)", version).group(1)


class World:
    """A fake machine: one distribution's packages, what is installed, the stand-ins on PATH."""

    def __init__(self, tmp_path, distro, installed=(), lists_before_update=False, uid=0, container=False,
                 path_cmake=None, scontrol=False, slurm_conf=False, fail_install=(), drop=()):
        d = DISTROS[distro]
        self.tmp = tmp_path
        self.distro = distro
        repo = {p: v for p, v in d["packages"].items() if p not in drop}
        files = {}
        if d["fuzzer_in"]:
            files[d["fuzzer_in"]] = ["/usr/lib/llvm/lib/clang/lib/linux/libclang_rt.fuzzer-x86_64.a"]
        show = {p: SNAP_STUB_SHOW.format(name=p, version=repo[p]) for p in d.get("snap_stubs", []) if p in repo}
        self.log = tmp_path / "calls.jsonl"
        self.log.write_text("")
        self.state_path = tmp_path / "state.json"
        codename = [ln.split("=")[1] for ln in d["os_release"].splitlines() if ln.startswith("VERSION_CODENAME")][0]
        self.state = {"repo": repo, "installed": {p: repo[p] for p in installed}, "show": show, "files": files,
                      "lists_before_update": lists_before_update, "updated": False, "uid": uid,
                      "container": container, "path_cmake": path_cmake, "fail_install": list(fail_install),
                      "log": str(self.log), "codename": codename}
        self.state_path.write_text(json.dumps(self.state))
        self.os_release = tmp_path / "os-release"
        self.os_release.write_text(d["os_release"])
        self.fakes = tmp_path / "fakes"
        self.fakes.mkdir()
        self.answers = tmp_path / "answers"
        self.state["answers"] = str(self.answers)
        self.state_path.write_text(json.dumps(self.state))
        cmake_version = path_cmake or ("cmake" in installed and upstream(repo["cmake"]))
        scripts = {"apt-get": APT_GET.format(python=sys.executable), "apt-cache": APT_CACHE,
                   "dpkg-query": DPKG_QUERY,
                   "id": f"#!/bin/sh\n[ \"$1\" = -u ] && echo {uid} || echo uid={uid}\n",
                   "systemd-detect-virt": f"#!/bin/sh\nexit {0 if container else 1}\n"}
        if cmake_version:
            scripts["cmake"] = f"#!/bin/sh\necho 'cmake version {cmake_version}'; echo; echo 'CMake suite maintained and supported by Kitware (kitware.com/cmake).'\n"
        if scontrol:
            scripts["scontrol"] = "#!/bin/sh\necho 'scontrol: stand-in'\n"
        for n, text in scripts.items():
            (self.fakes / n).write_text(text)
            (self.fakes / n).chmod(0o755)
        subprocess.run([str(self.fakes / "apt-get"), "--render"], check=True, env={"FAKE_STATE": str(self.state_path)})
        sudo = self.fakes / "sudo"
        sudo.write_text(SUDO)
        sudo.chmod(0o755)
        self.tools = tmp_path / "tools"
        self.tools.mkdir()
        for t in REAL_TOOLS:
            (self.tools / t).symlink_to(shutil.which(t))
        self.slurm_dir = tmp_path / "etc-slurm"
        self.slurm_dir.mkdir()
        if slurm_conf:
            (self.slurm_dir / "slurm.conf").write_text("ClusterName=existing\n")
        self.container_file = tmp_path / "dockerenv"

    def run(self, *args, container_file=False):
        if container_file:
            self.container_file.write_text("")
        path = f"{self.fakes}:{self.tools}"
        # The stand-ins are the only apt-get and dpkg-query the script can reach.
        assert shutil.which("apt-get", path=path) == str(self.fakes / "apt-get")
        assert shutil.which("dpkg-query", path=path) == str(self.fakes / "dpkg-query")
        env = {"PATH": path, "FAKE_STATE": str(self.state_path), "FAKE_LOG": str(self.log), "FAKE_ANSWERS": str(self.answers), "IB_OS_RELEASE": str(self.os_release),
               "IB_SLURM_CONF_DIRS": str(self.slurm_dir), "IB_CONTAINER_FILES": str(self.container_file),
               "LC_ALL": "C", "HOME": str(self.tmp)}
        r = subprocess.run([BASH, str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=60,
                           stdin=subprocess.DEVNULL)
        self.result = r
        self.calls = [json.loads(ln) for ln in self.log.read_text().splitlines() if ln]
        return r

    def apt_calls(self):
        return [c for c in self.calls if c["tool"] == "apt-get"]

    def updates(self):
        return [c for c in self.apt_calls() if "update" in c["args"]]

    def installs(self):
        """The package lists of each apt-get install call."""
        out = []
        for c in self.apt_calls():
            if "install" not in c["args"]:
                continue
            words, skip = [], False
            for a in c["args"]:
                if skip:
                    skip = False
                elif a == "-o":
                    skip = True
                elif not a.startswith("-") and a != "install":
                    words.append(a)
            out.append(words)
        return out

    def lines(self):
        return (self.result.stdout + self.result.stderr).splitlines()

    def line(self, start):
        found = [ln for ln in self.lines() if ln.startswith(start)]
        assert len(found) == 1, f"expected one line starting {start!r}:\n{self.result.stdout}{self.result.stderr}"
        return found[0]

    def summary(self):
        return self.result.stdout.splitlines()[-1]


def all_of(distro, tests=True):
    """Every package of the set the distribution can provide, as the script would leave it installed."""
    repo = DISTROS[distro]["packages"]
    wanted = RUN_SET + ["libsqlitecpp-dev", "libgloo-dev"] + (TEST_SET + [CLANG_RT[distro], "chromium"] if tests else [])
    return [p for p in wanted if p in repo and p not in DISTROS[distro].get("snap_stubs", [])]


def ok(w):
    assert w.result.returncode == 0, w.result.stdout + w.result.stderr


# --- The run set (no --tests), fresh container: no package lists until apt-get update -----------------

@pytest.mark.parametrize("distro", ["debian12", "debian13", "ubuntu2404"])
def test_run_set_fresh(tmp_path, distro):
    w = World(tmp_path, distro)
    w.run()
    ok(w)
    assert len(w.updates()) == 1 and w.apt_calls()[0] is w.updates()[0]
    assert w.installs() == [RUN_SET + ["libsqlitecpp-dev", "libgloo-dev"]]
    install = [c for c in w.apt_calls() if "install" in c["args"]][0]
    assert install["frontend"] == "noninteractive" and "--no-install-recommends" in install["args"]
    assert not any(ln.startswith("install-deps: skipped") for ln in w.lines())
    assert w.summary() == (f"install-deps: installed 15 packages ({' '.join(RUN_SET + ['libsqlitecpp-dev', 'libgloo-dev'])}); "
                           "nothing skipped (the run set; --tests adds the test tools)")
    assert not any("warning" in ln for ln in w.lines())


def test_ubuntu_2204_stops_with_the_cmake_line(tmp_path):
    w = World(tmp_path, "ubuntu2204")
    w.run("--tests")
    assert w.result.returncode == 1
    assert w.result.stderr.splitlines()[-1] == (
        "install-deps: CMake 3.22.1 is older than the 3.24 the build needs; install a newer one: "
        "pip install 'cmake>=3.24' (or Kitware's APT repository), then run this again")
    assert len(w.updates()) == 1 and w.installs() == []   # nothing installed before the refusal
    # The same with everything else installed and the distribution's cmake 3.22.1 on PATH.
    (tmp_path / "again").mkdir()
    w2 = World(tmp_path / "again", "ubuntu2204", installed=all_of("ubuntu2204"), lists_before_update=True)
    w2.run()
    assert w2.result.returncode == 1
    w2.line("install-deps: CMake 3.22.1 is older than the 3.24 the build needs")
    assert w2.installs() == []


def test_ubuntu_2204_with_a_newer_cmake_on_path(tmp_path):
    """pip install 'cmake>=3.24', then the script again: the distribution's cmake is not asked for;
    SQLiteCpp is missing: a visible line, not an error; clang 14's fuzzer runtime is libclang-common-14-dev;
    chromium is the snap stub."""
    w = World(tmp_path, "ubuntu2204", path_cmake="3.30.5")
    w.run("--tests")
    ok(w)
    assert w.installs() == [[p for p in RUN_SET if p != "cmake"] + ["libgloo-dev"]
                            + [p for p in TEST_SET] + ["libclang-common-14-dev"]]
    assert w.line("install-deps: skipped libsqlitecpp-dev:") == (
        "install-deps: skipped libsqlitecpp-dev: apt has no libsqlitecpp-dev on Ubuntu 22.04.5 LTS; "
        "the build leaves out --history (SQLiteCpp); everything else works")
    assert "snap" in w.line("install-deps: skipped chromium:")
    assert "libsqlitecpp-dev" in w.summary() and "chromium" in w.summary()
    assert w.summary().startswith("install-deps: installed 31 packages (")


def test_missing_sqlitecpp_is_a_line_not_an_error(tmp_path):
    w = World(tmp_path, "ubuntu2204", path_cmake="3.28.1")
    w.run()
    ok(w)
    w.line("install-deps: skipped libsqlitecpp-dev: apt has no libsqlitecpp-dev")
    assert w.installs() == [[p for p in RUN_SET if p != "cmake"] + ["libgloo-dev"]]
    assert w.summary() == (f"install-deps: installed 13 packages ({' '.join(p for p in RUN_SET if p != 'cmake')} "
                           "libgloo-dev); "
                           "skipped: libsqlitecpp-dev (the run set; --tests adds the test tools)")


# --- --tests ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("distro", ["debian12", "debian13"])
def test_tests_on_debian(tmp_path, distro):
    w = World(tmp_path, distro)
    w.run("--tests")
    ok(w)
    asked = RUN_SET + ["libsqlitecpp-dev", "libgloo-dev"] + TEST_SET + ["chromium", CLANG_RT[distro]]
    assert w.installs() == [asked]
    assert len(w.updates()) == 1
    assert not any(ln.startswith("install-deps: skipped") for ln in w.lines())
    assert w.summary() == f"install-deps: installed {len(asked)} packages ({' '.join(asked)}); nothing skipped"
    if distro == "debian13":
        assert "libclang-rt-14-dev" not in asked
    else:
        assert "libclang-rt-19-dev" not in asked   # bookworm has it too, but its clang is 14


def test_tests_on_ubuntu_2404(tmp_path):
    w = World(tmp_path, "ubuntu2404")
    w.run("--tests")
    ok(w)
    assert w.installs() == [RUN_SET + ["libsqlitecpp-dev", "libgloo-dev"] + TEST_SET + ["libclang-rt-18-dev"]]
    assert w.line("install-deps: skipped chromium:") == (
        "install-deps: skipped chromium: Ubuntu 24.04.2 LTS's chromium packages only install the snap, which this "
        "script does not do (sudo snap install chromium, if you want the HTML report's browser test); "
        "the tests that need it skip visibly")
    assert w.summary().endswith("; skipped: chromium")


@pytest.mark.parametrize("how", ["file", "systemd-detect-virt"])
def test_chromium_in_a_container(tmp_path, how):
    w = World(tmp_path, "ubuntu2404", container=(how == "systemd-detect-virt"))
    w.run("--tests", container_file=(how == "file"))
    ok(w)
    assert "snaps do not run in a container" in w.line("install-deps: skipped chromium:")
    assert not any("chromium" in pkgs for pkgs in w.installs())
    # Debian's chromium is a real package: installed in a container too.
    (tmp_path / "debian").mkdir()
    d = World(tmp_path / "debian", "debian12", container=True)
    d.run("--tests", container_file=True)
    ok(d)
    assert "chromium" in d.installs()[0]


@pytest.mark.parametrize("how", ["slurm.conf", "scontrol"])
def test_slurm_left_alone_where_there_is_one(tmp_path, how):
    w = World(tmp_path, "debian12", slurm_conf=(how == "slurm.conf"), scontrol=(how == "scontrol"))
    w.run("--tests")
    ok(w)
    line = w.line("install-deps: skipped slurm-wlm munge:")
    why = f"{w.slurm_dir}/slurm.conf exists" if how == "slurm.conf" else f"scontrol is on PATH ({w.fakes}/scontrol)"
    assert line == (f"install-deps: skipped slurm-wlm munge: this host already has Slurm ({why}); "
                    "its configuration and daemons are left alone")
    assert not any({"slurm-wlm", "munge"} & set(pkgs) for pkgs in w.installs())
    assert "prometheus" in w.installs()[0]


# --- Nothing to do --------------------------------------------------------------------------------

@pytest.mark.parametrize("distro", ["debian12", "debian13", "ubuntu2204", "ubuntu2404"])
def test_nothing_installed_when_everything_is(tmp_path, distro):
    w = World(tmp_path, distro, installed=all_of(distro), lists_before_update=True,
              path_cmake="3.30.5" if distro == "ubuntu2204" else None)
    w.run("--tests")
    ok(w)
    assert w.apt_calls() == []   # no apt-get update, no install
    expected = {"debian12": [], "debian13": [], "ubuntu2204": ["libsqlitecpp-dev", "chromium"],
                "ubuntu2404": ["chromium"]}[distro]
    skips = [ln.split(":")[1].split()[1] for ln in w.lines() if ln.startswith("install-deps: skipped")]
    assert skips == expected
    assert w.summary() == ("install-deps: nothing to install; "
                           + ("skipped: " + ", ".join(expected) if expected else "nothing skipped"))
    # The run set alone on the same machine: nothing either.
    w.log.write_text("")
    w.run()
    ok(w)
    assert w.apt_calls() == []


# --- Failures and fallbacks -----------------------------------------------------------------------

def test_one_optional_package_apt_cannot_install_does_not_stop_the_others(tmp_path):
    w = World(tmp_path, "debian12", fail_install=["slurm-wlm"])
    w.run("--tests")
    ok(w)
    optional = ["libsqlitecpp-dev", "libgloo-dev"] + TEST_SET + ["chromium", "libclang-rt-14-dev"]
    assert w.installs() == [RUN_SET + optional, RUN_SET] + [[p] for p in optional]
    assert w.line("install-deps: skipped slurm-wlm:") == (
        "install-deps: skipped slurm-wlm: apt-get could not install it (its error is above); "
        "the tests that need it skip visibly")
    assert w.summary().endswith("; skipped: slurm-wlm")
    assert "munge" in w.summary() and "prometheus" in w.summary()


def test_optional_packages_apt_does_not_have_are_skipped_one_line_each(tmp_path):
    w = World(tmp_path, "debian13", drop=["prometheus", "chromium", "libclang-rt-19-dev", "libclang-common-19-dev"])
    w.run("--tests")
    ok(w)
    assert w.line("install-deps: skipped prometheus:") == (
        "install-deps: skipped prometheus: apt has no prometheus on Debian GNU/Linux 13 (trixie); "
        "the tests that need it skip visibly")
    w.line("install-deps: skipped chromium: apt has no chromium")
    w.line("install-deps: skipped libclang-rt-19-dev: apt has no fuzzer runtime for clang 19")
    assert not any(p in w.installs()[0] for p in ("prometheus", "chromium"))
    assert "slurm-wlm" in w.installs()[0] and len(w.installs()) == 1


def test_required_packages_apt_does_not_have_are_one_error(tmp_path):
    """Ubuntu without the universe component: CLI11, nlohmann-json, Chart.js are not there."""
    w = World(tmp_path, "ubuntu2404", drop=["libcli11-dev", "nlohmann-json3-dev", "libjs-chart.js",
                                            "libsqlitecpp-dev"])
    w.run()
    assert w.result.returncode == 1
    assert w.result.stderr.splitlines() == [
        "install-deps: apt has no libcli11-dev nlohmann-json3-dev libjs-chart.js on Ubuntu 24.04.2 LTS, which the "
        "build needs; enable Ubuntu's universe component (sudo add-apt-repository universe), then run this again"]
    assert w.installs() == []


def test_unknown_distribution_is_tried_with_a_warning(tmp_path):
    w = World(tmp_path, "debian11")
    w.run()
    assert w.result.returncode == 1
    assert w.result.stderr.splitlines() == [
        "install-deps: warning: Debian GNU/Linux 11 (bullseye) is not one this script knows (Debian 12 or 13, "
        "Ubuntu 22.04 or 24.04); trying anyway",
        "install-deps: CMake 3.18.4 is older than the 3.24 the build needs; install a newer one: "
        "pip install 'cmake>=3.24' (or Kitware's APT repository), then run this again",
        "install-deps: nlohmann-json 3.9.1 is older than the 3.10 the build needs; use Debian 12 / Ubuntu 22.04 or "
        "newer, or install nlohmann-json >= 3.10 from source, then run this again",
        "install-deps: fmt 7.1.3 is older than the 8 the build needs; use Debian 12 / Ubuntu 22.04 or newer, "
        "or install fmt >= 8 from source, then run this again",
        "install-deps: apt has no libcli11-dev on Debian GNU/Linux 11 (bullseye), which the build needs; "
        "check /etc/apt/sources.list, then run this again",
    ]
    assert w.installs() == []


def test_sudo_when_not_root(tmp_path):
    w = World(tmp_path, "debian12", uid=1000)
    w.run()
    ok(w)
    assert w.apt_calls() and all(c["via_sudo"] and c["frontend"] == "noninteractive" for c in w.apt_calls())
    assert [c["args"] for c in w.calls if c["tool"] == "sudo"] == [["env"], ["env"]]   # update, install
    (tmp_path / "root").mkdir()
    r = World(tmp_path / "root", "debian12")
    r.run()
    ok(r)
    assert not any(c["tool"] == "sudo" for c in r.calls) and not any(c["via_sudo"] for c in r.apt_calls())


def test_help_and_unknown_options(tmp_path):
    w = World(tmp_path, "debian12")
    w.run("--help")
    ok(w)
    assert w.result.stdout.startswith("Usage: scripts/install-deps.sh [--tests] [--help]")
    assert "--tests" in w.result.stdout and w.calls == []
    w.run("--bogus")
    assert w.result.returncode == 2
    assert w.result.stderr.startswith("install-deps: unknown option --bogus") and w.calls == []
