// msd-core hooks (written by msd-install; `msd-install uninstall` removes this file).
__PRELUDE__

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
