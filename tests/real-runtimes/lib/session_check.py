#!/usr/bin/env python3
"""The session tier's checks over what the scripted mock model recorded (python3 stdlib only).

    session_check.py helper   REC                      the helper's JSON came back as tool result 1
    session_check.py guard    REC PROJECT [ENVFILE]    result 2 is msd's refusal of ENVFILE (.env), result 3
                                                       came after it and notes.txt was written
    session_check.py context  REC LINE                 LINE is in a request of the main conversation
    session_check.py subagent REC TOOL...              a subagent's request offered every TOOL
                                                       (but those in $SS_WITHHELD, said)

Prints one line, `PASS <reason>`, `FAIL <reason>` or `N/A <reason>` (the CLI's own limit) (the reason quotes what the CLI sent back),
and exits 0 either way (the caller records the verdict). REC is the mock's JSONL (--script mode:
each record has role, tool_results and answer).
"""
import json
import os
import sys

# One reading of which tools a request offers: the mock model's (it sits beside this file).
from mock_model import tools_offered as offered


def records(path):
    out = []
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
    except OSError:
        pass
    return [r for r in out if r.get("method") == "POST" and "role" in r]


def short(s, n=240):
    s = " ".join(str(s).split())
    return s if len(s) <= n else s[:n] + "..."


def main_results(recs):
    """The longest list of tool results the main conversation carried."""
    best = []
    for r in recs:
        if r["role"] == "main" and len(r["tool_results"]) > len(best):
            best = r["tool_results"]
    return best


def main():
    what, rec = sys.argv[1], sys.argv[2]
    recs = records(rec)
    if not recs:
        return print("FAIL the CLI sent no request to the mock model")
    res = main_results(recs)
    if what == "helper":
        if not res:
            calls = [r["answer"] for r in recs if r["role"] == "main"]
            return print("FAIL no tool result came back (the mock answered: %s)" % short(calls[:2]))
        r0 = res[0]
        # (Some CLIs hand the output back inside a JSON string of their own: quotes escaped.)
        if ('"workflow"' in r0 or '\\"workflow\\"' in r0) and "{" in r0:
            return print("PASS the helper's JSON came back: %s" % short(r0, 80))
        return print("FAIL tool result 1 is not the helper's JSON: %s" % short(r0))
    if what == "guard":
        project = sys.argv[3]
        envf = sys.argv[4] if len(sys.argv) > 4 else ".env"
        if len(res) < 2:
            return print("FAIL the %s write got no tool result (%d results)" % (envf, len(res)))
        r1 = res[1]
        env = os.path.exists(os.path.join(project, envf))
        notes = os.path.exists(os.path.join(project, "notes.txt"))
        if env:
            return print("FAIL %s was written; tool result 2: %s" % (envf, short(r1)))
        if "msd: refusing to write" not in r1:
            if len(res) >= 3 and notes:
                return print("N/A the CLI refuses the %s write itself, before msd's hook runs: %s" % (envf, short(r1)))
            return print("FAIL %s refused, not by msd's guard, and the session did not go on: %s" % (envf, short(r1)))
        if len(res) < 3 or not notes:
            return print("FAIL after the refusal the session did not write notes.txt (%d results; %s)"
                         % (len(res), short(res[-1])))
        return print("PASS msd refused %s (%s), notes.txt written" % (envf, short(r1, 90)))
    if what == "context":
        line = sys.argv[3]
        for r in recs:
            if r["role"] == "main" and line in json.dumps(r.get("body")):
                return print("PASS the session-start line is in request %d" % (recs.index(r) + 1))
        return print("FAIL no request of the session holds %r" % line)
    if what == "subagent":
        want = sys.argv[3:]
        subs = [r for r in recs if r["role"] == "sub"]
        if not subs:
            calls = [r["answer"] for r in recs if r["role"] == "main"]
            tail = main_results(recs)
            return print("FAIL no subagent request carried the planner's prompt (mock answered %s; results %s)"
                         % (short(calls[:1]), short(tail[:1])))
        names = offered(subs[0].get("body"))
        missing = [t for t in want if t not in names]
        withheld = [t for t in missing if t in os.environ.get("SS_WITHHELD", "").split()]
        if missing and missing == withheld:
            return print("PASS the planner's prompt and its tools, but %s, which the approval mode withholds "
                         "from the whole session (see the helper check)" % ", ".join(withheld))
        if missing:
            return print("FAIL the planner was offered %s, not %s" % (", ".join(names) or "no tools", ", ".join(missing)))
        return print("PASS the planner's prompt and its tools %s" % ", ".join(want))
    print("FAIL unknown check " + what)


if __name__ == "__main__":
    main()
