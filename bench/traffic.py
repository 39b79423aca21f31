"""Bench: what the traffic inspector's recording costs the JSON-RPC router, per message.

Run: .venv/bin/python bench/traffic.py [N]   (default N = 20000)
Routes N `agent_message_chunk` lines through Connection's line router three ways: bare (the floor),
with a TrafficLog and one listener (as when the inspector is open), and with an RpcLog writing JSONL
(--rpc-log). Prints the best of three runs and each ratio against the floor.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rat_tui.protocol.router import Connection  # noqa: E402
from rat_tui.protocol.rpc_log import RpcLog  # noqa: E402
from rat_tui.protocol.traffic import TrafficLog  # noqa: E402


class NoProcess:
    """The router only writes on requests; routing notifications never touches the process."""

    async def write_line(self, line: bytes) -> None: ...


def chunk_line(n: int) -> bytes:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": f"chunk {n} "}}
    message = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": update}}
    return json.dumps(message).encode()


def route_all(lines: list[bytes], **recorders: object) -> float:
    connection = Connection(NoProcess(), lambda method, params: None, **recorders)  # type: ignore[arg-type]
    started = time.perf_counter()
    for line in lines:
        connection._route_line(line)
    return time.perf_counter() - started


def best(lines: list[bytes], make: callable) -> float:
    return min(route_all(lines, **make()) for _ in range(3))


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    lines = [chunk_line(i) for i in range(n)]
    route_all(lines)  # warm up
    floor = best(lines, dict)

    def with_traffic() -> dict:
        traffic = TrafficLog()
        traffic.subscribe(lambda record: None)
        return {"traffic": traffic}

    traffic = best(lines, with_traffic)
    with tempfile.TemporaryDirectory() as folder:
        counter = iter(range(10))
        rpc = best(lines, lambda: {"rpc_log": RpcLog(Path(folder) / f"rpc-{next(counter)}.jsonl")})

    print(f"{n:,} chunk notifications routed")
    print(f"  floor (bare router)   {floor:7.3f} s  {floor / n * 1e6:6.1f} µs/msg")
    print(f"  + TrafficLog          {traffic:7.3f} s  {traffic / n * 1e6:6.1f} µs/msg  ratio {traffic / floor:.2f}×")
    print(f"  + RpcLog (JSONL file) {rpc:7.3f} s  {rpc / n * 1e6:6.1f} µs/msg  ratio {rpc / floor:.2f}×")


if __name__ == "__main__":
    main()
