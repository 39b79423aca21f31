"""A problem with the config stays in the first tab's transcript as a notice (severity, the file, the line where
known), besides the toast that vanishes; a second tab does not get it."""

from __future__ import annotations

from pathlib import Path

from rat_tui.app import RatApp
from rat_tui.config import load_config
from rat_tui.state.models import NoticeEntry

from .helpers.app import scripted_named, until


def notices(app: RatApp, index: int = 0) -> list[NoticeEntry]:
    return [e for e in app.tabs.views[index].session.state.entries if isinstance(e, NoticeEntry)]


async def test_a_broken_config_file_is_an_error_notice_with_its_path_and_line(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('theme = "rat-dark"\n\n[agents.x\ncommand = "x"\n')
    config, problems = load_config(path)
    app = RatApp(scripted_named({}, tmp_path), tmp_path, config=config, problems=problems, config_path=path)
    async with app.run_test(size=(120, 36)) as pilot:
        view = app.tabs.active_view
        await until(pilot, lambda: view.session.state.status == "ready", "ready")
        await until(pilot, lambda: "Configuration:" in view.transcript.plain_text, "the notice drawn")
        [notice] = [n for n in notices(app) if n.text.startswith("Configuration:")]
        assert notice.severity == "error"
        assert str(path) in notice.text and "line 3" in notice.text and "using the defaults" in notice.text
        assert any(str(path) in n.message and n.severity == "error" for n in app._notifications)  # and the toast
        app.clear_notifications()
        await pilot.pause()
        assert "line 3" in view.transcript.plain_text  # still there once the toast is gone


async def test_a_dropped_value_and_an_unknown_keymap_id_are_warning_notices_in_the_first_tab(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('theme = "rat-dark"\nbogus_key = 1\n\n[keymap]\n"no.such.binding" = "f12"\n')
    config, problems = load_config(path)
    app = RatApp(scripted_named({}, tmp_path), tmp_path, config=config, problems=problems, config_path=path)
    async with app.run_test(size=(120, 36)) as pilot:
        first = app.tabs.active_view
        await until(pilot, lambda: first.session.state.status == "ready", "ready")
        # The keymap's ids are checked off the first frame, in a worker: wait for its notice.
        await until(pilot, lambda: "no.such.binding" in first.transcript.plain_text, "the keymap id notice")
        texts = {n.text: n.severity for n in notices(app) if n.text.startswith("Configuration:")}
        assert texts[f"Configuration: {path}: line 2: unknown key bogus_key (ignored)"] == "warning"  # where it is
        assert any("no.such.binding" in text and severity == "warning" for text, severity in texts.items())
        await app.open_session(scripted_named({}, tmp_path, "two"), tmp_path)
        await until(pilot, lambda: len(app.tabs.views) == 2 and app.tabs.views[1].session.state.status == "ready",
                    "tab 2 ready")
        assert not [n for n in notices(app, 1) if n.text.startswith("Configuration:")]


async def test_a_replay_notes_the_lines_it_skipped_as_a_replay_notice_not_a_configuration_one(tmp_path: Path) -> None:
    from rat_tui.history.records import parse_recording
    from rat_tui.ui.replay_app import ReplayApp

    line = ('{"t": 0, "dir": "in", "msg": {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s",'
            ' "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}}}}')
    source = tmp_path / "trace.jsonl"
    recording = parse_recording(f"{line}\nnot json at all\n", str(source))
    app = ReplayApp(recording, source)
    async with app.run_test(size=(120, 36)) as pilot:
        view = app.tabs.views[0]
        await until(pilot, lambda: view.session.state.status == "replayed", "the replay")
        assert [(n.text, n.severity) for n in notices(app)] == [
            (f"Replay: {source}: 1 line(s) that are not recorded messages were skipped.", "warning")]
