#!/usr/bin/env python3
"""The data of msd-install's channel packages, for .ci/packages (here and in the release
workflow's channels job), read from a dist manifest: the one place the release's targets are
listed (dist-workspace.toml's `targets`, as `dist plan` writes them). Standard library only, so
it runs alike on Linux, macOS and Windows runners.

usage:
  channels.py targets MANIFEST                       the target triples (MANIFEST: a dist manifest,
                                                     or dist-workspace.toml)
  channels.py archive MANIFEST TRIPLE                the name of a triple's release archive
  channels.py npm-platform TRIPLE                    npm's `<os>-<cpu>` of a triple (linux-x64)
  channels.py launcher MANIFEST VERSION DIR          DIR/package.json of the npm launcher package
                                                     (MANIFEST as for targets)
  channels.py platform-package TRIPLE VERSION DIR    DIR/package.json of a platform's npm package
  channels.py formula MANIFEST DIR VERSION           the Homebrew formula over DIR's archives
  channels.py local-release TRIPLE VERSION BIN OUT   OUT/ laid out as a published release
"""
import hashlib
import io
import json
import os
import sys
import tarfile
import zipfile

APP = "msd-install"
BINARIES = ("msd-install", "msd_run")
REPOSITORY = "https://github.com/msd-core/msd-install"
DESCRIPTION = ("Install the msd-core spec-driven development framework into AI coding runtimes "
               "(Claude Code, Codex, Gemini CLI, ...)")
# npm's process.platform and process.arch of a target triple's parts.
NPM_OS = {"linux": "linux", "apple-darwin": "darwin", "windows": "win32"}
NPM_CPU = {"x86_64": "x64", "aarch64": "arm64"}
# Homebrew's blocks of the same parts (Homebrew has no Windows).
BREW_OS = {"linux": "on_linux", "apple-darwin": "on_macos"}
BREW_CPU = {"x86_64": "on_intel", "aarch64": "on_arm"}


def part(table, triple):
    for key, value in table.items():
        if key in triple:
            return value
    return None


def archives(manifest_path):
    """(triple, archive name) of each release archive the manifest lists, sorted."""
    with open(manifest_path, encoding="utf-8") as f:
        doc = json.load(f)
    out = []
    for release in doc.get("releases", []):
        if release.get("app_name") != APP:
            continue
        for name in release.get("artifacts", []):
            artifact = doc["artifacts"].get(name, {})
            if artifact.get("kind") == "executable-zip":
                for triple in artifact.get("target_triples", []):
                    out.append((triple, artifact.get("name", name)))
    if not out:
        sys.exit(f"channels.py: {manifest_path} lists no {APP} archive")
    return sorted(out)


def targets_of(source):
    """The release's targets: from a dist manifest, or (before any plan, as .ci/packages builds
    for this machine) from dist-workspace.toml's `targets`, the list the manifest is made from."""
    if not source.endswith(".toml"):
        return [t for t, _ in archives(source)]
    import re
    with open(source, encoding="utf-8") as f:
        text = f.read()
    found = re.search(r"^targets\s*=\s*\[(.*?)\]", text, re.S | re.M)
    if not found:
        sys.exit(f"channels.py: {source} has no targets")
    return sorted(re.findall(r'"([^"]+)"', found.group(1)))


def npm_platform(triple):
    os_, cpu = part(NPM_OS, triple), NPM_CPU.get(triple.split("-")[0])
    if not (os_ and cpu):
        sys.exit(f"channels.py: no npm platform for {triple}")
    return os_, cpu


def write_json(path, doc):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


def launcher(manifest, version, out):
    optional = {}
    for triple in targets_of(manifest):
        os_, cpu = npm_platform(triple)
        optional[f"{APP}-{os_}-{cpu}"] = version
    write_json(os.path.join(out, "package.json"), {
        "name": APP,
        "version": version,
        "description": DESCRIPTION,
        "license": "MIT",
        "repository": "github:msd-core/msd-install",
        "homepage": REPOSITORY,
        "bin": {APP: "bin/msd-install.js"},
        "files": ["bin/"],
        "engines": {"node": ">=18"},
        "optionalDependencies": optional,
    })


def platform_package(triple, version, out):
    os_, cpu = npm_platform(triple)
    write_json(os.path.join(out, "package.json"), {
        "name": f"{APP}-{os_}-{cpu}",
        "version": version,
        "description": f"The msd-install and msd_run binaries for {os_}-{cpu} (installed by the msd-install package)",
        "license": "MIT",
        "repository": "github:msd-core/msd-install",
        "os": [os_],
        "cpu": [cpu],
        "files": ["bin/"],
        "preferUnplugged": True,
    })


def sha256_of(directory, name):
    """The digest of `name`: its .sha256 file beside it, else its bytes."""
    path = os.path.join(directory, name)
    if os.path.exists(path + ".sha256"):
        with open(path + ".sha256", encoding="utf-8") as f:
            return f.read().split()[0]
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def formula(manifest, directory, version):
    blocks = {}
    for triple, name in archives(manifest):
        os_block, cpu_block = part(BREW_OS, triple), BREW_CPU.get(triple.split("-")[0])
        if not (os_block and cpu_block):
            continue
        url = f"{REPOSITORY}/releases/download/v{version}/{name}"
        blocks.setdefault(os_block, []).append(
            f"    {cpu_block} do\n      url \"{url}\"\n      sha256 \"{sha256_of(directory, name)}\"\n    end\n")
    body = "".join(f"  {os_block} do\n{''.join(cpus)}  end\n\n" for os_block, cpus in sorted(blocks.items()))
    return f'''# Homebrew formula of msd-install {version}, written by .ci/channels.py from the release's dist
# manifest and checksums (every macOS and Linux archive of the release).
class MsdInstall < Formula
  desc "Install the msd-core spec-driven development framework into AI coding runtimes"
  homepage "{REPOSITORY}"
  version "{version}"
  license "MIT"

{body}  def install
    bin.install "msd-install", "msd_run"
  end

  test do
    assert_match version.to_s, shell_output("#{{bin}}/msd-install --version")
    system bin/"msd-install", "--runtime", "claude", "--config-dir", testpath/".claude", "--quiet"
    assert_path_exists testpath/".claude/msd-core/bin/msd_run"
  end
end
'''


def archive_suffix(triple):
    """The archive format dist-workspace.toml gives the triple's platform."""
    key = "windows-archive" if "windows" in triple else "unix-archive"
    default = ".zip" if "windows" in triple else ".tar.xz"
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "dist-workspace.toml"), encoding="utf-8") as f:
        for line in f:
            if line.strip().startswith(key):
                return line.split("=", 1)[1].strip().strip('"')
    return default


def local_release(triple, version, bin_dir, out):
    """A release directory as dist lays one out, for this platform: the archive (its format
    from dist-workspace.toml), its .sha256, sha256.sum and dist-manifest.json."""
    exe = ".exe" if "windows" in triple else ""
    root = f"{APP}-{triple}"
    name = root + archive_suffix(triple)
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    files = [(b + exe, os.path.join(bin_dir, b + exe), 0o755) for b in BINARIES]
    files += [(d, os.path.join(here, d), 0o644) for d in ("README.md", "LICENSE", "CHANGELOG.md")]
    buf = io.BytesIO()
    if name.endswith(".zip"):
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            for arc, path, mode in files:
                info = zipfile.ZipInfo(f"{root}/{arc}", date_time=(2020, 1, 1, 0, 0, 0))
                info.external_attr = (0o100000 | mode) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                with open(path, "rb") as f:
                    z.writestr(info, f.read())
    elif name.endswith(".tar.gz"):
        with tarfile.open(fileobj=buf, mode="w:gz") as t:
            for arc, path, mode in files:
                info = t.gettarinfo(path, f"{root}/{arc}")
                info.mode, info.uid, info.gid, info.uname, info.gname = mode, 0, 0, "", ""
                with open(path, "rb") as f:
                    t.addfile(info, f)
    else:
        sys.exit(f"channels.py: no writer for {name}")
    data = buf.getvalue()
    sha = hashlib.sha256(data).hexdigest()
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
    line = f"{sha} *{name}\n"
    for path in (os.path.join(out, name + ".sha256"), os.path.join(out, "sha256.sum")):
        with open(path, "w", encoding="utf-8") as f:
            f.write(line)
    write_json(os.path.join(out, "dist-manifest.json"), {
        "dist_version": "0.33.0",
        "announcement_tag": f"v{version}",
        "releases": [{"app_name": APP, "app_version": version, "artifacts": [name, f"{name}.sha256"]}],
        "artifacts": {
            name: {"name": name, "kind": "executable-zip", "target_triples": [triple],
                   "assets": [{"name": b, "path": b + exe, "kind": "executable"} for b in BINARIES],
                   "checksum": f"{name}.sha256", "checksums": {"sha256": sha}},
            f"{name}.sha256": {"name": f"{name}.sha256", "kind": "checksum", "target_triples": [triple]},
        },
    })
    print(name)


def main():
    cmd, args = (sys.argv[1], sys.argv[2:]) if len(sys.argv) > 1 else ("", [])
    if cmd == "targets" and len(args) == 1:
        print("\n".join(targets_of(args[0])))
    elif cmd == "archive" and len(args) == 2:
        print(dict(archives(args[0]))[args[1]])
    elif cmd == "npm-platform" and len(args) == 1:
        print("-".join(npm_platform(args[0])))
    elif cmd == "launcher" and len(args) == 3:
        launcher(*args)
    elif cmd == "platform-package" and len(args) == 3:
        platform_package(*args)
    elif cmd == "formula" and len(args) == 3:
        sys.stdout.write(formula(*args))
    elif cmd == "local-release" and len(args) == 4:
        local_release(*args)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
