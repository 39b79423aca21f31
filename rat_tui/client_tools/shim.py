"""The stdio MCP server rat-tui declares to agents without MCP-over-ACP: a relay to the running rat-tui.

    python -m rat_tui.client_tools.shim --socket PATH        (the secret comes in env RAT_MCP_SECRET)

The agent starts it like any stdio MCP server. It connects to the session's private Unix socket
(client_tools/bridge.py), proves it belongs to that session with the secret, then copies MCP
JSON-RPC lines from stdin to the socket and back to stdout. It exits when the agent closes its stdin
or rat-tui closes the socket (rat-tui quit, crashed or ended the session). Standard library only, so
it starts fast.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import threading

SECRET_ENV = "RAT_MCP_SECRET"


def fail(text: str, code: int) -> None:
    print(f"rat-tui MCP shim: {text}", file=sys.stderr, flush=True)
    os._exit(code)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m rat_tui.client_tools.shim")
    parser.add_argument("--socket", required=True, help="the session's bridge socket")
    args = parser.parse_args(argv)
    secret = os.environ.get(SECRET_ENV, "")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(args.socket)
        sock.sendall(json.dumps({"secret": secret}).encode() + b"\n")
    except OSError as error:
        fail(f"cannot reach rat-tui at {args.socket}: {error}", 1)
    incoming = sock.makefile("rb")
    try:
        reply = json.loads(incoming.readline() or b"{}")
    except (OSError, ValueError):
        reply = {}
    if not isinstance(reply, dict) or reply.get("ok") is not True:
        fail(f"rat-tui refused the connection: {reply.get('error', 'no answer') if isinstance(reply, dict) else reply}", 2)

    def agent_to_rat() -> None:
        try:
            for line in sys.stdin.buffer:
                sock.sendall(line if line.endswith(b"\n") else line + b"\n")
        except OSError:
            pass
        os._exit(0)  # the agent closed our stdin (or rat-tui is gone)

    threading.Thread(target=agent_to_rat, daemon=True).start()
    try:
        for line in incoming:
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()
    except (OSError, ValueError):
        pass
    os._exit(0)  # rat-tui closed the socket


if __name__ == "__main__":
    main()
