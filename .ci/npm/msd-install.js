#!/usr/bin/env node
// msd-install's npm launcher: runs the binary of this platform's package, pulled by npm as an
// optional dependency (the esbuild / biome pattern). No postinstall, no download, no network.
"use strict";
const fs = require("fs");
const path = require("path");
const { spawnSync } = require("child_process");

// This platform's package: msd-install-<process.platform>-<process.arch>, one per target of the
// release (.ci/channels.py names them the same way); npm installs the one whose os and cpu fit.
const name = path.basename(__filename, ".js");
const exe = process.platform === "win32" ? `${name}.exe` : name;
const pkg = `msd-install-${process.platform}-${process.arch}`;

function locate() {
  try {
    return path.join(path.dirname(require.resolve(`${pkg}/package.json`)), "bin", exe);
  } catch (_) {
    // `npm install -g` of both tarballs puts the platform package beside this one.
    const sibling = path.join(__dirname, "..", "..", pkg, "bin", exe);
    return fs.existsSync(sibling) ? sibling : null;
  }
}

const bin = locate();
// The platforms the release has: this package's optional dependencies.
const known = Object.keys(require("../package.json").optionalDependencies || {}).includes(pkg);
if (!bin && !known) {
  console.error(`msd-install: no prebuilt binary for ${process.platform} ${process.arch}`);
  console.error("hint: build it from source: cargo install --locked msd-install");
  process.exit(1);
}
if (!bin) {
  console.error(`msd-install: the package ${pkg} is not installed (npm installs it as an optional dependency)`);
  console.error("hint: install again without --omit=optional / --no-optional: npm install -g msd-install");
  process.exit(1);
}
const run = spawnSync(bin, process.argv.slice(2), { stdio: "inherit" });
if (run.error) {
  console.error(`msd-install: running ${bin}: ${run.error.message}`);
  process.exit(1);
}
if (run.signal) {
  process.kill(process.pid, run.signal);
}
process.exit(run.status === null ? 1 : run.status);
