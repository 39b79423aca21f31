"""Bench: `rat replay` of a 50,000-message journal into the UI, as a ratio to parsing the same file.

Run: .venv/bin/python bench/replay.py [N]   (default N = 50000)
Writes a journal export of N messages (prompt turns of streamed answer chunks, thoughts, tool calls
with diffs, plans), then measures, best of three:
  - floor: reading and json-parsing the file (`read_recording`), what any replay must do;
  - rebuild: the same plus every message through the reducer into a SessionStore (no UI);
  - UI: ReplayApp headless (Textual's test driver) from start until the replay is done and the last
    message is in the transcript, less the app's start-up measured with a one-turn journal.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rat_tui.history.rebuild import rebuild  # noqa: E402
from rat_tui.history.records import IN, OUT, Recorded, dump_recording, read_recording  # noqa: E402

END = "the very last chunk"


def update(session_update: str, **fields) -> dict:
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": {"sessionUpdate": session_update, **fields}}}


def journal(n: int) -> list[Recorded]:
    records = [
        Recorded(0, OUT, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}),
        Recorded(0, IN, {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1, "agentInfo": {"name": "bench"}}},
                 "initialize"),
        Recorded(0, OUT, {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/p", "mcpServers": []}}),
        Recorded(0, IN, {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s1"}}, "session/new"),
    ]
    turn = 0
    while len(records) < n - 1:
        turn += 1
        prompt_id = 1 + turn
        records.append(Recorded(0, OUT, {"jsonrpc": "2.0", "id": prompt_id, "method": "session/prompt", "params": {
            "sessionId": "s1", "prompt": [{"type": "text", "text": f"turn {turn}: do the next thing"}]}}))
        records.append(Recorded(0, IN, update("agent_thought_chunk", content={"type": "text", "text": "Thinking. " * 5})))
        records.append(Recorded(0, IN, update("plan", entries=[
            {"content": f"step {k}", "priority": "medium", "status": "completed" if k < turn % 4 else "pending"}
            for k in range(4)])))
        call = f"t{turn}"
        records.append(Recorded(0, IN, update("tool_call", toolCallId=call, title=f"Edit file{turn}.py", kind="edit",
                                                  status="in_progress")))
        records.append(Recorded(0, IN, update("tool_call_update", toolCallId=call, status="completed", content=[
            {"type": "diff", "path": f"/p/file{turn}.py", "oldText": "a = 1\nb = 2\n", "newText": "a = 1\nb = 3\n"}])))
        for k in range(400):
            text = f"Chunk {k} of turn {turn}, with some *markdown* and `code`. "
            records.append(Recorded(0, IN, update("agent_message_chunk", content={"type": "text", "text": text})))
            if k % 40 == 39:
                records.append(Recorded(0, IN, update("agent_message_chunk", content={"type": "text", "text": "\n\n"})))
        records.append(Recorded(0, IN, {"jsonrpc": "2.0", "id": prompt_id, "result": {"stopReason": "end_turn"}},
                                "session/prompt"))
    records = records[: n - 1]
    records.append(Recorded(0, IN, update("agent_message_chunk", content={"type": "text", "text": f"\n\n{END}"})))
    return records


async def ui(path: Path) -> float:
    from rat_tui.ui.replay_app import ReplayApp

    started = time.perf_counter()
    app = ReplayApp(read_recording(path), path)
    async with app.run_test(size=(120, 40)) as pilot:
        view = app.tabs.views[0]
        while not (view.session.state.status == "replayed" and END in view.transcript.visible_text()):
            await pilot.pause(0.01)
            view.session.store.flush()
        return time.perf_counter() - started


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50_000
    with tempfile.TemporaryDirectory() as folder:
        os.environ["XDG_DATA_HOME"] = folder  # the app's own history journal goes here, not to the user's
        os.environ["XDG_CONFIG_HOME"] = folder
        big, small = Path(folder) / "big.jsonl", Path(folder) / "small.jsonl"
        big.write_text(dump_recording(journal(n)))
        small.write_text(dump_recording(journal(500)))
        size = big.stat().st_size
        runs: dict[str, list[float]] = {"floor": [], "rebuild": [], "startup": [], "ui": []}
        for _ in range(3):  # interleaved, so a neighbour's load on a shared machine hits all alike
            runs["floor"].append(_timed(lambda: read_recording(big)))
            runs["rebuild"].append(_timed(lambda: rebuild(read_recording(big).records)))
            runs["startup"].append(asyncio.run(ui(small)))
            runs["ui"].append(asyncio.run(ui(big)))
        floor, rebuilt, startup = min(runs["floor"]), min(runs["rebuild"]), min(runs["startup"])
        shown = min(runs["ui"]) - startup
    print(f"replay of a {n:,}-message journal ({size / 1e6:.1f} MB)")
    print(f"  floor: read + json-parse      {floor:6.2f} s  {floor / n * 1e6:5.1f} µs/msg  (1.00×)")
    print(f"  + rebuild through the reducer {rebuilt:6.2f} s  {rebuilt / n * 1e6:5.1f} µs/msg  ratio {rebuilt / floor:.2f}×")
    print(f"  into the UI, to the last line {shown:6.2f} s  {shown / n * 1e6:5.1f} µs/msg  ratio {shown / floor:.2f}×"
          f"  (app start-up {startup:.2f} s not counted)")


def _timed(work) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
