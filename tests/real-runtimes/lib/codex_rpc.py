#!/usr/bin/env python3
"""A minimal JSON-RPC client for `codex app-server` (stdio, one JSON message per line).

    codex_rpc.py --out FILE [--timeout 60] [--turn TEXT] [--thread] -- codex app-server [-c k=v ...]
    (requests: JSON objects {"method": ..., "params": ...} on stdin, one per line)

Initializes, sends each request, and writes {"method", "params", "result"|"error"} per request
to FILE as a JSON list. With --turn TEXT it then starts a thread, sends TEXT as a turn and waits
for `turn/completed` (or the timeout), recording every notification in FILE's "notifications".
Server-initiated requests (approvals) are answered with a decline. Bounded by --timeout.
"""
import argparse
import json
import os
import select
import subprocess
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--turn", default=None)
    ap.add_argument("--cwd", default=os.getcwd())
    # The thread's sandbox and approval policy (thread/start): the probe's default reads only and
    # never asks; the session tier runs as a user who accepted edits in the workspace.
    ap.add_argument("--sandbox", default="read-only")
    ap.add_argument("--approval", default="never")
    # Start a thread in --cwd before the requests; "{{thread}}" in a request is its id (the
    # calls Codex's TUI makes for the thread it shows, with that thread's config and MCP servers).
    ap.add_argument("--thread", action="store_true")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    reqs = [json.loads(l) for l in sys.stdin if l.strip()]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=sys.stderr,
                         cwd=a.cwd)
    deadline = time.time() + a.timeout
    buf = b""
    nid = [0]
    notes = []
    out = {"responses": [], "notifications": notes, "timed_out": False}

    def send(obj):
        p.stdin.write((json.dumps(obj) + "\n").encode())
        p.stdin.flush()

    def read_msg():
        nonlocal buf
        while True:
            if b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                if line.strip():
                    try:
                        return json.loads(line)
                    except ValueError:
                        continue
                continue
            left = deadline - time.time()
            if left <= 0:
                return None
            r, _, _ = select.select([p.stdout], [], [], min(left, 1.0))
            if r:
                chunk = os.read(p.stdout.fileno(), 65536)
                if not chunk:
                    return None
                buf += chunk

    def call(method, params):
        nid[0] += 1
        my = nid[0]
        send({"jsonrpc": "2.0", "id": my, "method": method, "params": params})
        while True:
            m = read_msg()
            if m is None:
                out["timed_out"] = True
                return {"error": "timeout or EOF waiting for %s" % method}
            if "id" in m and m.get("id") == my and ("result" in m or "error" in m):
                return m
            handle_other(m)

    def handle_other(m):
        if "method" in m and "id" in m:  # a server request: decline approvals
            send({"jsonrpc": "2.0", "id": m["id"], "result": {"decision": "decline"}})
            notes.append({"server_request": m.get("method"), "params": m.get("params")})
        elif "method" in m:
            notes.append({"method": m["method"], "params": m.get("params")})

    try:
        init = call("initialize", {"clientInfo": {"name": "msd-real-runtimes", "title": None,
                                                  "version": "0.0.0"},
                                   "capabilities": {"experimentalApi": True}})
        out["initialize"] = init
        send({"jsonrpc": "2.0", "method": "initialized"})
        if a.thread:
            t = call("thread/start", {"cwd": a.cwd, "approvalPolicy": a.approval, "sandbox": a.sandbox})
            out["thread_start"] = t
            tid = ((t.get("result") or {}).get("thread") or {}).get("id") or ""
            reqs = [json.loads(json.dumps(r).replace("{{thread}}", tid)) for r in reqs]
        for r in reqs:
            m = call(r["method"], r.get("params", {}))
            out["responses"].append({"method": r["method"], "params": r.get("params"),
                                     "result": m.get("result"), "error": m.get("error")})
        if a.turn is not None:
            t = call("thread/start", {"cwd": a.cwd, "approvalPolicy": a.approval,
                                      "sandbox": a.sandbox})
            out["thread_start"] = t
            tid = ((t.get("result") or {}).get("thread") or {}).get("id")
            if tid:
                ts = call("turn/start", {"threadId": tid, "input": [{"type": "text", "text": a.turn}]})
                out["turn_start"] = ts
                while True:
                    m = read_msg()
                    if m is None:
                        out["timed_out"] = True
                        break
                    handle_other(m)
                    if m.get("method") == "turn/completed":
                        break
    finally:
        json.dump(out, open(a.out, "w"), indent=1)
        try:
            p.stdin.close()
        except Exception:
            pass
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


if __name__ == "__main__":
    main()
