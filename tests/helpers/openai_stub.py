"""A small OpenAI-compatible model for tests: `/v1/chat/completions` (streamed as SSE, or one JSON answer) that
plays a script chosen by a marker in the conversation's last user text, so a real agent (Qwen Code) runs
offline, reproducibly and fast.

Markers (the last user text that holds `STUB:<step> [key=value ...]` picks the step):

- `STUB:text [say=X]`: a few text chunks; with `say=X` the reply ends `(text-ok-X)`.
- `STUB:write file=P`: a call of the agent's file-writing tool (which asks the client's permission), then,
  once the tool's result came back, a text naming the file.
- `STUB:slow [n=N] [delay=S]`: N text chunks (default 40), S seconds apart (default 0.25): something to cancel
  or to cut.

Requests without tools (an agent's side requests: titles, summaries) get a short text; without a marker, a
text that says so. Runs in a thread of the test process on 127.0.0.1 (a real socket)."""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MARKER = re.compile(r"STUB:(\w+)((?:\s+\w+=\S+)*)")
WRITE_TOOLS = ("write_file", "WriteFile", "write")


def _text_of(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(c.get("text", "") for c in content if isinstance(c, dict) and c.get("type") == "text")
    return content or ""


def plan(messages: list[dict], tools: list[str]) -> dict:
    """What to answer: {"text": str, "chunks": int, "delay": float} or {"tool": name, "args": {...}}."""
    marker_at, step, args = None, None, {}
    for i, msg in enumerate(messages):
        if msg.get("role") == "user" and (found := MARKER.search(_text_of(msg.get("content")))):
            marker_at, step = i, found.group(1)
            args = dict(pair.split("=", 1) for pair in found.group(2).split())
    if step is None:
        return {"text": "(stub) no STUB marker in the conversation."}
    results = [m for m in messages[marker_at + 1:] if m.get("role") == "tool"]
    if step == "text":
        say = f" (text-ok-{args['say']})" if "say" in args else ""
        return {"text": f"Hello from the stub model, with **markdown**.{say}"}
    if step == "slow":
        n = int(args.get("n", 40))
        return {"text": "".join(f"slow chunk {i}. " for i in range(n)), "chunks": n,
                "delay": float(args.get("delay", 0.25))}
    if step == "write":
        path = args.get("file", "stub-out.txt")
        tool = next((name for name in WRITE_TOOLS if name in tools), None)
        if results or tool is None:
            return {"text": f"Wrote {path}." if results else f"(stub) no write tool among {tools[:10]}"}
        return {"tool": tool, "args": {"file_path": path, "content": "written by the stub model\n"}}
    return {"text": f"(stub) unknown step {step}"}


class _Handler(BaseHTTPRequestHandler):
    server: _StubServer
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # the test output stays quiet
        pass

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            return self._json({"object": "list", "data": [{"id": "stub-model", "object": "model"}]})
        self._json({"error": {"message": "not found"}}, 404)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if not self.path.rstrip("/").endswith("/chat/completions"):
            return self._json({"error": {"message": "not found"}}, 404)
        request = json.loads(body or b"{}")
        tools = [(t.get("function") or t).get("name", "") for t in request.get("tools") or []]
        answer = plan(request.get("messages") or [], tools) if tools else {"text": "Stub session"}
        record = {"tools": len(tools), "answer": answer, "done": False}
        self.server.requests.append(record)
        if request.get("stream"):
            self._stream(answer, request.get("model", "stub-model"))
        else:
            self._complete(answer, request.get("model", "stub-model"))
        record["done"] = True

    def _json(self, obj: Any, status: int = 200) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _complete(self, answer: dict, model: str) -> None:
        message: dict[str, Any] = {"role": "assistant", "content": answer.get("text", "")}
        if "tool" in answer:
            message["tool_calls"] = [{"id": "call_1", "type": "function",
                                      "function": {"name": answer["tool"], "arguments": json.dumps(answer["args"])}}]
        self._json({"id": "chatcmpl-stub", "object": "chat.completion", "created": int(time.time()), "model": model,
                    "choices": [{"index": 0, "message": message,
                                 "finish_reason": "tool_calls" if "tool" in answer else "stop"}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})

    def _stream(self, answer: dict, model: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        def event(delta: dict, finish: str | None = None, **extra: Any) -> None:
            obj = {"id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": int(time.time()),
                   "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
            self._chunk(f"data: {json.dumps(obj)}\n\n".encode())

        event({"role": "assistant", "content": ""})
        if "tool" in answer:
            event({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                   "function": {"name": answer["tool"], "arguments": json.dumps(answer["args"])}}]})
            event({}, "tool_calls")
        else:
            text, n = answer["text"], answer.get("chunks", 3)
            size = max(1, -(-len(text) // n))
            for start in range(0, len(text), size):
                event({"content": text[start:start + size]})
                time.sleep(answer.get("delay", 0))
            event({}, "stop")
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        self._chunk(f"data: {json.dumps({'id': 'chatcmpl-stub', 'choices': [], 'usage': usage})}\n\n".encode())
        self._chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()


class _StubServer(ThreadingHTTPServer):
    daemon_threads = True
    requests: list[dict]

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # an agent killed mid-request (the crash tests) resets its connection: not the stub's failure


class OpenAIStub:
    """`with OpenAIStub() as stub:` serves on 127.0.0.1 at `stub.url` (base URL with /v1) until the block ends;
    `stub.requests` lists what each request was answered (tools offered, the plan chosen, `done` once all of
    the answer was written)."""

    def __init__(self) -> None:
        self._server = _StubServer(("127.0.0.1", 0), _Handler)
        self._server.requests = []
        self._thread = threading.Thread(target=self._server.serve_forever, name="openai-stub", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}/v1"

    @property
    def requests(self) -> list[dict]:
        return self._server.requests

    def __enter__(self) -> OpenAIStub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
