"""The newer ACP recordings replayed into the app: subagent cards, compaction markers, notices, background text."""

from __future__ import annotations

from pathlib import Path

from rat_tui.history.rebuild import rebuild
from rat_tui.history.records import read_recording
from rat_tui.state.models import ChildSessionEntry, CompactionEntry, MessageEntry, NoticeEntry
from rat_tui.ui.replay_app import ReplayApp
from rat_tui.ui.screens.child_session import ChildSessionScreen

from .helpers.app import until

TRACES = Path(__file__).resolve().parent / "fixtures" / "acp-traces"
CHILD_TEXT = "HARNESS:text (subagent) Say hello."


def _load_phase(path: Path):
    """The records of the second agent process (its `initialize`, `session/load` and the replay)."""
    records = read_recording(path).records
    starts = [i for i, r in enumerate(records) if isinstance(r.message, dict) and r.message.get("method") == "initialize"]
    return records[starts[-1]:]


async def _replayed(app: ReplayApp, pilot):
    view = app.tabs.views[0]
    await until(pilot, lambda: view.session.state.status == "replayed", "the replay")
    view.session.store.flush()
    await pilot.pause()
    return view


async def test_claude_subagent_is_its_own_card_and_compaction_a_marker() -> None:
    path = TRACES / "claude-agent-acp-0.101-optin.jsonl"
    app = ReplayApp(read_recording(path), path)
    async with app.run_test(size=(120, 40)) as pilot:
        view = await _replayed(app, pilot)
        state = view.session.state
        [child] = state.children.values()
        assert isinstance(child, ChildSessionEntry) and child.name == "Harness subagent"
        assert (child.run_state, child.stop_reason, child.can_cancel) == ("idle", "end_turn", True)
        assert child.parent_tool_call_id == "toolu_93928457_43"
        # The child's messages are its own: the prompt it was given (once, though both views carried it)
        # and its answer; nothing of the child in the parent's messages.
        child_texts = [e.text for e in child.state.entries if isinstance(e, MessageEntry)]
        assert child_texts.count(CHILD_TEXT) == 1
        assert any(t.startswith("Hello from the fake model") for t in child_texts)
        parent_texts = [e.text for e in state.entries if isinstance(e, MessageEntry)]
        assert CHILD_TEXT not in parent_texts and not any("(subagent)" in t for t in parent_texts)
        # The card sits where the child was spawned: after the parent's "I will use Agent." of that turn.
        keys = [e.key for e in state.entries]
        spawn = next(e for e in state.entries if isinstance(e, MessageEntry) and e.text == "I will use Agent.")
        assert keys.index(child.key) == keys.index(spawn.key) + 1
        text = view.transcript.plain_text
        assert "Harness subagent" in text and "idle" in text and "3 messages" in text
        # Compaction: a marker at its place with its summary, not a tool call or agent text.
        [marker] = state.compactions.values()
        assert isinstance(marker, CompactionEntry) and marker.status == "completed"
        assert marker.summary == "(fake model) side request: nothing to do."
        assert "conversation compacted" in text and "(fake model) side request" in text
        compact_prompt = next(e for e in state.entries if isinstance(e, MessageEntry) and e.text == "/compact")
        assert keys.index(marker.key) == keys.index(compact_prompt.key) + 1
        # The card opens full screen with the child's own transcript.
        view.transcript.focus()
        await pilot.press("s")
        await until(pilot, lambda: isinstance(app.screen, ChildSessionScreen), "the child's screen")
        screen = app.screen
        await pilot.pause()
        assert CHILD_TEXT in screen.transcript.plain_text
        assert "Hello from the fake model" in screen.transcript.plain_text
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ChildSessionScreen), "back to the tab")


def test_codex_notice_and_compaction_replayed_on_load() -> None:
    state = rebuild(_load_phase(TRACES / "codex-acp-2.6-optin.jsonl")).store.state
    notices = [e for e in state.entries if isinstance(e, NoticeEntry)]
    assert any(n.severity == "warning" and "bubblewrap" in n.text for n in notices)
    assert [c.status for c in state.compactions.values()] == ["completed"]
    assert not any(isinstance(e, MessageEntry) and "Config warning" in e.text for e in state.entries)


def test_claude_child_replayed_into_its_card_not_the_parent() -> None:
    """The whole recording through the history rebuild (what reopening a journaled session does)."""
    state = rebuild(read_recording(TRACES / "claude-agent-acp-0.101-optin.jsonl").records).store.state
    [child] = state.children.values()
    child_messages = [e for e in child.state.entries if isinstance(e, MessageEntry)]
    assert len(child_messages) == 3
    assert not any(e in state.entries for e in child_messages)
    assert not any(isinstance(e, MessageEntry) and "(subagent)" in e.text for e in state.entries)


def test_qwen_background_text_is_its_own_block() -> None:
    state = rebuild(read_recording(TRACES / "qwen-code-0.24.jsonl").records).store.state
    texts = [e.text for e in state.entries if isinstance(e, MessageEntry) and e.role == "agent"]
    done = next(t for t in texts if t.startswith("Done with step subagent"))
    assert "Background agent" not in done.split("Last tool result:")[0]
    background = [t for t in texts if t.startswith('Background agent "general-purpose: Harness subagent" completed')]
    assert len(background) >= 2  # the completion and the notification: each a block of its own
    assert not any(t.endswith("completed.Done with step") for t in texts)


def test_children_and_compaction_are_journaled_searched_and_exported(tmp_path: Path) -> None:
    """The whole recording through the history journal: the child's words find the session, the
    export quotes the child under its card, and the compaction and its summary are in it."""
    from rat_tui.history.journal import HistoryJournal
    from rat_tui.history.markdown import to_markdown

    journal = HistoryJournal(tmp_path / "h.sqlite3")
    try:
        session = journal.start_session("claude", ["claude-agent-acp"], "/home/user/project")
        records = read_recording(TRACES / "claude-agent-acp-0.101-optin.jsonl").records
        for record in records:
            session.record(record.direction, record.message, 100, method=record.method)
        journal.flush()
        assert len(journal.sessions("Harness subagent")) == 1  # the subagent's title
        assert len(journal.sessions("side request: nothing")) == 1  # the compaction summary
        [info] = journal.sessions("")
        state = rebuild(journal.records(info.id)).store.state
    finally:
        journal.close()
    [child] = state.children.values()
    assert child.name == "Harness subagent"
    markdown = to_markdown(state)
    card = markdown.index("> ### Subagent: Harness subagent (idle, end_turn)")
    assert markdown.index("> HARNESS:text (subagent) Say hello.") > card
    assert "*Conversation compacted (completed).*" in markdown
    assert "(fake model) side request: nothing to do." in markdown


def test_opencode_relative_titles_show_the_absolute_location_and_names_are_kept() -> None:
    from rich.console import Console

    from rat_tui.state.models import ToolCallEntry
    from rat_tui.ui.widgets.tool_call import render_tool_call

    state = rebuild(read_recording(TRACES / "opencode-1.18.jsonl").records).store.state
    console = Console(width=100, record=True)
    read = next(e for e in state.entries if isinstance(e, ToolCallEntry) and e.kind == "read")
    console.print(render_tool_call(read, {}))
    header = console.export_text().splitlines()[0]
    assert "home/user/project/notes.txt → /home/user/project/notes.txt" in header
    claude = rebuild(read_recording(TRACES / "claude-agent-acp-0.101-optin.jsonl").records).store.state
    names = {e.name for e in claude.tool_calls.values()}
    assert {"Read", "Edit", "Write", "Bash"} <= names
    console = Console(width=100, record=True)
    console.print(render_tool_call(next(e for e in claude.tool_calls.values() if e.name == "Read"), {}))
    assert "Read notes.txt  Read  completed" in console.export_text()


def test_the_newer_update_parsers_load_only_when_such_an_update_arrives() -> None:
    import subprocess
    import sys

    code = ("import sys, rat_tui.state.store, rat_tui.history.rebuild, rat_tui.session.agent_session;"
            "before = 'rat_tui.protocol.updates' in sys.modules;"
            "from rat_tui.state.store import SessionStore;"
            "SessionStore().apply_update({'sessionUpdate': 'plan_removed', 'planId': 'p'});"
            "print(before, 'rat_tui.protocol.updates' in sys.modules, 'rat_tui.protocol.acp_models' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True", "False"]


def test_a_subagents_title_and_mode_are_not_journaled_as_the_sessions(tmp_path: Path) -> None:
    from rat_tui.history.journal import HistoryJournal
    from rat_tui.history.records import IN

    journal = HistoryJournal(tmp_path / "h.sqlite3")
    try:
        session = journal.start_session("claude", ["claude-agent-acp"], "/p")

        def update(session_id: str, body: dict) -> None:
            session.record(IN, {"jsonrpc": "2.0", "method": "session/update",
                                "params": {"sessionId": session_id, "update": body}}, 100)

        update("parent", {"sessionUpdate": "session_info_update", "title": "Parent work"})
        update("child", {"sessionUpdate": "session_info_update", "title": "Child chatter"})
        update("child", {"sessionUpdate": "current_mode_update", "currentModeId": "plan"})
        journal.flush()
        [info] = journal.sessions("")
        assert info.title == "Parent work" and session.agent_session_id == "parent"
        assert "mode" not in session.settings
    finally:
        journal.close()
