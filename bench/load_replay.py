"""Bench: reopening a session whose `session/load` replays N updates (default 5,000).

Run: .venv/bin/python bench/load_replay.py [N]
Three ways on the same scripted agent (tests/agents/scripted_agent.py, a real subprocess):
- floor: a parse-only client (spawn, initialize, session/load, json.loads every line until the answer);
- session: AgentSession with `attach_session_id` until the tab is ready (every update in the store);
- app: the headless app opening that session until the last replayed message is in the transcript.
Prints the best of three runs of each and the ratios against the floor.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rat_tui.session.agent_session import AgentSession  # noqa: E402
from rat_tui.protocol import wire  # noqa: E402

AGENT = ROOT / "tests" / "agents" / "scripted_agent.py"


def argv(folder: Path, n: int) -> list[str]:
    script = {"initialize_result": {"agentCapabilities": {"loadSession": True}},
              "on_request": {"session/load": [[{"replay": n}]]}}
    path = folder / "script.json"
    path.write_text(json.dumps(script))
    return [sys.executable, str(AGENT), str(path)]


async def floor(command: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(*command, stdin=asyncio.subprocess.PIPE,
                                                   stdout=asyncio.subprocess.PIPE, limit=1 << 24)
    assert process.stdin and process.stdout
    for i, (method, params) in enumerate([
        ("initialize", {"protocolVersion": 1, "clientCapabilities": {}}),
        ("session/load", {"sessionId": "s", "cwd": str(cwd), "mcpServers": []}),
    ]):
        process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}).encode() + b"\n")
        while True:
            message = json.loads(await process.stdout.readline())
            if message.get("id") == i:
                break
    elapsed = time.perf_counter() - started
    process.stdin.close()
    await process.wait()
    return elapsed


async def session_run(command: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    session = AgentSession(SimpleNamespace(name="bench", argv=command, env={}), cwd, attach_session_id="s")
    task = asyncio.create_task(session.run())
    while session.state.status != "ready":
        await asyncio.sleep(0.001)
    elapsed = time.perf_counter() - started
    await session.stop()
    await task
    return elapsed


async def app_run(command: list[str], cwd: Path, n: int) -> float:
    from rat_tui.app import RatApp
    from rat_tui.agents.spec import AgentSpec

    last = f"answer {n // 2 - 1}"
    app = RatApp(AgentSpec(name="bench", argv=command, env={}, is_demo=False), cwd)
    async with app.run_test(size=(120, 40)) as pilot:
        while app.session.state.status != "ready":
            await pilot.pause(0.01)
        started = time.perf_counter()
        session = await app.open_session(app.session.command, cwd, attach_session_id="s")
        view = app.tabs.active_view
        while session.state.status != "ready" or last not in view.transcript.plain_text:
            await pilot.pause(0.005)
        return time.perf_counter() - started


async def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    wire.schema()
    with tempfile.TemporaryDirectory() as folder:
        cwd = Path(folder)
        command = argv(cwd, n)
        base = min([await floor(command, cwd) for _ in range(3)])
        stored = min([await session_run(command, cwd) for _ in range(3)])
        shown = min([await app_run(command, cwd, n) for _ in range(3)])
    print(f"{n} replayed updates")
    print(f"floor (parse-only client)   {base * 1000:8.1f} ms")
    print(f"AgentSession to ready       {stored * 1000:8.1f} ms   {stored / base:5.2f}x floor")
    print(f"app tab, last entry shown   {shown * 1000:8.1f} ms   {shown / base:5.2f}x floor "
          "(includes spawning the agent, which the floor also pays)")


if __name__ == "__main__":
    asyncio.run(main())
