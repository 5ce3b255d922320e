#!/usr/bin/env node
// msd-install's npm launcher: runs the binary of this platform's package, pulled by npm as an
// optional dependency (the esbuild / biome pattern). No postinstall, no download, no network.
"use strict";
const fs = require("fs");
const path = require("path");
const { spawnSync } = require("child_process");

const PACKAGES = {
  "linux x64": "msd-install-linux-x64",
  "linux arm64": "msd-install-linux-arm64",
  "darwin x64": "msd-install-darwin-x64",
  "darwin arm64": "msd-install-darwin-arm64",
  "win32 x64": "msd-install-win32-x64",
};
const name = path.basename(__filename, ".js");
const exe = process.platform === "win32" ? `${name}.exe` : name;
const pkg = PACKAGES[`${process.platform} ${process.arch}`];
if (!pkg) {
  console.error(`msd-install: no prebuilt binary for ${process.platform} ${process.arch}`);
  console.error("hint: build it from source: cargo install --locked msd-install");
  process.exit(1);
}

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
