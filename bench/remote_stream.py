"""Bench: the same floods over stdio and over the network, in one run (issue #46).

Run: .venv/bin/python bench/remote_stream.py [--only chunks2000,chunks20000] [--scale 1.0] [--runs 1]
                                             [--transports stdio,ws,http]
                                             [--http-serve 'COMMAND {port} -- {agent}'] [--json FILE]

Per workload, each transport launches a fresh `rat` in tmux (bench/stress.py's `run_app`: Enter -> the end on
screen, and `~`/Backspace typed every 0.1 s while it streams, each timed until it shows):
- `stdio`: `rat -- bench/stress_agent.py`, the agent a child process (as every other bench);
- `ws`: `rat connect ws://127.0.0.1:P/acp/ws`, the same agent behind `acpremote expose` on 127.0.0.1 (the
  server relays each line as a WebSocket text frame: one more process and two more socket hops than stdio;
  the server and its agent run at the priority rat gives a local agent, as they would on another machine);
- `http`: `rat connect http://127.0.0.1:P/acp` (Streamable HTTP), when rat_tui.protocol.remote_http is
  importable: the same agent behind tests/helpers/acp_http_server.py's `StdioRelay` (hypercorn,
  HTTP/1.1, relaying each of the agent's lines as an SSE event on its session's stream, or the connection's), or
  behind the server `--http-serve` names (`{port}` and `{agent}` are filled in).
The ratio is each transport's `shown s` over the stdio floor (a parse-only client on the same agent over pipes,
bench/stress.py's `floor`), measured in the same run; `vs stdio` is its `shown s` over stdio's. `ws floor s`
is the same parse-only client over a WebSocket to the same server (websockets' client, json.loads of every
frame): what the server and the socket cost before any client does anything; `vs floor` is the ws row's
`shown s` over it. Goals (#46): remote within 1.3x of stdio, echo <= 50 ms. The machine is shared: read
ratios, not seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import shlex
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import stress  # noqa: E402  (bench/ is not a package)

ACPREMOTE = Path(sys.executable).parent / "acpremote"
RAT_CONNECT = [sys.executable, "-m", "rat_tui", "connect"]


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """A server process in its own group (killed whole at the end), up once its `GET /acp` answers."""

    def __init__(self, argv: list[str], port: int, scale: float) -> None:
        env = {**os.environ, "RAT_STRESS_SCALE": str(scale)}
        self.process = subprocess.Popen(argv, env=env, start_new_session=True, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        # The server stands in for another machine: here it shares our cores, so it gets the priority rat gives
        # a local agent (config `agent_nice`), as the stdio row's agent has; the agents it starts inherit it.
        from rat_tui.config import AGENT_NICE
        from rat_tui.protocol.transport import lower_priority

        lower_priority(self.process.pid, AGENT_NICE)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/acp", timeout=1):
                    return
            except OSError as error:
                if getattr(error, "code", None):  # an HTTP answer of any status: it is up
                    return
            time.sleep(0.05)
        self.close()
        raise SystemExit(f"the server never came up: {shlex.join(argv)}")

    def close(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)


def transports() -> dict[str, object]:
    """name -> how to launch rat for it (None: over stdio), or why it is skipped (a str)."""
    chosen: dict[str, object] = {"stdio": None, "ws": "ws"}
    if importlib.util.find_spec("rat_tui.protocol.remote_http") is None:
        chosen["http"] = "skipped: rat_tui.protocol.remote_http is not in this tree"
    else:
        chosen["http"] = "http"
    return chosen


def serve_http_relay(port: int) -> None:
    """`--serve-http PORT`: the stress agent behind a Streamable HTTP server, one agent per connection."""
    sys.path.insert(0, str(HERE.parent))
    from tests.helpers.acp_http_server import StdioRelay

    async def run() -> None:
        async with StdioRelay(stress.AGENT, port=port, max_sessions=10**6):
            await asyncio.Event().wait()

    asyncio.run(run())


async def ws_floor(url: str, name: str) -> float:
    """A parse-only client over the WebSocket: initialize, session/new, then the prompt until its answer."""
    from websockets.asyncio.client import connect

    async with connect(url, max_size=None, compression=None) as socket:
        async def call(mid: int, method: str, params: dict) -> None:
            await socket.send(json.dumps({"jsonrpc": "2.0", "id": mid, "method": method, "params": params}))
            while True:
                message = json.loads(await socket.recv(decode=False))
                if message.get("id") == mid and "method" not in message:
                    return
                if "method" in message and "id" in message:
                    await socket.send(json.dumps({"jsonrpc": "2.0", "id": message["id"],
                                                  "result": {"outcome": {"outcome": "cancelled"}}}))

        await call(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        await call(1, "session/new", {"cwd": os.getcwd(), "mcpServers": []})
        start = time.perf_counter()
        await call(2, "session/prompt", {"sessionId": "stress", "prompt": [{"type": "text", "text": name}]})
        return time.perf_counter() - start


def serve_ws(port: int, scale: float) -> Server:
    return Server([str(ACPREMOTE), "expose", "--port", str(port), "--", *stress.AGENT], port, scale)


def run_remote(kind: str, name: str, args: argparse.Namespace) -> dict:
    port = free_port()
    agent = shlex.join(stress.AGENT)
    if kind == "ws":
        server = serve_ws(port, args.scale)
        url = f"ws://127.0.0.1:{port}/acp/ws"
    else:
        command = args.http_serve.format(port=port, agent=agent) if args.http_serve else \
            shlex.join([sys.executable, str(Path(__file__).resolve()), "--serve-http", str(port)])
        server = Server(shlex.split(command), port, args.scale)
        url = f"http://127.0.0.1:{port}/acp"
    try:
        return stress.run_app(name, args.scale, args.timeout, argv=[*RAT_CONNECT, url])
    finally:
        server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="chunks2000,chunks20000")
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--timeout", type=float, default=90.0)
    parser.add_argument("--runs", type=int, default=1, help="runs of each row, transports in turn (default 1)")
    parser.add_argument("--transports", default="stdio,ws,http", help="the rows to run (stdio always runs: the "
                        "others are read against it)")
    parser.add_argument("--http-serve", help="a Streamable HTTP server command: {port} and {agent} filled in")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--serve-http", type=int, metavar="PORT", help=argparse.SUPPRESS)  # the relay, run by us
    args = parser.parse_args()
    if args.serve_http:
        return serve_http_relay(args.serve_http)
    chosen = transports()
    for kind, how in chosen.items():
        if isinstance(how, str) and how.startswith("skipped"):
            print(f"{kind}: {how}", flush=True)
    wanted = {"stdio", *args.transports.split(",")}
    live = [kind for kind, how in chosen.items()
            if kind in wanted and not (isinstance(how, str) and how.startswith("skipped"))]
    print(f"{'workload':<12} {'transport':<9} {'floor s':>8} {'shown s':>8} {'ratio':>7} {'vs stdio':>8} "
          f"{'ws floor s':>10} {'vs floor':>8} {'echo max':>9} {'echo p50':>9} {'keys':>5}", flush=True)
    results: dict[str, list[dict]] = {}
    for name in args.only.split(","):
        for run in range(args.runs):
            base = asyncio.run(stress.floor(name, args.scale))
            port = free_port()
            server = serve_ws(port, args.scale)
            try:
                over_ws = asyncio.run(ws_floor(f"ws://127.0.0.1:{port}/acp/ws", name))
            finally:
                server.close()
            rows: dict[str, dict] = {}
            # In turn first and last, so no transport always runs on the coolest (or hottest) machine.
            for kind in (live if run % 2 == 0 else list(reversed(live))):
                got = stress.run_app(name, args.scale, args.timeout) if kind == "stdio" else run_remote(kind, name, args)
                got.pop("keys_log", None)
                got["floor_s"], got["ws_floor_s"] = base, over_ws
                rows[kind] = got
            for kind in live:
                got = rows[kind]
                shown, stdio = got.get("shown_s"), rows["stdio"].get("shown_s")
                print(f"{name:<12} {kind:<9} {base:>8.3f} {stress.fmt(shown, '.3f'):>8} "
                      f"{stress.fmt(shown / base if shown else None):>7} "
                      f"{stress.fmt(shown / stdio if shown and stdio else None):>8} "
                      f"{over_ws:>10.3f} {stress.fmt(shown / over_ws if shown and kind == 'ws' else None):>8} "
                      f"{stress.fmt(got.get('echo_max_ms'), '.0f'):>9} {stress.fmt(got.get('echo_p50_ms'), '.0f'):>9} "
                      f"{got.get('keys', 0):>5}  {got.get('error', '')}", flush=True)
                results.setdefault(f"{name}@{kind}", []).append(got)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
