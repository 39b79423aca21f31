"""Session facts from updates: the status bar's usage gauge, agent notices, and clearing the title."""

from __future__ import annotations

import pytest
from textual.app import ComposeResult
from textual.color import Color

from rat_tui.protocol.wire import NoticeUpdate, UnknownUpdate, parse_update
from rat_tui.state import reducer
from rat_tui.state.models import EntryAdded, FieldChanged, GenericEntry, NoticeEntry, SessionState
from rat_tui.ui.widgets.status_bar import StatusBar, context_level, format_cost, format_tokens, usage_gauge
from .helpers.harness import RatThemedApp

# From acp-traces/claude-agent-acp.jsonl.
CLAUDE_USAGE = {"sessionUpdate": "usage_update", "used": 51, "size": 200000,
                "cost": {"amount": 0.0009000000000000001, "currency": "USD"}}


def apply(state: SessionState, raw: dict) -> list:
    return reducer.apply_update(state, parse_update(raw))


# -- usage gauge --------------------------------------------------------------------------------


@pytest.mark.parametrize(("count", "shown"), [(0, "0"), (51, "51"), (999, "999"), (1000, "1k"), (1234, "1.2k"),
                                              (124_000, "124k"), (200_000, "200k"), (1_000_000, "1M"),
                                              (1_250_000, "1.2M")])
def test_format_tokens(count: int, shown: str) -> None:
    assert format_tokens(count) == shown


@pytest.mark.parametrize(("cost", "shown"), [
    ({"amount": 0.42, "currency": "USD"}, "$0.42"),
    ({"amount": 12.5, "currency": "EUR"}, "€12.50"),
    ({"amount": 0.0009, "currency": "USD"}, "<$0.01"),
    ({"amount": 0, "currency": "USD"}, "$0.00"),
    ({"amount": 1.2, "currency": "CHF"}, "1.20 CHF"),
    (None, ""),
    ({"currency": "USD"}, ""),
])
def test_format_cost(cost: object, shown: str) -> None:
    assert format_cost(cost) == shown


def test_gauge_text_used_size_cost() -> None:
    usage = {"used": 124_000, "size": 200_000, "cost": {"amount": 0.42, "currency": "USD"}}
    assert usage_gauge(usage, {}).plain == "ctx ▰▰▰▱▱ 62% 124k/200k  $0.42"
    assert usage_gauge({"used": 51, "size": 200_000}, {}).plain == "ctx ▱▱▱▱▱ 0% 51/200k"
    assert usage_gauge({"used": 200_000, "size": 200_000}, {}).plain == "ctx ▰▰▰▰▰ 100% 200k/200k"
    assert usage_gauge({"used": 5000, "size": 0}, {}).plain == "ctx 5k"  # no window size: no gauge


def test_gauge_warns_above_80_percent_in_theme_colours() -> None:
    colours = {"warning": "#ffaa00", "error": "#ff0000"}
    assert context_level({"used": 160, "size": 200}) == "ok"  # exactly 80%
    assert context_level({"used": 161, "size": 200}) == "warning"
    assert context_level({"used": 191, "size": 200}) == "critical"
    assert context_level(None) == "ok"
    calm = usage_gauge({"used": 100, "size": 200}, colours)
    assert not [span for span in calm.spans if "#ff" in str(span.style)]
    warm = usage_gauge({"used": 170, "size": 200}, colours)
    assert {str(span.style) for span in warm.spans} >= {"#ffaa00", "bold #ffaa00"}
    hot = usage_gauge({"used": 199, "size": 200}, colours)
    assert "bold #ff0000" in {str(span.style) for span in hot.spans}


class BarApp(RatThemedApp):
    def compose(self) -> ComposeResult:
        yield StatusBar()

    def on_mount(self) -> None:
        self.use_rat_theme()


async def test_status_bar_shows_the_gauge_from_usage_updates() -> None:
    app = BarApp()
    async with app.run_test(size=(120, 3)) as pilot:
        bar = app.query_one(StatusBar)
        state = SessionState(agent_name="claude", status="ready", cwd="/project")
        bar.show(state)
        assert bar.usage_text == "" and bar.context_level == "ok"
        apply(state, CLAUDE_USAGE)
        bar.show(state)
        assert bar.usage_text == "ctx ▱▱▱▱▱ 0% 51/200k  <$0.01"
        apply(state, {"sessionUpdate": "usage_update", "used": 170_000, "size": 200_000,
                      "cost": {"amount": 3.5, "currency": "USD"}})
        bar.show(state)
        await pilot.pause()
        assert bar.usage_text == "ctx ▰▰▰▰▱ 85% 170k/200k  $3.50" and bar.context_level == "warning"
        rendered = bar.render()
        warning = Color.parse(app.theme_variables["warning"]).css  # the span styles come back as rgb()
        assert any(warning in str(span.style) for span in rendered.spans)
        assert "  │ ctx ▰▰▰▰▱ 85% 170k/200k  $3.50  │ " in str(rendered)
        apply(state, {"sessionUpdate": "usage_update", "used": 1_000, "size": 200_000})
        bar.show(state)
        assert bar.context_level == "ok"
        assert not any(warning in str(span.style) for span in bar.render().spans)


# -- notices and session info -------------------------------------------------------------------


def test_notice_update_becomes_a_notice_entry() -> None:
    state = SessionState()
    raw = {"sessionUpdate": "notice", "severity": "warning", "title": "Rate limited",
           "description": "Retrying in 30 s."}
    update = parse_update(raw)
    assert update == NoticeUpdate("warning", "Rate limited", "Retrying in 30 s.")
    [added] = reducer.apply_update(state, update)
    assert isinstance(added, EntryAdded) and isinstance(added.entry, NoticeEntry)
    assert (added.entry.text, added.entry.severity) == ("Rate limited\nRetrying in 30 s.", "warning")
    assert reducer.is_agent_notice(added.entry)
    assert not any(isinstance(e, GenericEntry) for e in state.entries)
    # rat-tui's own notices are not the agent's.
    [own] = reducer.add_notice(state, "Turn cancelled.")
    assert not reducer.is_agent_notice(own.entry)


@pytest.mark.parametrize(("severity", "ours"), [("info", "info"), ("error", "error"), ("_vendor_hint", "info"),
                                                ("critical", "info")])
def test_notice_severity_mapping(severity: str, ours: str) -> None:
    state = SessionState()
    [added] = apply(state, {"sessionUpdate": "notice", "severity": severity, "title": "Heads up", "_meta": None})
    assert added.entry.severity == ours and added.entry.text == "Heads up"


def test_notice_description_of_wrong_type_is_ignored_and_a_notice_ends_the_open_message() -> None:
    state = SessionState()
    apply(state, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hello"}})
    [added] = apply(state, {"sessionUpdate": "notice", "severity": "info", "title": "T", "description": 42})
    assert added.entry.text == "T"
    apply(state, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "again"}})
    assert [type(e).__name__ for e in state.entries] == ["MessageEntry", "NoticeEntry", "MessageEntry"]


@pytest.mark.parametrize("raw", [
    {"sessionUpdate": "notice", "severity": "info"},
    {"sessionUpdate": "notice", "severity": "info", "title": ""},
    {"sessionUpdate": "notice", "title": "No severity"},
])
def test_malformed_notice_stays_a_generic_entry(raw: dict) -> None:
    update = parse_update(raw)
    assert isinstance(update, UnknownUpdate) and update.problem and update.problem.startswith("malformed notice")
    [added] = reducer.apply_update(SessionState(), update)
    assert isinstance(added.entry, GenericEntry)


def test_session_info_title_null_clears_and_absent_keeps() -> None:
    state = SessionState()
    assert apply(state, {"sessionUpdate": "session_info_update", "title": "Fix bug"}) == [FieldChanged("info")]
    apply(state, {"sessionUpdate": "session_info_update", "updatedAt": "2025-01-01T00:00:00Z"})
    assert state.title == "Fix bug" and state.updated_at == "2025-01-01T00:00:00Z"
    apply(state, {"sessionUpdate": "session_info_update", "title": None})
    assert state.title is None and state.updated_at == "2025-01-01T00:00:00Z"
