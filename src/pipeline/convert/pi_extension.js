// msd-core hooks for Pi (written by msd-install; `msd-install uninstall` removes this file).
__PRELUDE__

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
