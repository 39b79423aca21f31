"""ACP v2 recordings of real agents replay into the same transcript, tool cards, permissions and plan as
the v1 recordings of the same agent and scenario, through the same reducer (tests/fixtures/acp-traces/v2/).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rat_tui.history.rebuild import rebuild
from rat_tui.history.records import read_recording
from rat_tui.protocol import v2
from rat_tui.state.models import GenericEntry, MessageEntry, NoticeEntry, ToolCallEntry
from rat_tui.ui.replay_app import ReplayApp

from .helpers.history import replayed_view

TRACES = Path(__file__).resolve().parent / "fixtures" / "acp-traces"
PAIRS = [
    ("claude-agent-acp-0.101.jsonl", "v2/claude-agent-acp-0.101-v2.jsonl"),
    ("codex-acp-2.6.jsonl", "v2/codex-acp-2.6-v2.jsonl"),
]
V2_TRACES = sorted((TRACES / "v2").glob("*.jsonl"))
# Turns whose v1 and v2 recordings differ by design: v1 without opt-ins shows a subagent and /compact as
# tool calls, v2 as `subagent_update` / `compaction_update` (same shapes as v1's unstable opt-ins, which
# the v1 path models: the v2 mapping passes them on unchanged).
BY_DESIGN = ("HARNESS:subagent", "/compact")
# v2 updates whose v1 twins (unstable opt-ins) the v1 path does not model yet; shown generically until it does.
PASSED_ON_TO_V1 = {"subagent_update", "session_message", "session_message_chunk", "compaction_update",
                   "compaction_summary_chunk"}


def turns(entries: list) -> dict[str, list]:
    """Entries grouped by the user prompt that starts them (first occurrence of each prompt)."""
    groups: dict[str, list] = {}
    current: list | None = None
    for entry in entries:
        if isinstance(entry, MessageEntry) and entry.role == "user":
            current = [] if entry.text not in groups else None
            if current is not None:
                groups[entry.text] = current
            continue
        if current is not None:
            current.append(entry)
    return groups


def normal(text: str) -> str:
    """Message text without what differs between two runs (Codex's chunk ids, wall times)."""
    return re.sub(r"\b[0-9a-f]{6}\b|\d+(\.\d+)?", "#", text)


def transcript(entries: list) -> list[tuple[str, str]]:
    return [(e.role, normal(e.text)) for e in entries if isinstance(e, MessageEntry)]


def cards(entries: list) -> list[tuple]:
    return [(c.title, c.kind, c.status, [d.get("path") for d in c.content if d.get("type") == "diff"])
            for c in entries if isinstance(c, ToolCallEntry)]


def permissions(path: Path) -> list[tuple]:
    """Each permission request as (tool call id, option kinds, the chosen option's kind), v2 read as v1."""
    records = read_recording(path).records
    asked: dict = {}
    out = []
    version = 1
    for record in records:
        message = record.message
        if not isinstance(message, dict):
            continue
        if message.get("method") == "initialize":
            version = message["params"]["protocolVersion"]
        if message.get("method") == "session/request_permission":
            params = message["params"]
            if version == 2:
                params = v2.v1_permission_params(params, 0)
            asked[message["id"]] = params
        elif record.direction == "out" and "result" in message and message.get("id") in asked:
            params = asked.pop(message["id"])
            kinds = {o["optionId"]: o["kind"] for o in params["options"]}
            outcome = message["result"]["outcome"]
            chosen = kinds.get(outcome.get("optionId")) if outcome.get("outcome") == "selected" else "cancelled"
            out.append((params["toolCall"].get("kind"), sorted(kinds.values()), chosen))
    return out


@pytest.mark.parametrize("v1_name,v2_name", PAIRS, ids=["claude-agent-acp-0.101", "codex-acp-2.6"])
def test_v2_replay_shows_what_the_v1_replay_of_the_same_scenario_shows(v1_name: str, v2_name: str) -> None:
    one = rebuild(read_recording(TRACES / v1_name).records)
    two = rebuild(read_recording(TRACES / v2_name).records)
    assert one.store.state.protocol_version == 1 and two.store.state.protocol_version == 2  # detected
    first, second = turns(one.store.state.entries), turns(two.store.state.entries)
    common = [prompt for prompt in first if prompt in second]
    assert len(common) >= 9, f"the recordings should share their scenario: {list(first)} / {list(second)}"
    for prompt in common:
        assert transcript(second[prompt]) == transcript(first[prompt]), prompt
        if not prompt.startswith(BY_DESIGN):
            assert cards(second[prompt]) == cards(first[prompt]), prompt
        cancelled = [e.text for e in first[prompt] if isinstance(e, NoticeEntry)]
        assert [e.text for e in second[prompt] if isinstance(e, NoticeEntry)] == cancelled, prompt
    # v1 sends the legacy plan; v2 its plan_update, which the v1 path keeps by planId (state/plans.py)
    def shown(state):  # noqa: ANN001, ANN202
        return state.plan or next((plan.items for plan in state.plans.values()), ())
    assert shown(two.store.state) == shown(one.store.state) and len(shown(one.store.state)) == 3
    assert permissions(TRACES / v2_name)[:3] == permissions(TRACES / v1_name)[:3]  # edit, write, shell
    assert two.store.state.status == one.store.state.status == "ready"
    assert [o.get("id") for o in two.store.state.config_options] == [o.get("id") for o in one.store.state.config_options]
    assert len(two.store.state.commands) == len(one.store.state.commands) > 0
    assert two.can_continue  # session/resume is baseline in v2


@pytest.mark.parametrize("trace", V2_TRACES, ids=lambda p: p.stem)
def test_every_v2_update_is_mapped(trace: Path) -> None:
    records = read_recording(trace).records
    builder = rebuild(records)
    state = builder.store.state
    prompts = [r for r in records if isinstance(r.message, dict) and r.message.get("method") == "session/prompt"]
    generic = {e.kind for e in state.entries if isinstance(e, GenericEntry)}
    assert generic <= PASSED_ON_TO_V1, generic
    assert not any(isinstance(e, MessageEntry) and e.text == "" for e in state.entries)
    users = [e.text for e in state.entries if isinstance(e, MessageEntry) and e.role == "user"]
    assert len(users) == len(prompts) == 13  # every prompt once: the agents' echoes claim the prompt shown, never a second copy
    assert state.activity == "idle"


def test_agent_owned_terminals_show_their_output() -> None:
    """Claude's output snapshots and Codex's chunks (whose first one Codex drops) both reach the card."""
    claude = rebuild(read_recording(TRACES / "v2/claude-agent-acp-0.101-v2.jsonl").records).store.state
    codex = rebuild(read_recording(TRACES / "v2/codex-acp-2.6-v2.jsonl").records).store.state

    def outputs(state) -> list[str]:
        return [state.terminals[item["terminalId"]].output for call in state.tool_calls.values()
                for item in call.content if item.get("type") == "terminal" and item.get("terminalId") in state.terminals]

    assert any("harness-shell-ok" in out for out in outputs(claude))
    assert any("harness-term-1\nharness-term-2\nharness-term-3" in out for out in outputs(claude))
    assert all(claude.terminals[t].exited for t in claude.terminals if claude.terminals[t].output)
    assert any("harness-term-2\nharness-term-3" in out for out in outputs(codex))


def test_v2_diffs_read_as_v1_diffs() -> None:
    state = rebuild(read_recording(TRACES / "v2/claude-agent-acp-0.101-v2.jsonl").records).store.state
    diffs = [item for call in state.tool_calls.values() for item in call.content if item.get("type") == "diff"]
    edit = next(d for d in diffs if d["path"].endswith("notes.txt"))
    assert edit["oldText"] == "alpha\nbeta\ngamma\n" and edit["newText"] == "alpha\nBETA (edited by fake model)\ngamma\n"
    created = next(d for d in diffs if d["path"].endswith("created.txt"))
    assert "oldText" not in created and created["newText"] == "created by the fake model\nline two\n"


async def test_rat_replay_of_a_v2_recording_says_v2() -> None:
    path = TRACES / "v2/codex-acp-2.6-v2.jsonl"
    app = ReplayApp(read_recording(path), path)
    async with app.run_test(size=(140, 40)) as pilot:
        view = await replayed_view(pilot, app)
        text = view.transcript.plain_text
        assert "Hello from the fake model." in text and "HARNESS:edit" in text
        assert view.status_bar.state_word == "replayed"
        assert "replayed v2" in str(view.status_bar.render())
