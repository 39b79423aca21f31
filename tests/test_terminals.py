"""terminal/* with real processes: shell lines, byte limits, exit status, kill, release, env, cwd."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from rat_tui.protocol.router import INVALID_PARAMS, RpcError
from rat_tui.protocol.terminals import TerminalManager


@pytest.fixture
async def manager(tmp_path: Path):
    terminals = TerminalManager(tmp_path)
    yield terminals
    await terminals.close_all()


async def run(manager: TerminalManager, command: str, **extra: object) -> tuple[str, dict]:
    """Create a terminal, wait for its exit (bounded) and return its id and final output."""
    created = await manager.create({"sessionId": "s", "command": command, **extra})
    terminal_id = created["terminalId"]
    status = await asyncio.wait_for(manager.wait_for_exit({"sessionId": "s", "terminalId": terminal_id}), 20)
    output = await manager.output({"sessionId": "s", "terminalId": terminal_id})
    assert output["exitStatus"] == status
    return terminal_id, output


async def test_shell_line_without_args(manager: TerminalManager, tmp_path: Path) -> None:
    _, output = await run(manager, "echo harness-shell-ok | tee shell-out.txt && echo second")
    assert output["output"] == "harness-shell-ok\nsecond\n"
    assert output["truncated"] is False
    assert output["exitStatus"] == {"exitCode": 0, "signal": None}
    assert (tmp_path / "shell-out.txt").read_text() == "harness-shell-ok\n"


async def test_args_form_is_executed_directly(manager: TerminalManager) -> None:
    _, output = await run(manager, "printf", args=["%s|%s", "a b", "$HOME"])
    assert output["output"] == "a b|$HOME", "no shell: the arguments arrive verbatim"
    _, output = await run(manager, sys.executable, args=["-c", "import sys; sys.exit(3)"])
    assert output["exitStatus"] == {"exitCode": 3, "signal": None}


async def test_byte_limit_keeps_last_bytes_on_a_character_boundary(manager: TerminalManager) -> None:
    # 5000 lines "NNNN é€\n": ASCII, 2- and 3-byte characters, so a cut at 100 bytes lands mid-character.
    line = "import sys; sys.stdout.write(''.join(f'{i:04d} é€\\n' for i in range(5000)))"
    full = "".join(f"{i:04d} é€\n" for i in range(5000)).encode()
    for limit in (100, 101, 102, 103):
        _, output = await run(manager, sys.executable, args=["-c", line], outputByteLimit=limit)
        kept = output["output"].encode()
        assert output["truncated"] is True
        assert len(kept) <= limit and len(kept) >= limit - 3
        assert full.endswith(kept)
        assert "\ufffd" not in output["output"]


async def test_byte_limit_with_shell_printf(manager: TerminalManager) -> None:
    _, output = await run(manager, "for i in $(seq 1 300); do printf 'line %03d ü\\n' $i; done", outputByteLimit=100)
    kept = output["output"].encode()
    expected = "".join(f"line {i:03d} ü\n" for i in range(1, 301)).encode()
    assert output["truncated"] is True
    assert 97 <= len(kept) <= 100 and expected.endswith(kept)
    assert "\ufffd" not in output["output"]


async def test_small_output_under_limit_is_not_truncated(manager: TerminalManager) -> None:
    _, output = await run(manager, "printf abc", outputByteLimit=3)
    assert output == {"output": "abc", "truncated": False, "exitStatus": {"exitCode": 0, "signal": None}}


async def test_kill_reports_signal_and_keeps_terminal(manager: TerminalManager) -> None:
    created = await manager.create({"sessionId": "s", "command": "echo started; sleep 100"})
    terminal_id = created["terminalId"]
    ref = {"sessionId": "s", "terminalId": terminal_id}
    for _ in range(200):
        if (await manager.output(ref))["output"]:
            break
        await asyncio.sleep(0.02)
    running = await manager.output(ref)
    assert running["output"] == "started\n" and "exitStatus" not in running
    await manager.kill(ref)
    status = await asyncio.wait_for(manager.wait_for_exit(ref), 10)
    assert status == {"exitCode": None, "signal": "SIGKILL"}
    after = await manager.output(ref)
    assert after["output"] == "started\n"
    assert after["exitStatus"] == status
    await manager.kill(ref)  # killing an exited command is harmless


async def test_kill_reaches_the_whole_process_group(manager: TerminalManager, tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    created = await manager.create({"sessionId": "s", "command": f"sleep 100 & echo $! > {pid_file}; wait"})
    ref = {"sessionId": "s", "terminalId": created["terminalId"]}
    for _ in range(250):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.02)
    child = int(pid_file.read_text())
    await manager.kill(ref)
    await asyncio.wait_for(manager.wait_for_exit(ref), 10)
    await _wait_gone(child)


async def test_release_forgets_the_id(manager: TerminalManager) -> None:
    terminal_id, _ = await run(manager, "echo hi")
    ref = {"sessionId": "s", "terminalId": terminal_id}
    await manager.release(ref)
    for call in (manager.output, manager.wait_for_exit, manager.kill, manager.release):
        with pytest.raises(RpcError, match="Unknown terminal") as caught:
            await call(ref)
        assert caught.value.code == INVALID_PARAMS


async def test_release_kills_a_running_command(manager: TerminalManager, tmp_path: Path) -> None:
    created = await manager.create({"sessionId": "s", "command": "echo $$ > pid; exec sleep 100", "cwd": str(tmp_path)})
    for _ in range(250):
        if (tmp_path / "pid").exists() and (tmp_path / "pid").read_text().strip():
            break
        await asyncio.sleep(0.02)
    pid = int((tmp_path / "pid").read_text())
    await manager.release({"sessionId": "s", "terminalId": created["terminalId"]})
    await _wait_gone(pid)


async def test_env_is_added(manager: TerminalManager, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAT_INHERITED", "from-parent")
    _, output = await run(
        manager, 'echo "$CLAUDECODE/$RAT_INHERITED"', env=[{"name": "CLAUDECODE", "value": "1"}, {"bogus": True}]
    )
    assert output["output"] == "1/from-parent\n"


async def test_cwd_param_and_session_default(manager: TerminalManager, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    _, output = await run(manager, "pwd", cwd=str(other))
    assert Path(output["output"].strip()).resolve() == other.resolve()
    _, output = await run(manager, "pwd")
    assert Path(output["output"].strip()).resolve() == tmp_path.resolve()
    with pytest.raises(RpcError, match="absolute") as caught:
        await manager.create({"sessionId": "s", "command": "pwd", "cwd": "relative/dir"})
    assert caught.value.code == INVALID_PARAMS
    with pytest.raises(RpcError, match="not a directory"):
        await manager.create({"sessionId": "s", "command": "pwd", "cwd": str(tmp_path / "missing")})


async def test_missing_executable_in_args_form_is_an_error(manager: TerminalManager) -> None:
    with pytest.raises(RpcError, match="Cannot start"):
        await manager.create({"sessionId": "s", "command": "/nonexistent/tool", "args": ["x"]})
    _, output = await run(manager, "/nonexistent/tool")  # a shell line: the shell reports it
    assert output["exitStatus"]["exitCode"] == 127


async def test_close_all_kills_running_commands(tmp_path: Path) -> None:
    manager = TerminalManager(tmp_path)
    created = await manager.create({"sessionId": "s", "command": "sleep", "args": ["100"]})
    terminal = manager._terminals[created["terminalId"]]
    pid = terminal.process.pid
    await asyncio.wait_for(manager.close_all(), 10)
    assert terminal.process.returncode == -9
    await _wait_gone(pid)
    with pytest.raises(RpcError, match="Unknown terminal"):
        await manager.output({"sessionId": "s", "terminalId": created["terminalId"]})


async def test_ansi_colours_are_kept(manager: TerminalManager) -> None:
    _, output = await run(manager, r"printf '\033[31mred\033[0m plain\n'")
    assert output["output"] == "\x1b[31mred\x1b[0m plain\n"


async def test_runs_on_a_tty_and_stdin_reads_end_of_file(manager: TerminalManager) -> None:
    _, output = await run(manager, "test -t 1 && echo tty; cat; echo done")
    assert output["output"] == "tty\ndone\n", "cat must not wait for ever on the terminal's input"


async def test_wait_for_exit_is_cancellable(manager: TerminalManager) -> None:
    created = await manager.create({"sessionId": "s", "command": "sleep 100"})
    ref = {"sessionId": "s", "terminalId": created["terminalId"]}
    waiter = asyncio.create_task(manager.wait_for_exit(ref))
    await asyncio.sleep(0.05)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    await manager.kill(ref)  # the terminal still works after a cancelled wait
    assert await asyncio.wait_for(manager.wait_for_exit(ref), 10) == {"exitCode": None, "signal": "SIGKILL"}


async def test_callbacks_see_output_and_exit(tmp_path: Path) -> None:
    seen: list[tuple[str, str]] = []
    exits: list[tuple[str, int | None, str | None]] = []
    manager = TerminalManager(tmp_path, on_output=lambda tid, text: seen.append((tid, text)),
                              on_exit=lambda tid, code, sig: exits.append((tid, code, sig)))
    try:
        terminal_id, _ = await run(manager, "echo one; echo zwei-ü; exit 4")
    finally:
        await manager.close_all()
    assert "".join(text for tid, text in seen if tid == terminal_id) == "one\nzwei-ü\n"
    assert exits == [(terminal_id, 4, None)]


async def test_bad_params(manager: TerminalManager) -> None:
    for params in ({"command": ""}, {"command": "echo", "outputByteLimit": -1}, {}):
        with pytest.raises(RpcError) as caught:
            await manager.create({"sessionId": "s", **params})
        assert caught.value.code == INVALID_PARAMS
    assert set(manager.handlers()) == {
        "terminal/create", "terminal/output", "terminal/wait_for_exit", "terminal/kill", "terminal/release",
    }


async def _wait_gone(pid: int) -> None:
    """Wait until `pid` no longer runs (reaped, or a zombie awaiting its reparented parent)."""
    for _ in range(250):
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    return
        except FileNotFoundError:
            return
        await asyncio.sleep(0.02)
    os.kill(pid, 9)
    pytest.fail(f"process {pid} survived")


async def test_pipes_when_no_pty_can_be_had(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_pty() -> tuple[int, int]:
        raise OSError(2, "out of pseudo-terminals")

    monkeypatch.setattr("rat_tui.protocol.terminals.open_pty", no_pty)
    manager = TerminalManager(tmp_path)
    try:
        _, output = await run(manager, "test -t 1 || echo pipe; cat; echo err >&2; printf '\\033[1mb\\033[0m'")
        assert output["output"] == "pipe\nerr\n\x1b[1mb\x1b[0m"
        assert output["exitStatus"] == {"exitCode": 0, "signal": None}
    finally:
        await manager.close_all()
