// Drives Cursor's own hook engine from @cursor/sdk (evidence/cursor.md): its hooks loader reads
// the hooks files of a HOME and a project as the local agent does, and its executor runs each
// command and parses what it prints. No model, no network, no API key.
//
//   node cursor_hooks.mjs <sdk package dir> <project> <out.json>
//
// The loader and executor are not exported by the package: the probe imports the package's
// bun bundle (dist/bundled/index.js, the same code as dist/cjs) through a copy beside it that
// differs only by a first line (`import.meta.require`, which bun provides and node does not)
// and a last line exporting the bundle's hooks adapter (`Xa1`, createHooksRuntime) and the
// lazy initialiser of its defaults (`Qa1`). `bun:sqlite`, imported by an unrelated store, is
// resolved to a stub. Nothing else of Cursor's code is changed.
import { register } from "node:module";
import { readFileSync, writeFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [sdk, project, out] = process.argv.slice(2);
const stub = "export class Database { constructor() { throw new Error('bun:sqlite is not available under node'); } }";
const loader = `export async function resolve(s, c, next) {
  if (s === "bun:sqlite") return { url: ${JSON.stringify("data:text/javascript," + encodeURIComponent(stub))}, shortCircuit: true };
  return next(s, c);
}`;
register("data:text/javascript," + encodeURIComponent(loader));

const dir = join(sdk, "dist", "bundled");
const src = readFileSync(join(dir, "index.js"), "utf8");
for (const needle of ["function Xa1($={}){return{createHooksRuntime(J){", "var Qa1=E(()=>{", "var Y8=import.meta.require"]) {
  if (!src.includes(needle)) {
    writeFileSync(out, JSON.stringify({ fatal: `the bundle has no ${needle}: not the pinned @cursor/sdk` }));
    process.exit(0);
  }
}
const copy = join(dir, `index.msd-probe-${process.pid}.js`);
writeFileSync(
  copy,
  'import { createRequire as __msdRequire } from "node:module"; import.meta.require = __msdRequire(import.meta.url);\n' +
    src +
    "\nexport { Xa1 as __msdHooksAdapter, Qa1 as __msdHooksDefaults };\n",
);
let m;
try {
  m = await import(pathToFileURL(copy).href);
} finally {
  rmSync(copy, { force: true });
}
m.__msdHooksDefaults();

const ws = await m.__msdHooksAdapter({}).createHooksRuntime({
  workspaceState: { workingDirectory: project, workspaceRoots: [project] },
});
const cfg = ws.hooksConfig;
const sources = {};
for (const k of ["userHooks", "projectHooks", "claudeUserHooks", "claudeProjectHooks", "claudeProjectLocalHooks"]) {
  if (!cfg[k]) continue;
  sources[k] = Object.fromEntries(
    Object.entries(cfg[k].hooks || {}).map(([step, hs]) => [step, hs.map((h) => ({ ...h }))]),
  );
}
const session = ws.createSessionRuntime({});
const ex = session.hookExecutor;
const base = { conversation_id: `probe-${process.pid}`, generation_id: "g-1", model: "probe-model" };
const tool = (name, input) => ({ ...base, tool_name: name, tool_input: input, tool_use_id: `t-${name}` });
const cases = {};
const run = async (name, step, payload) => {
  try {
    cases[name] = (await ex.executeHookForStep(step, payload)) ?? null;
  } catch (e) {
    cases[name] = { error: String(e) };
  }
};
await run("sessionStart", "sessionStart", { ...base, is_background_agent: false });
await run("write-env", "preToolUse", tool("Write", { file_path: join(project, ".env"), content: "TOKEN=x\n" }));
await run("read-env", "preToolUse", tool("Read", { file_path: join(project, ".env") }));
await run("write-source", "preToolUse", tool("Write", { file_path: join(project, "README.md"), content: "# probe\n" }));
await run("edit-config", "afterFileEdit", {
  ...base,
  file_path: join(project, ".planning", "config.json"),
  edits: [{ old_string: "", new_string: '{"mode": "yolo"}' }],
});
await run(
  "post-edit",
  "postToolUse",
  tool("Write", { file_path: join(project, ".planning", "config.json"), content: '{"mode": "yolo"}' }),
);
writeFileSync(out, JSON.stringify({ errors: cfg.errors, sources, cases }, null, 1));
process.exit(0);
