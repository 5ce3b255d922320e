// msd-core hooks for Pi (written by msd-install; `msd-install uninstall` removes this file).
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

// The session's id and directory, from the context Pi passes every handler.
function where(ctx) {
  let session;
  try { session = ctx?.sessionManager?.getSessionId?.(); } catch { session = undefined; }
  return { directory: ctx?.cwd ?? process.cwd(), session };
}

export default function (pi) {
  const started = new Map();
  if (HOOKS["before_agent_start"]) {
    // Each prompt's turn starts from Pi's base system prompt: the session's line (asked once per
    // session) is appended every turn.
    pi.on("before_agent_start", async (event, ctx) => {
      const { directory, session } = where(ctx);
      const key = session ?? "";
      if (!started.has(key)) {
        const e = { directory, worktree: directory, hook: "before_agent_start", input: { sessionID: session } };
        started.set(key, run(HOOKS["before_agent_start"], e).then((r) => reply(r).context));
      }
      const context = await started.get(key);
      if (!context || typeof event?.systemPrompt !== "string") return undefined;
      return { systemPrompt: event.systemPrompt + "\n\n" + context };
    });
  }
  if (HOOKS["tool_call"]) {
    pi.on("tool_call", async (event, ctx) => {
      const { directory, session } = where(ctx);
      const e = { directory, worktree: directory, hook: "tool_call", input: { tool: event?.toolName, sessionID: session, callID: event?.toolCallId }, output: { args: event?.input } };
      const r = await run(HOOKS["tool_call"], e);
      const block = reply(r).block ?? (r.code === 2 ? r.err.trim() || "msd: the guard refused this call" : undefined);
      return block ? { block: true, reason: block } : undefined;
    });
  }
}
