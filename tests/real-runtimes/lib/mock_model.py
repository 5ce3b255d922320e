#!/usr/bin/env python3
"""A tiny mock model endpoint for the real-runtime acceptance tier (python3 stdlib only).

    python3 mock_model.py --port 0 --record FILE [--max-seconds 60] [--max-requests 50]
                          [--reply TEXT] [--tool-call NAME [--tool-args JSON] [--tool-times N]]...

Listens on 127.0.0.1 only and prints its port on the first stdout line. Answers
  Anthropic  POST .../v1/messages (and .../count_tokens)
  OpenAI     POST .../chat/completions and POST .../responses
  Gemini     POST ...:generateContent and ...:streamGenerateContent (SSE with alt=sse)
  models     GET  .../models (a one-model list)
with a short final text reply, as SSE when the client asks for a stream. With --tool-call NAME it
answers the first N requests that offer a tool called NAME (and carry no tool result yet) with a
call of that tool instead; with several --tool-call/--tool-args pairs, a request that already
carries k tool results is answered with the k-th call (a scripted sequence). Every request is appended to FILE as one JSON line
{"t", "method", "path", "headers", "body"}. Exits by itself after --max-seconds or after
--max-requests requests.

With --script FILE (the session tier) the mock plays a script instead: FILE holds
{"turns": [...], "sub_marker": TEXT, "sub_reply": TEXT, "ignore_markers": [TEXT...]}; each turn is {"tool": NAME or [NAMES], "args": {...}}
(a call of that tool, the first of NAMES the request offers; a "{{last.KEY}}" string in the
arguments is KEY of the last tool result) or {"text": ...} (a final answer). A request of the main conversation that
already carries k tool results is answered with turn k (past the end: the final --reply); a
request that holds sub_marker (a line of a subagent's prompt) is a subagent's and is answered with
sub_reply; one that holds any of "ignore_markers" (a CLI's own side agents, such as a memory
extractor) gets a short text and role "other". Each record then also holds "role" (main/sub/other), "tool_results" (the text of every tool
result the request carries, in order) and "answer" (the turn given).
"""
import argparse
import gzip
import json
import sys
import threading
import time
import uuid
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ARGS = None
LOCK = threading.Lock()
STATE = {"n": 0, "tool_calls": 0}
SERVER = None
KEEP_HEADERS = ("user-agent", "content-type", "anthropic-version", "anthropic-beta", "x-api-key",
                "authorization", "openai-beta", "x-goog-api-key", "accept", "content-encoding")


def tools_offered(body):
    names = []
    if not isinstance(body, dict):
        return names
    for t in body.get("tools") or []:
        if not isinstance(t, dict):
            continue
        if "name" in t:
            names.append(t["name"])
        fn = t.get("function")
        if isinstance(fn, dict) and "name" in fn:
            names.append(fn["name"])
        for d in t.get("functionDeclarations") or t.get("function_declarations") or []:
            if isinstance(d, dict) and "name" in d:
                names.append(d["name"])
        # A namespace of tools (Codex's multi_agent_v1: spawn_agent, ...).
        for d in t.get("tools") or []:
            if isinstance(d, dict) and "name" in d:
                names.append(d["name"])
    return names


def tool_namespace(body, name):
    """The namespace a tool of the request sits in (Responses API `type: namespace`), or None."""
    for t in (body or {}).get("tools") or []:
        if isinstance(t, dict) and t.get("type") == "namespace":
            if any(isinstance(d, dict) and d.get("name") == name for d in t.get("tools") or []):
                return t.get("name")
    return None


def is_custom_tool(body, name):
    """Whether the request offers `name` as a freeform tool (Responses API `type: custom`)."""
    return any(isinstance(t, dict) and t.get("type") == "custom" and t.get("name") == name
               for t in (body or {}).get("tools") or [])


def has_tool_result(body):
    s = json.dumps(body) if not isinstance(body, str) else body
    return any(k in s for k in ('"tool_result"', '"role": "tool"', '"function_call_output"',
                                '"custom_tool_call_output"', '"functionResponse"'))


def count_tool_results(body):
    s = json.dumps(body) if not isinstance(body, str) else body
    return sum(s.count(k) for k in ('"type": "tool_result"', '"role": "tool"',
                                    '"type": "function_call_output"', '"type": "custom_tool_call_output"',
                                    '"functionResponse"'))


CALL = {"name": None, "args": "{}"}
SCRIPT = None


def tool_results(body):
    """The text of every tool result a request carries, in order, whatever the protocol."""
    out = []

    def text_of(v):
        if isinstance(v, str):
            return v
        if isinstance(v, list):
            return "\n".join(text_of(x) for x in v)
        if isinstance(v, dict):
            for k in ("text", "output", "content", "response", "result", "error"):
                if k in v:
                    return text_of(v[k])
        return json.dumps(v)

    def walk(v):
        if isinstance(v, dict):
            t = v.get("type")
            if t in ("tool_result", "function_call_output", "custom_tool_call_output") or v.get("role") == "tool":
                out.append(text_of(v.get("content", v.get("output"))))
                return
            if "functionResponse" in v:
                out.append(text_of(v["functionResponse"].get("response")))
                return
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(body)
    return out


def fill(v, results):
    """A turn's arguments with "{{last.KEY}}" strings replaced by KEY of the last tool result
    (parsed as JSON): Codex's wait_agent needs the id spawn_agent returned."""
    if isinstance(v, dict):
        return {k: fill(x, results) for k, x in v.items()}
    if isinstance(v, list):
        return [fill(x, results) for x in v]
    if isinstance(v, str) and v.startswith("{{last.") and v.endswith("}}") and results:
        try:
            return json.loads(results[-1]).get(v[7:-2], v)
        except (ValueError, AttributeError):
            return v
    return v


def scripted(body):
    """(role, call-or-None, text) for a request under --script."""
    s = json.dumps(body) if not isinstance(body, str) else body
    for other in SCRIPT.get("ignore_markers", []):
        if other in s:
            return "other", None, "MOCK: nothing to add."
    marker = SCRIPT.get("sub_marker")
    if marker and marker in s:
        return "sub", None, SCRIPT.get("sub_reply", "SUB-DONE")
    k = len(tool_results(body))
    turns = SCRIPT.get("turns", [])
    if k < len(turns):
        t = turns[k]
        if "tool" in t:
            offered = tools_offered(body)
            names = t["tool"] if isinstance(t["tool"], list) else [t["tool"]]
            for name in names:
                if name in offered:
                    args = fill(t.get("args", {}), tool_results(body))
                    return "main", {"name": name, "args": json.dumps(args)}, None
            return "main", None, "MOCK: no tool %s offered (offered: %s)" % ("/".join(names), ", ".join(offered))
        return "main", None, t.get("text", ARGS.reply)
    return "main", None, ARGS.reply


def want_tool(body):
    """The call to answer this request with, or None. With one --tool-call: the first
    --tool-times requests that offer the tool and carry no tool result yet. With several
    --tool-call/--tool-args pairs: a request that already carries k tool results gets the k-th
    call (a scripted sequence within one conversation)."""
    if SCRIPT is not None:
        return body.get("_mock_call") if isinstance(body, dict) else None
    calls = ARGS.tool_call or []
    if not calls:
        return None
    offered = tools_offered(body)
    if len(calls) == 1:
        if calls[0] not in offered or has_tool_result(body):
            return None
        with LOCK:
            if STATE["tool_calls"] >= ARGS.tool_times:
                return None
            STATE["tool_calls"] += 1
        k = 0
    else:
        k = count_tool_results(body)
        if k >= len(calls) or calls[k] not in offered:
            return None
    args = ARGS.tool_args[k] if k < len(ARGS.tool_args) else "{}"
    return {"name": calls[k], "args": args}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    reply_text = None

    def text(self):
        return self.reply_text if self.reply_text is not None else ARGS.reply

    def log_message(self, fmt, *a):
        sys.stderr.write("mock: " + (fmt % a) + "\n")

    def _body(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        enc = (self.headers.get("content-encoding") or "").lower()
        try:
            if enc == "gzip":
                raw = gzip.decompress(raw)
            elif enc == "deflate":
                raw = zlib.decompress(raw)
        except Exception:
            pass
        try:
            return json.loads(raw.decode("utf-8")) if raw else None
        except Exception:
            return {"_raw_len": len(raw), "_encoding": enc,
                    "_text": raw[:20000].decode("utf-8", "replace")}

    def _record(self, body):
        rec = {"t": time.time(), "method": self.command, "path": self.path,
               "headers": {k: v for k, v in self.headers.items() if k.lower() in KEEP_HEADERS},
               "body": body}
        if SCRIPT is not None and isinstance(body, dict) and self.command == "POST":
            role, call, text = scripted(body)
            rec.update(role=role, tool_results=tool_results(body), answer=call or {"text": text})
            self.script_answer = (call, text)
        with LOCK:
            STATE["n"] += 1
            n = STATE["n"]
            with open(ARGS.record, "a", encoding="utf-8") as f:
                f.write(json.dumps(rec) + "\n")
        if n >= ARGS.max_requests:
            threading.Thread(target=SERVER.shutdown, daemon=True).start()

    def _send(self, code, obj, ctype="application/json"):
        data = (json.dumps(obj) if not isinstance(obj, (bytes, str)) else obj)
        data = data.encode() if isinstance(data, str) else data
        self.send_response(code)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sse(self, events):
        """events: list of (event-name or None, data obj or str)."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        for name, data in events:
            chunk = ""
            if name:
                chunk += "event: %s\n" % name
            chunk += "data: %s\n\n" % (data if isinstance(data, str) else json.dumps(data))
            self.wfile.write(chunk.encode())
            self.wfile.flush()
        self.close_connection = True

    def do_GET(self):
        self._record(None)
        if self.headers.get("upgrade", "").lower() == "websocket":
            return self._send(426, {"error": {"message": "no websockets here"}})
        if self.path.split("?")[0].rstrip("/").endswith("models"):
            return self._send(200, {"object": "list", "data": [
                {"id": "mock-model", "object": "model", "type": "model", "display_name": "mock",
                 "created": 0, "owned_by": "mock"}],
                "models": [{"name": "models/mock-model", "slug": "mock-model"}],
                "has_more": False})
        return self._send(200, {})

    def do_POST(self):
        body = self._body()
        self.script_answer = None
        self._record(body)
        if self.script_answer is not None and isinstance(body, dict):
            # Carried to want_tool() and reply_text() of this request only (not recorded).
            body["_mock_call"], self.reply_text = self.script_answer
        path = self.path.split("?")[0]
        stream = isinstance(body, dict) and bool(body.get("stream"))
        if path.endswith("/count_tokens"):
            return self._send(200, {"input_tokens": 10})
        if path.endswith("/messages"):
            return self.anthropic(body, stream)
        if path.endswith("/chat/completions"):
            return self.chat(body, stream)
        if path.endswith("/responses"):
            return self.h_responses(body, stream)
        if ":streamGenerateContent" in path:
            return self.gemini(body, True)
        if ":generateContent" in path:
            return self.gemini(body, False)
        if ":countTokens" in path:
            return self._send(200, {"totalTokens": 10})
        if path.rstrip("/").endswith("/get-models"):
            # Auggie's model config (augment.mjs toGetModelsResult); feature_flags become its
            # featureFlagsV2, where `enable_hooks` gates every hook (augment.mjs:867, :7049).
            return self._send(200, {"default_model": "mock-model", "languages": [],
                                    "models": [{"name": "mock-model", "suggested_prefix_char_count": 0,
                                                "suggested_suffix_char_count": 0}],
                                    "feature_flags": {"enable_hooks": True}})
        return self._send(404, {"error": {"message": "mock: unknown path " + path}})

    # ---- Anthropic ------------------------------------------------------------------------
    def anthropic(self, body, stream):
        model = (body or {}).get("model", "mock-model")
        mid = "msg_" + uuid.uuid4().hex[:20]
        tool = want_tool(body)
        usage = {"input_tokens": 10, "output_tokens": 5}
        if tool:
            block = {"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:20],
                     "name": tool["name"], "input": json.loads(tool["args"])}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": self.text()}
            stop = "end_turn"
        if not stream:
            return self._send(200, {"id": mid, "type": "message", "role": "assistant", "model": model,
                                    "content": [block], "stop_reason": stop, "stop_sequence": None,
                                    "usage": usage})
        start_block = dict(block)
        if tool:
            start_block["input"] = {}
            delta = {"type": "input_json_delta", "partial_json": tool["args"]}
        else:
            start_block["text"] = ""
            delta = {"type": "text_delta", "text": self.text()}
        self._sse([
            ("message_start", {"type": "message_start", "message": {
                "id": mid, "type": "message", "role": "assistant", "model": model, "content": [],
                "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": start_block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 5}}),
            ("message_stop", {"type": "message_stop"}),
        ])

    # ---- OpenAI chat completions ----------------------------------------------------------
    def chat(self, body, stream):
        model = (body or {}).get("model", "mock-model")
        cid = "chatcmpl-" + uuid.uuid4().hex[:20]
        tool = want_tool(body)
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if tool:
            call = {"index": 0, "id": "call_" + uuid.uuid4().hex[:16], "type": "function",
                    "function": {"name": tool["name"], "arguments": tool["args"]}}
            msg = {"role": "assistant", "content": None, "tool_calls": [call]}
            finish = "tool_calls"
        else:
            msg = {"role": "assistant", "content": self.text()}
            finish = "stop"
        if not stream:
            return self._send(200, {"id": cid, "object": "chat.completion", "created": int(time.time()),
                                    "model": model, "choices": [{"index": 0, "message": msg,
                                                                 "finish_reason": finish}],
                                    "usage": usage})
        base = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()), "model": model}
        ev = [(None, dict(base, choices=[{"index": 0, "delta": dict(msg), "finish_reason": None}])),
              (None, dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": finish}])),
              (None, dict(base, choices=[], usage=usage)),
              (None, "[DONE]")]
        self._sse(ev)

    # ---- OpenAI responses -----------------------------------------------------------------
    def h_responses(self, body, stream):
        model = (body or {}).get("model", "mock-model")
        rid = "resp_" + uuid.uuid4().hex[:20]
        tool = want_tool(body)
        if tool and is_custom_tool(body, tool["name"]):
            # A freeform tool (Responses `type: custom`, Codex's apply_patch for the models its
            # catalog knows): the call carries raw text, the script's `input` argument.
            try:
                text = json.loads(tool["args"]).get("input", tool["args"])
            except (ValueError, AttributeError):
                text = tool["args"]
            item = {"type": "custom_tool_call", "id": "ctc_" + uuid.uuid4().hex[:16], "status": "completed",
                    "call_id": "call_" + uuid.uuid4().hex[:16], "name": tool["name"], "input": text}
        elif tool:
            item = {"type": "function_call", "id": "fc_" + uuid.uuid4().hex[:16], "status": "completed",
                    "call_id": "call_" + uuid.uuid4().hex[:16], "name": tool["name"],
                    "arguments": tool["args"]}
            ns = tool_namespace(body, tool["name"])
            if ns:
                item["namespace"] = ns
        else:
            item = {"type": "message", "id": "msg_" + uuid.uuid4().hex[:16], "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": self.text(), "annotations": []}]}
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
        resp = {"id": rid, "object": "response", "created_at": int(time.time()), "status": "completed",
                "model": model, "output": [item], "usage": usage}
        if not stream:
            return self._send(200, resp)
        pending = dict(resp, status="in_progress", output=[])
        ev = [("response.created", {"type": "response.created", "sequence_number": 0, "response": pending}),
              ("response.in_progress", {"type": "response.in_progress", "sequence_number": 1, "response": pending})]
        if tool:
            ev += [("response.output_item.added", {"type": "response.output_item.added", "sequence_number": 2,
                                                   "output_index": 0, "item": dict(item, status="in_progress")}),
                   ("response.output_item.done", {"type": "response.output_item.done", "sequence_number": 3,
                                                  "output_index": 0, "item": item})]
        else:
            empty = dict(item, status="in_progress", content=[])
            part = {"type": "output_text", "text": "", "annotations": []}
            ev += [("response.output_item.added", {"type": "response.output_item.added", "sequence_number": 2,
                                                   "output_index": 0, "item": empty}),
                   ("response.content_part.added", {"type": "response.content_part.added", "sequence_number": 3,
                                                    "item_id": item["id"], "output_index": 0, "content_index": 0,
                                                    "part": part}),
                   ("response.output_text.delta", {"type": "response.output_text.delta", "sequence_number": 4,
                                                   "item_id": item["id"], "output_index": 0, "content_index": 0,
                                                   "delta": self.text()}),
                   ("response.output_text.done", {"type": "response.output_text.done", "sequence_number": 5,
                                                  "item_id": item["id"], "output_index": 0, "content_index": 0,
                                                  "text": self.text()}),
                   ("response.content_part.done", {"type": "response.content_part.done", "sequence_number": 6,
                                                   "item_id": item["id"], "output_index": 0, "content_index": 0,
                                                   "part": dict(part, text=self.text())}),
                   ("response.output_item.done", {"type": "response.output_item.done", "sequence_number": 7,
                                                  "output_index": 0, "item": item})]
        ev.append(("response.completed", {"type": "response.completed", "sequence_number": 8, "response": resp}))
        self._sse(ev)

    # ---- Gemini ---------------------------------------------------------------------------
    def gemini(self, body, stream):
        tool = want_tool(body)
        if tool:
            part = {"functionCall": {"name": tool["name"], "args": json.loads(tool["args"])}}
        else:
            part = {"text": self.text()}
        resp = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP",
                                "index": 0}],
                "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
                "modelVersion": "mock-model"}
        if not stream:
            return self._send(200, resp)
        if "alt=sse" in self.path:
            return self._sse([(None, resp)])
        return self._send(200, [resp])


def main():
    global ARGS, SERVER, SCRIPT
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--record", required=True)
    ap.add_argument("--max-seconds", type=float, default=60)
    ap.add_argument("--max-requests", type=int, default=50)
    ap.add_argument("--reply", default="MOCK-REPLY: done.")
    ap.add_argument("--tool-call", action="append", default=[],
                    help="tool to call (repeat for a scripted sequence)")
    ap.add_argument("--tool-args", action="append", default=[],
                    help="JSON arguments of the matching --tool-call")
    ap.add_argument("--tool-times", type=int, default=1)
    ap.add_argument("--script", help="JSON file: a session script (see the module doc)")
    ARGS = ap.parse_args()
    if ARGS.script:
        with open(ARGS.script, encoding="utf-8") as f:
            SCRIPT = json.load(f)
    for a in ARGS.tool_args:
        json.loads(a)
    open(ARGS.record, "a").close()
    SERVER = ThreadingHTTPServer(("127.0.0.1", ARGS.port), Handler)
    SERVER.daemon_threads = True
    print(SERVER.server_address[1], flush=True)
    timer = threading.Timer(ARGS.max_seconds, SERVER.shutdown)
    timer.daemon = True
    timer.start()
    try:
        SERVER.serve_forever(poll_interval=0.2)
    finally:
        SERVER.server_close()


if __name__ == "__main__":
    main()
