// msd-core hooks (written by msd-install; `msd-install uninstall` removes this file).
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

export default async ({ directory, worktree }) => {
  const base = { directory, worktree };
  const started = new Map();
  const pending = [];
  const usage = new Map(); // session id -> {tokens, limit}: the context use the helper measures
  const note = (id, v) => id && usage.set(id, { ...usage.get(id), ...v });
  const hooks = {};
  const on = (name) => HOOKS[name];
  if (on("experimental.chat.system.transform")) {
    hooks["experimental.chat.system.transform"] = async (input, output) => {
      const id = input?.sessionID;
      if (!id) return;
      if (input.model?.limit?.context) note(id, { limit: input.model.limit.context });
      if (!started.has(id)) {
        const event = { ...base, hook: "experimental.chat.system.transform", input: { sessionID: id } };
        started.set(id, run(on("experimental.chat.system.transform"), event).then((r) => reply(r).context));
      }
      const context = await started.get(id);
      if (context) output.system.push(context);
    };
  }
  if (on("tool.execute.before")) {
    hooks["tool.execute.before"] = async (input, output) => {
      const r = await run(on("tool.execute.before"), { ...base, hook: "tool.execute.before", input, output: { args: output?.args } });
      const block = reply(r).block ?? (r.code === 2 ? r.err.trim() || "msd: the guard refused this call" : undefined);
      if (block) throw new Error(block);
    };
  }
  if (on("tool.execute.after") || on("event.file.edited")) {
    hooks["tool.execute.after"] = async (input, output) => {
      const r = on("tool.execute.after") ? await run(on("tool.execute.after"), { ...base, hook: "tool.execute.after", input, usage: usage.get(input?.sessionID) }) : { out: "" };
      const context = [...pending.splice(0), reply(r).context].filter(Boolean);
      if (context.length && typeof output?.output === "string") output.output += "\n\n" + context.join("\n");
    };
  }
  if (on("tool.execute.after") || on("event.file.edited")) {
    hooks.event = async ({ event }) => {
      const info = event?.type === "message.updated" ? event.properties?.info : undefined;
      if (info?.role === "assistant" && info.tokens) note(info.sessionID, { tokens: info.tokens });
      if (event?.type !== "file.edited" || !on("event.file.edited")) return;
      const context = reply(await run(on("event.file.edited"), { ...base, hook: "event", event })).context;
      if (context) pending.push(context);
    };
  }
  return hooks;
};
