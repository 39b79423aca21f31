"""Bench: N streamed chunks through the Streamable HTTP link (rat_tui/protocol/remote_http.py), against a floor.

Run: .venv/bin/python bench/remote_http_flood.py [--chunks 2000,20000] [--runs 3] [--in-body]

The server is tests/helpers/acp_http_server.py in its own process on 127.0.0.1 (HTTP/1.1): `session/prompt`
with `flood: N` sends N `agent_message_chunk` updates on the session's SSE stream, then the result (`--in-body`:
all in the POST's own SSE answer). Timed: the prompt sent -> its result received, every message before it read
and `json.loads`ed.
- `link`: through StreamableHttpLink.receive() (the link's SSE reading, its look at each message, its queue);
- `floor`: the same exchange with httpx and httpx-sse alone, in the same run (what any client on these
  libraries pays: HTTP, SSE framing, one json.loads a message);
- `ratio` = link / floor (best of `--runs` each). The machine is shared: read ratios, not seconds.
`flood_link(url, n)` and `flood_floor(url, n)` are importable, for a table beside the other transports.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
from httpx_sse import EventSource, aconnect_sse

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rat_tui.protocol.remote_http import StreamableHttpLink  # noqa: E402
from rat_tui.protocol.remote_link import Endpoint  # noqa: E402
from tests.helpers.qwen import free_port  # noqa: E402

INIT = {"protocolVersion": 1, "clientCapabilities": {}}


def rpc(rid: int, method: str, params: dict) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode()


async def flood_link(url: str, chunks: int) -> float:
    """Seconds from the prompt sent to its result, through the link."""
    link = StreamableHttpLink(Endpoint(url))
    await link.open()
    try:
        async def call(rid: int, method: str, params: dict) -> dict:
            await link.send(rpc(rid, method, params))
            while True:
                message = json.loads(await link.receive() or b"null")
                if message.get("id") == rid:
                    return message

        await call(1, "initialize", INIT)
        session = (await call(2, "session/new", {"cwd": "/", "mcpServers": []}))["result"]["sessionId"]
        start = time.perf_counter()
        await call(3, "session/prompt", {"sessionId": session, "flood": chunks, "prompt": []})
        return time.perf_counter() - start
    finally:
        await link.close()


async def flood_floor(url: str, chunks: int) -> float:
    """The same exchange with httpx and httpx-sse alone: the least a client on these libraries pays."""
    async with httpx.AsyncClient(timeout=httpx.Timeout(30.0, read=None)) as client:
        init = await client.post(url, content=rpc(1, "initialize", INIT), headers={"Content-Type": "application/json"})
        headers = {"Acp-Connection-Id": init.headers["Acp-Connection-Id"], "Content-Type": "application/json"}
        async with aconnect_sse(client, "GET", url, headers=dict(headers)) as conn_stream:
            await client.post(url, content=rpc(2, "session/new", {"cwd": "/", "mcpServers": []}), headers=headers)
            async for event in conn_stream.aiter_sse():
                session = json.loads(event.data)["result"]["sessionId"]
                break
        session_headers = {**headers, "Acp-Session-Id": session}
        prompt = rpc(3, "session/prompt", {"sessionId": session, "flood": chunks, "prompt": []})
        # the session's stream open before the prompt, as the link has it
        async with aconnect_sse(client, "GET", url, headers=dict(session_headers)) as session_stream:
            start = time.perf_counter()
            reply = await client.send(client.build_request("POST", url, content=prompt, headers=session_headers),
                                      stream=True)
            in_body = reply.headers.get("content-type", "").startswith("text/event-stream")
            events = EventSource(reply) if in_body else session_stream
            if not in_body:
                await reply.aclose()
            async for event in events.aiter_sse():
                if json.loads(event.data).get("id") == 3:
                    break
            elapsed = time.perf_counter() - start
            await reply.aclose()
        await client.delete(url, headers=headers)
        return elapsed


async def run(url: str, sizes: list[int], runs: int) -> list[dict]:
    rows = []
    for n in sizes:
        link = min([await flood_link(url, n) for _ in range(runs)])
        floor = min([await flood_floor(url, n) for _ in range(runs)])
        rows.append({"chunks": n, "link_s": link, "floor_s": floor, "link_chunks_per_s": n / link,
                     "floor_chunks_per_s": n / floor, "ratio": link / floor})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", default="2000,20000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--in-body", action="store_true", help="the server answers the prompt in the POST's body")
    args = parser.parse_args()
    port = free_port()
    argv = [sys.executable, "-m", "tests.helpers.acp_http_server", "--port", str(port)]
    server = subprocess.Popen(argv + (["--flood-in-body"] if args.in_body else []), cwd=ROOT, stdout=subprocess.PIPE)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().decode().split()[-1]  # "listening on URL"
        rows = asyncio.run(run(url, [int(n) for n in args.chunks.split(",")], args.runs))
    finally:
        server.terminate()
        server.wait(timeout=10)
    mode = "POST's own SSE answer" if args.in_body else "session SSE stream"
    print(f"Streamable HTTP flood over HTTP/1.1 on 127.0.0.1 ({mode}), best of {args.runs}")
    print(f"{'chunks':>8} {'link s':>8} {'floor s':>8} {'link chunks/s':>14} {'floor chunks/s':>15} {'ratio':>6}")
    for r in rows:
        print(f"{r['chunks']:>8} {r['link_s']:>8.3f} {r['floor_s']:>8.3f} {r['link_chunks_per_s']:>14,.0f} "
              f"{r['floor_chunks_per_s']:>15,.0f} {r['ratio']:>6.2f}")


if __name__ == "__main__":
    main()
