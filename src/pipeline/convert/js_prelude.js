// A shim: every decision is the helper's (`msd_run hook <name> --protocol opencode`), which gets
// the event as JSON on stdin and answers {"context": ...} or {"block": ...} (exit 2).
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const HELPER = fileURLToPath(new URL(__HELPER__, import.meta.url));
const HOOKS = __HOOKS__;

// Runs the helper (no shell: an argv array), the event on stdin; never rejects.
function run(args, event) {
  return new Promise((resolve) => {
    let out = "", err = "", done = false;
    const finish = (code) => { if (!done) { done = true; clearTimeout(timer); resolve({ code, out, err }); } };
    let child;
    try {
      child = spawn(HELPER, args, { stdio: ["pipe", "pipe", "pipe"], windowsHide: true });
    } catch (e) {
      return resolve({ code: -1, out, err: String(e) });
    }
    const timer = setTimeout(() => { child.kill(); finish(-1); }, 10000);
    child.stdout.on("data", (d) => { out += d; });
    child.stderr.on("data", (d) => { err += d; });
    child.on("error", (e) => { err += String(e); finish(-1); });
    child.on("close", (code) => finish(code));
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(event));
  });
}

function reply(r) {
  try { return r.out.trim() ? JSON.parse(r.out) : {}; } catch { return {}; }
}
