"""MCP servers: config merged per profile, filtered by the agent's mcpCapabilities, sent in session/new, summarised."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest
from textual import events

from rat_tui.app import RatApp
from rat_tui.cli import _from_profile
from rat_tui.agents.spec import AgentSpec
from rat_tui.config import Config, McpServerConfig, validate_config
from rat_tui.session.mcp_servers import configured, plan, warnings
from rat_tui.ui.screens.mcp_servers import McpServersScreen
from rat_tui.ui.widgets.prompt import PromptComposer

from .helpers.acp_schema import validate
from .helpers.agents import received, scripted_argv
from .helpers.app import palette_offers, screen_text, until
from .helpers.harness import finish, start_session

STDIO = McpServerConfig(name="files", command=sys.executable, args=["-m", "files_server"], env={"LOG": "debug"})
HTTP = McpServerConfig(name="docs", type="http", url="https://mcp.example.com/docs", headers={"Authorization": "Bearer ${DOCS_TOKEN}"})
SSE = McpServerConfig(name="events", type="sse", url="https://mcp.example.com/sse")
ODD = McpServerConfig(name="pipe", type="websocket", url="wss://mcp.example.com")
OFF = McpServerConfig(name="old", command="true", enabled=False)
ENV = {"DOCS_TOKEN": "s3cret", "PATH": "/usr/bin:/bin"}


def test_plan_filters_by_capability_and_builds_the_wire_list(tmp_path: Path) -> None:
    servers = [STDIO, HTTP, SSE, ODD, OFF]
    wire, rows = plan(servers, {"mcpCapabilities": {"http": True}}, tmp_path, ENV)
    assert wire == [
        {"name": "files", "command": sys.executable, "args": ["-m", "files_server"], "env": [{"name": "LOG", "value": "debug"}]},
        {"type": "http", "name": "docs", "url": "https://mcp.example.com/docs",
         "headers": [{"name": "Authorization", "value": "Bearer s3cret"}]},
    ]
    validate("session/new", "request", {"cwd": str(tmp_path), "mcpServers": wire})
    assert [(r.name, r.sent) for r in rows] == [("files", True), ("docs", True), ("events", False), ("pipe", False),
                                                ("old", False)]
    assert warnings(rows) == [
        "MCP server 'events' not sent to the agent: the agent does not support sse MCP servers (mcpCapabilities.sse).",
        "MCP server 'pipe' not sent to the agent: unknown transport 'websocket' (rat-tui sends stdio, http and sse).",
    ]  # the disabled one is listed in the summary, without a warning
    # No capabilities at all: stdio only.
    wire, _ = plan(servers, {}, tmp_path, ENV)
    assert [w["name"] for w in wire] == ["files"]


def test_plan_resolves_commands_and_reports_what_it_cannot(tmp_path: Path) -> None:
    script = tmp_path / "bin" / "server.sh"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n")
    servers = [McpServerConfig(name="local", command="bin/server.sh"), McpServerConfig(name="sh", command="sh"),
               McpServerConfig(name="ghost", command="no-such-mcp-server-xyz"), McpServerConfig(name="bare"),
               McpServerConfig(name="secret", type="http", url="https://x", headers={"X-Key": "${MISSING_VAR}"})]
    wire, rows = plan(servers, {"mcpCapabilities": {"http": True}}, tmp_path, ENV)
    assert wire[0]["command"] == str(script) and Path(wire[1]["command"]).name == "sh"
    assert [r.why for r in rows[2:]] == ["command not found: no-such-mcp-server-xyz", "no command",
                                        "environment variable MISSING_VAR is not set"]


def test_profile_servers_follow_and_replace_the_global_ones() -> None:
    config, problems = validate_config({
        "mcp_servers": [{"name": "files", "command": "files-mcp"}, {"name": "docs", "type": "http", "url": "https://a"}],
        "agents": {"claude": {"command": "claude", "mcp_servers": [
            {"name": "docs", "enabled": False}, {"name": "git", "command": "git-mcp"}]}},
    })
    assert problems == []
    spec = _from_profile("claude", config)
    merged = configured(config.mcp_servers, spec.mcp_servers)
    assert [(s.name, s.enabled) for s in merged] == [("files", True), ("docs", False), ("git", True)]


def test_a_bad_server_entry_is_dropped_alone() -> None:
    config, problems = validate_config({
        "mcp_servers": [{"command": "no-name"}, {"name": "ok", "command": "x"}, {"name": "bad", "args": "not a list"}],
        "agents": {"claude": {"command": "claude", "mcp_servers": [{"name": "a", "colour": "red"}, {"url": 3}],
                              "defaults": {"model": "opus", "effort": 3}}},
    })
    assert [s.name for s in config.mcp_servers] == ["ok"]
    profile = config.agents["claude"]  # the profile survives its bad entries
    assert [s.name for s in profile.mcp_servers] == ["a"] and profile.defaults == {"model": "opus"}
    assert "unknown key agents.claude.mcp_servers.0.colour (ignored)" in problems
    assert any(p.startswith("mcp_servers.0.name") and p.endswith("(ignored)") for p in problems)
    assert any(p.startswith("agents.claude.defaults.effort") and p.endswith("(ignored)") for p in problems)


@pytest.mark.slow
async def test_session_new_carries_the_servers_the_agent_can_take(tmp_path: Path, record_file: Path) -> None:
    script = {"initialize_result": {"agentCapabilities": {"mcpCapabilities": {"http": False, "sse": True}}}}
    session, task = await start_session(script, tmp_path, mcp_config=[STDIO, HTTP, SSE, ODD])
    assert session.state.status == "ready"
    await finish(session, task)
    [params] = [m["params"] for m in received(record_file) if m.get("method") == "session/new"]
    assert params["mcpServers"] == [
        {"name": "files", "command": sys.executable, "args": ["-m", "files_server"], "env": [{"name": "LOG", "value": "debug"}]},
        {"type": "sse", "name": "events", "url": "https://mcp.example.com/sse", "headers": []},
    ]
    notices = [e.text for e in session.state.entries if type(e).__name__ == "NoticeEntry"]
    assert any("'docs' not sent" in n and "mcpCapabilities.http" in n for n in notices)
    assert any("'pipe' not sent" in n and "unknown transport" in n for n in notices)


@pytest.mark.slow
async def test_summary_panel_from_the_keyboard_and_the_palette(tmp_path: Path, record_file: Path) -> None:
    script = {"initialize_result": {"agentCapabilities": {"mcpCapabilities": {"http": True}}}}
    config = Config(mcp_servers=[STDIO, SSE])
    spec = AgentSpec(name="scripted", argv=scripted_argv(script, tmp_path), env={}, is_demo=False,
                     mcp_servers=(dataclasses.replace(HTTP, headers={}),))
    app = RatApp(spec, tmp_path, config=config)
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: app.session.state.status == "ready", "ready")
        await pilot.press("alt+m")
        await until(pilot, lambda: isinstance(app.screen, McpServersScreen), "the summary")
        await pilot.pause()
        text = screen_text(app)
        assert "3 of 4 sent to Scripted fake agent." in text  # with rat-tui's own server ([client_tools])
        assert "stdio (bridged)" in text
        assert "files" in text and "✓ sent" in text and "https://mcp.example.com/docs" in text
        assert "✗ skipped: the agent does" in text and "(mcpCapabilities.sse)" in text
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, McpServersScreen), "closed")
        # As a real terminal sends it: ESC m, parsed as key "alt+m" with character "m" (not typed).
        composer = app.query_one(PromptComposer)
        assert app.focused is composer
        app.post_message(events.Key("alt+m", "m"))  # the way the driver delivers keys
        await until(pilot, lambda: isinstance(app.screen, McpServersScreen), "the summary from ESC m")
        assert composer.text == ""
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, McpServersScreen), "closed again")
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"MCP serv")
        await palette_offers(pilot, app, "MCP serv")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, McpServersScreen), "the summary from the palette")
    [params] = [m["params"] for m in received(record_file) if m.get("method") == "session/new"]
    assert [s["name"] for s in params["mcpServers"]] == ["files", "docs", "rat-tui"]


async def test_summary_without_servers_says_how_to_add_them(tmp_path: Path) -> None:
    from .helpers.config_options import ControlsApp, offline_session

    session = offline_session(tmp_path, {})
    app = ControlsApp(session, McpServersScreen)
    async with app.run_test(size=(100, 20)) as pilot:
        await pilot.pause()
        assert "No MCP servers are configured." in screen_text(app)
        assert "[[mcp_servers]]" in screen_text(app)
