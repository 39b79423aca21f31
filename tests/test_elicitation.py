"""Elicitation: forms from the requested schema and links, answered from the keyboard to a real fake agent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.app import ComposeResult
from textual.widgets import Static

from rat_tui.app import RatApp
from rat_tui.session.elicitation_broker import Elicitation
from rat_tui.session.elicitation_form import MISSING, check, content_of, parse_form
from rat_tui.protocol.client import client_capabilities
from rat_tui.ui.screens.elicitation import ElicitationScreen, UrlElicitationScreen

from .helpers.acp_schema import validate
from .helpers.agents import received
from .helpers.app import scripted, steady, until
from .helpers.harness import RatThemedApp

SCHEMA = {
    "type": "object",
    "title": "Deployment",
    "properties": {
        "name": {"type": "string", "title": "Service name", "description": "As in the registry", "minLength": 3},
        "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 10},
        "canary": {"type": "boolean", "title": "Canary first", "default": False},
        "region": {"type": "string", "title": "Region", "oneOf": [
            {"const": "eu-west-1", "title": "Europe (Ireland)"}, {"const": "us-east-1", "title": "US East"}]},
        "contact": {"type": "string", "title": "Contact", "format": "email"},
    },
    "required": ["name", "replicas", "region"],
}


def form_request(schema: dict = SCHEMA, message: str = "How should I deploy it?") -> dict:
    return {"method": "elicitation/create",
            "params": {"sessionId": "$SESSION", "mode": "form", "message": message, "requestedSchema": schema}}


def answers(record: Path) -> list[dict]:
    """Our answers to the agent's elicitation/create requests, in order."""
    sent = Path(str(record) + ".sent")
    ids = {json.loads(line)["id"] for line in sent.read_text().splitlines()
           if json.loads(line)["method"] == "elicitation/create"} if sent.exists() else set()
    return [m["result"] for m in received(record) if "method" not in m and m.get("id") in ids and "result" in m]


# -- the form model (no UI) ---------------------------------------------------------------------


def test_parse_form_reads_every_kind_in_order() -> None:
    form = parse_form({"message": "m", "requestedSchema": {**SCHEMA, "properties": {
        **SCHEMA["properties"],
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "maxItems": 1},
        "colour": {"type": "string", "enum": ["red", "green"], "enumNames": ["Red", "Green"]},
        "odd": {"type": "_vendor_slider"}}}})
    assert [(f.name, f.kind) for f in form.fields] == [
        ("name", "string"), ("replicas", "integer"), ("canary", "boolean"), ("region", "enum"), ("contact", "string"),
        ("tags", "multi"), ("colour", "enum"), ("odd", "unsupported")]
    assert [c.title for c in form.fields[3].choices] == ["Europe (Ireland)", "US East"]
    assert [c.title for c in form.fields[6].choices] == ["Red", "Green"]
    assert form.blocked_by == []  # the unsupported field is optional
    assert form.title == "Deployment" and form.fields[0].required and not form.fields[2].required


@pytest.mark.parametrize(("prop", "raw", "expected"), [
    ({"type": "integer", "minimum": 1, "maximum": 10}, "abc", (None, "Not a whole number.")),
    ({"type": "integer", "minimum": 1, "maximum": 10}, "11", (None, "At most 10.")),
    ({"type": "integer"}, " 7 ", (7, None)),
    ({"type": "number", "minimum": 0.5}, "0.25", (None, "At least 0.5.")),
    ({"type": "number"}, "2.5", (2.5, None)),
    ({"type": "number"}, "nan", (None, "Not a number.")),
    ({"type": "string", "minLength": 3}, "ab", (None, "At least 3 characters.")),
    ({"type": "string", "maxLength": 2}, "abc", (None, "At most 2 characters.")),
    ({"type": "string", "pattern": "^[a-z]+$"}, "Abc", (None, "Must match the pattern ^[a-z]+$")),
    ({"type": "string", "pattern": "(unclosed"}, "x", ("x", None)),
    ({"type": "string", "format": "email"}, "me@example", (None, "Not an email address.")),
    ({"type": "string", "format": "uri"}, "https://example.com/x", ("https://example.com/x", None)),
    ({"type": "string", "format": "date"}, "2025-02-30", (None, "Not a date (YYYY-MM-DD).")),
    ({"type": "string", "format": "date-time"}, "2025-01-31T12:00:00Z", ("2025-01-31T12:00:00Z", None)),
    ({"type": "boolean"}, False, (False, None)),
    ({"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "minItems": 2}, ["a"], (None, "Pick at least 2.")),
])
def test_check(prop: dict, raw: Any, expected: tuple) -> None:
    [field] = parse_form({"requestedSchema": {"properties": {"x": prop}}}).fields
    assert check(field, raw) == expected


def test_required_and_optional_empty_fields() -> None:
    form = parse_form({"requestedSchema": SCHEMA})
    content, problems = content_of(form, {"name": "", "replicas": "2", "canary": True, "region": None, "contact": " "})
    assert problems == {"name": "Required.", "region": "Required."}
    assert content == {"replicas": 2, "canary": True}  # the empty optional contact is left out
    assert check(form.fields[4], "")[0] is MISSING


def test_client_advertises_both_modes() -> None:
    assert client_capabilities()["elicitation"] == {"form": {}, "url": {}}
    validate("initialize", "request", {"protocolVersion": 1, "clientCapabilities": client_capabilities()})


# -- end to end over real pipes ------------------------------------------------------------------


def app_for(script: dict, tmp_path: Path) -> RatApp:
    return RatApp(scripted(script, tmp_path), tmp_path)


async def prompt(pilot, app: RatApp, text: str = "deploy") -> None:
    await until(pilot, lambda: app.session.state.status == "ready", "ready")
    await pilot.press(*text, "enter")


@pytest.mark.slow
async def test_form_accepted_from_the_keyboard_after_fixing_a_bad_number(tmp_path: Path, record_file: Path) -> None:
    script = {"turns": [[{"request": form_request()}, {"chunk": "deploying"}]]}
    app = app_for(script, tmp_path)
    async with app.run_test(size=(110, 50)) as pilot:
        await prompt(pilot, app)
        await until(pilot, lambda: isinstance(app.screen, ElicitationScreen), "the form")
        screen = app.screen
        assert app.focused.id == "input-0"
        await pilot.press(*"web", "tab", *"lots")
        await pilot.press("ctrl+s")
        assert screen.errors == {"replicas": "Not a whole number.", "region": "Required."}
        assert app.focused.id == "input-1"  # the first bad field takes the focus
        await pilot.press("ctrl+a", "ctrl+k", *"12")
        assert screen.errors["replicas"] == "At most 10."  # the message follows the value
        await pilot.press("backspace", "backspace", "3")
        assert "replicas" not in screen.errors
        await pilot.press("tab", "space")  # the checkbox
        await pilot.press("tab", "enter")  # open the region list
        await pilot.pause()
        await pilot.press("down", "enter")  # the first choice (below the blank row)
        await pilot.pause()
        assert "region" not in screen.errors
        await pilot.press("tab", *"ops@example.com")
        await pilot.press("tab")
        assert app.focused.id == "accept"
        await pilot.press("enter")
        await until(pilot, lambda: "deploying" in app.query_one("Transcript").plain_text, "the turn to go on")
        assert not isinstance(app.screen, ElicitationScreen)
        assert "sent name, replicas, canary, region, contact" in app.query_one("Transcript").plain_text
    assert answers(record_file) == [{"action": "accept", "content": {
        "name": "web", "replicas": 3, "canary": True, "region": "eu-west-1", "contact": "ops@example.com"}}]


@pytest.mark.slow
async def test_form_declined_and_cancelled(tmp_path: Path, record_file: Path) -> None:
    small = {"type": "object", "properties": {"ok": {"type": "boolean", "title": "Proceed"}}}
    for_tool = form_request(small)
    for_tool["params"]["toolCallId"] = "call-1"
    tool = {"sessionUpdate": "tool_call", "toolCallId": "call-1", "title": "Deploy to staging", "status": "in_progress"}
    script = {"turns": [[{"update": tool}, {"request": for_tool}, {"request": form_request(small)},
                         {"chunk": "both answered"}]]}
    app = app_for(script, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await prompt(pilot, app)
        await until(pilot, lambda: isinstance(app.screen, ElicitationScreen), "the first form")
        first = app.screen
        assert "for the tool call: Deploy to staging" in "\n".join(str(w.render()) for w in first.query(Static))
        await pilot.press("tab", "tab")  # past Accept to Decline
        assert app.focused.id == "decline"
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ElicitationScreen) and app.screen is not first, "the second")
        await pilot.press("escape")
        await until(pilot, lambda: "both answered" in app.query_one("Transcript").plain_text, "the end of the turn")
        text = app.query_one("Transcript").plain_text
        assert "was declined" in text and "was cancelled" in text
    assert answers(record_file) == [{"action": "decline"}, {"action": "cancel"}]


@pytest.mark.slow
async def test_cancelled_turn_answers_the_open_form_cancel(tmp_path: Path, record_file: Path) -> None:
    script = {"turns": [[{"request": form_request()}, {"wait_cancel": True}]]}
    app = app_for(script, tmp_path)
    async with app.run_test(size=(110, 50)) as pilot:
        await prompt(pilot, app)
        await until(pilot, lambda: isinstance(app.screen, ElicitationScreen), "the form")
        assert await app.session.cancel()
        await until(pilot, lambda: app.session.state.status == "cancelled", "the turn to end")
        assert not isinstance(app.screen, ElicitationScreen)
    assert answers(record_file) == [{"action": "cancel"}]


@pytest.mark.slow
async def test_url_mode_waits_for_elicitation_complete(tmp_path: Path, record_file: Path) -> None:
    url_request = {"method": "elicitation/create", "params": {
        "sessionId": "$SESSION", "mode": "url", "elicitationId": "el-1", "url": "https://auth.example.com/login?x=1",
        "message": "Sign in to the registry."}}
    complete = {"jsonrpc": "2.0", "method": "elicitation/complete", "params": {"elicitationId": "el-1"}}
    script = {"turns": [[{"request": url_request, "wait": False}, {"chunk": "waiting for you"}],
                        [{"send": complete}, {"chunk": "signed in"}]]}
    app = app_for(script, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await prompt(pilot, app)
        await until(pilot, lambda: isinstance(app.screen, UrlElicitationScreen), "the link")
        shown = "\n".join(str(w.render()) for w in app.screen.query(Static))
        assert "https://auth.example.com/login?x=1" in shown and "Opens auth.example.com" in shown
        await until(pilot, lambda: app.session.state.status == "ready", "the first turn to end")
        assert isinstance(app.screen, UrlElicitationScreen)  # still waiting
        app.session.start_prompt("done?")
        await until(pilot, lambda: not isinstance(app.screen, UrlElicitationScreen), "the link to close")
        await until(pilot, lambda: "signed in" in app.query_one("Transcript").plain_text, "the second turn")
        assert "Link from the agent (Sign in to the registry.): done." in app.query_one("Transcript").plain_text
    assert answers(record_file) == [{"action": "accept"}]


@pytest.mark.slow
async def test_agent_withdrawing_its_request_closes_the_form(tmp_path: Path, record_file: Path) -> None:
    request = {**form_request(), "id": "ask-1"}
    withdraw = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "ask-1"}}
    script = {"turns": [[{"request": request, "wait": False}, {"chunk": "asked"}], [{"send": withdraw}, {"chunk": "withdrawn"}]]}
    app = app_for(script, tmp_path)
    async with app.run_test(size=(110, 50)) as pilot:
        await prompt(pilot, app)
        await until(pilot, lambda: isinstance(app.screen, ElicitationScreen), "the form")
        await until(pilot, lambda: app.session.state.status == "ready", "the first turn to end")
        app.session.start_prompt("never mind")
        await until(pilot, lambda: not isinstance(app.screen, ElicitationScreen), "the form to close")
    [answer] = [m for m in received(record_file) if m.get("id") == "ask-1" and "method" not in m]
    assert answer["error"]["code"] == -32800


@pytest.mark.slow
async def test_unknown_mode_is_refused_with_a_notice(tmp_path: Path, record_file: Path) -> None:
    odd = {"method": "elicitation/create", "params": {"sessionId": "$SESSION", "mode": "_hologram", "message": "?"}}
    script = {"turns": [[{"request": odd}, {"chunk": "ok"}]]}
    app = app_for(script, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await prompt(pilot, app)
        await until(pilot, lambda: "ok" in app.query_one("Transcript").plain_text, "the turn")
        assert "cannot show (mode '_hologram')" in app.query_one("Transcript").plain_text
    errors = [m for m in received(record_file) if "error" in m]
    assert errors and errors[0]["error"]["code"] == -32602


# -- snapshots ------------------------------------------------------------------------------------


class FormApp(RatThemedApp):
    def __init__(self, params: dict) -> None:
        super().__init__()
        self.params = params

    def compose(self) -> ComposeResult:
        yield Static("The session would be here.")

    def on_mount(self) -> None:
        self.use_rat_theme()
        from rat_tui.session.elicitation_form import parse_form

        mode = self.params["mode"]
        question = Elicitation(mode, self.params, "Claude Code", form=parse_form(self.params) if mode == "form" else None,
                               url=self.params.get("url", ""), elicitation_id=self.params.get("elicitationId", ""))
        self.push_screen(ElicitationScreen(question) if mode == "form" else UrlElicitationScreen(question))
        steady(self)


FORM = {"sessionId": "s", "mode": "form", "message": "How should I deploy it?", "requestedSchema": SCHEMA}


def test_snapshot_form(snap_compare) -> None:
    assert snap_compare(FormApp(FORM), terminal_size=(100, 44))


def test_snapshot_form_with_messages(snap_compare) -> None:
    async def bad_answers(pilot) -> None:
        await pilot.pause()
        steady(pilot.app)
        await pilot.press(*"we", "tab", *"abc", "ctrl+s")
        await pilot.pause()

    assert snap_compare(FormApp(FORM), terminal_size=(100, 44), run_before=bad_answers)


def test_snapshot_url(snap_compare) -> None:
    params = {"sessionId": "s", "mode": "url", "elicitationId": "e", "url": "https://auth.example.com/login",
              "message": "Sign in to the registry."}
    assert snap_compare(FormApp(params), terminal_size=(100, 24))


async def test_a_fields_message_comes_and_goes_with_the_line_under_the_field() -> None:
    """The page's fields lie flat in #fields (no container each) and a field's message is mounted the first
    time it has one: the form opens with fewer widgets. The blank line under a field stays under whatever
    of it is shown last: its message while it has one, else its last line."""
    from textual.containers import Vertical

    app = FormApp(FORM)
    async with app.run_test(size=(100, 44)) as pilot:
        await pilot.pause()
        steady(app)
        screen = app.screen
        fields = screen.query_one("#fields")
        assert not screen.query(".error")
        assert not [w for w in fields.children if type(w) is Vertical]
        assert len(screen.query(".field")) == len(SCHEMA["properties"])
        await pilot.press(*"we", "ctrl+s")
        await pilot.pause()
        assert screen.errors == {"name": "At least 3 characters.", "replicas": "Required.", "region": "Required."}
        kids = list(fields.children)
        error = screen.query_one("#error-0")
        above, below = kids[kids.index(error) - 1], kids[kids.index(error) + 1]
        assert above.region.bottom == error.region.y  # right under the field's last line
        assert below.region.y == error.region.bottom + 1  # then the blank line, then the next field
        await pilot.press("b")  # "web": long enough
        await pilot.pause()
        assert "name" not in screen.errors and not error.display
        assert below.region.y == above.region.bottom + 1
        await pilot.press("backspace")  # the message comes back, in the same widget
        await pilot.pause()
        assert screen.errors["name"] == "At least 3 characters." and screen.query_one("#error-0") is error
        assert below.region.y == error.region.bottom + 1
