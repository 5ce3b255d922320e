#!/usr/bin/env python3
"""Writes msd-install's platform wheel: both binaries as scripts (pip puts them on the venv's
PATH), no Python code. The wheel format (PEP 427) written directly with the standard library,
as maturin's `bindings = "bin"` lays it out, so .ci/packages needs no tool from the network.

usage: wheel.py VERSION TRIPLE BIN_DIR OUT_DIR
"""
import base64
import hashlib
import os
import platform
import sys
import zipfile


def platform_tag(triple):
    arch = triple.split("-")[0]
    if "linux" in triple:
        # Built against this machine's glibc: it runs on this glibc and newer.
        libc, ver = platform.libc_ver()
        major, minor = (ver.split(".") + ["0"])[:2] if libc == "glibc" and ver else ("2", "17")
        return f"manylinux_{major}_{minor}_{arch}"
    if "apple-darwin" in triple:
        return "macosx_11_0_arm64" if arch == "aarch64" else "macosx_10_12_x86_64"
    if "windows" in triple:
        return "win_amd64"
    sys.exit(f"wheel.py: no wheel platform tag for {triple}")


def digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def main():
    version, triple, bin_dir, out_dir = sys.argv[1:5]
    exe = ".exe" if "windows" in triple else ""
    tag = f"py3-none-{platform_tag(triple)}"
    dist = "msd_install"
    info = f"{dist}-{version}.dist-info"
    data = f"{dist}-{version}.data/scripts"
    files = []
    for name in ("msd-install", "msd_run"):
        with open(os.path.join(bin_dir, name + exe), "rb") as f:
            files.append((f"{data}/{name}{exe}", f.read(), 0o755))
    # The marker self-update reads: this binary is PyPI's to update.
    files.append((f"{data}/msd-install.channel", b"pypi\n", 0o644))
    files.append((f"{info}/METADATA", (
        "Metadata-Version: 2.1\n"
        "Name: msd-install\n"
        f"Version: {version}\n"
        "Summary: Installer of the msd-core framework for AI coding runtimes (Claude Code, Codex, Gemini CLI, ...)\n"
        "Home-page: https://github.com/msd-core/msd-install\n"
        "License: MIT\n"
        "Requires-Python: >=3.8\n").encode(), 0o644))
    files.append((f"{info}/WHEEL", (
        "Wheel-Version: 1.0\n"
        "Generator: msd-install .ci/wheel.py\n"
        "Root-Is-Purelib: false\n"
        f"Tag: {tag}\n").encode(), 0o644))
    record = "".join(f"{p},{digest(b)},{len(b)}\n" for p, b, _ in files) + f"{info}/RECORD,,\n"
    files.append((f"{info}/RECORD", record.encode(), 0o644))
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{dist}-{version}-{tag}.whl")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for p, b, mode in files:
            zi = zipfile.ZipInfo(p, date_time=(2020, 1, 1, 0, 0, 0))
            zi.external_attr = (0o100000 | mode) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, b)
    print(path)


if __name__ == "__main__":
    main()
