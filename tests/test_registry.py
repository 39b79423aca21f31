"""The live agent registry (agents/registry.py) against a local HTTP server: a good index, a malformed one,
a slow one, an unreachable one; the cache and its age; the picker redrawn when the fetch ends."""

from __future__ import annotations

import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from rat_tui.agents import registry
from rat_tui.agents.catalog import load_catalog
from rat_tui.agents.spec import demo_agent
from rat_tui.app import RatApp
from rat_tui.config import Config, RegistryConfig
from rat_tui.ui.screens.agent_picker import AgentPickerScreen

from .helpers.app import until

INDEX = {"version": "1.0.0", "agents": [
    {"id": "claude-acp", "name": "Claude Code", "version": "0.101.0", "description": "From the registry",
     "distribution": {"npx": {"package": "@agentclientprotocol/claude-agent-acp@0.101.0"}}},
    {"id": "brand-new", "name": "Brand New Agent", "version": "1.0.0", "description": "Only in the registry",
     "distribution": {"npx": {"package": "brand-new-agent@1.0.0", "args": ["--acp"]}}},
    {"name": "no id at all"},
]}


class Registry:
    """A registry server on 127.0.0.1: `body` is served as it is, after `delay` seconds."""

    def __init__(self) -> None:
        self.body = json.dumps(INDEX).encode()
        self.delay = 0.0
        self.hits = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                owner.hits += 1
                time.sleep(owner.delay)
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(owner.body)))
                self.end_headers()
                try:
                    self.wfile.write(owner.body)
                except OSError:
                    pass  # the client gave up (the slow case)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}/registry/v1/latest/registry.json"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def served():
    server = Registry()
    yield server
    server.close()


def test_a_good_index_is_used_over_the_bundled_entries_and_cached(served: Registry, tmp_path: Path) -> None:
    cache = tmp_path / "cache" / "registry.json"
    snapshot = registry.refresh(served.url, cache)
    assert snapshot.note == "live registry" and [a["id"] for a in snapshot.agents] == ["claude-acp", "brand-new"]
    assert snapshot.problems == ["registry: agent 3 skipped: no \"id\""]
    assert json.loads(cache.read_text()) == INDEX
    catalog = load_catalog(registry=snapshot)
    claude = catalog.find("claude-acp")
    assert claude is not None and claude.description == "From the registry" and claude.source == "registry"
    assert any(launch.how == "npx" and "@agentclientprotocol/claude-agent-acp@0.101.0" in launch.argv
               for launch in claude.launches)
    assert claude.install  # the bundled entry's install hint (our `rat` block) is kept under the registry's fields
    assert catalog.find("brand-new") is not None and catalog.source_note == "live registry"


def test_a_malformed_index_falls_back_to_the_cache_then_the_bundled_snapshot(served: Registry, tmp_path: Path) -> None:
    cache = tmp_path / "registry.json"
    served.body = b'{"agents": [ this is not json'
    snapshot = registry.refresh(served.url, cache)
    assert snapshot.agents == [] and snapshot.note.startswith("bundled snapshot (the registry could not be used: not valid JSON")
    assert not cache.exists()
    assert load_catalog(registry=snapshot).find("claude-acp") is not None  # the bundled entries still show
    served.body = json.dumps(INDEX).encode()
    assert registry.refresh(served.url, cache).note == "live registry"
    served.body = json.dumps({"agents": "not a list"}).encode()
    kept = registry.refresh(served.url, cache)
    assert kept.note.startswith("cached registry (fetched ") and "could not be reached now: not a registry index" in kept.note
    assert [a["id"] for a in kept.agents] == ["claude-acp", "brand-new"]


def test_a_slow_registry_times_out_and_an_unreachable_one_is_said(served: Registry, tmp_path: Path) -> None:
    served.delay = 3.0
    started = time.monotonic()
    slow = registry.refresh(served.url, tmp_path / "a.json", timeout=0.5)
    assert time.monotonic() - started < 2.5 and slow.note == "bundled snapshot (the registry could not be used: timed out)"
    served.close()
    unreachable = registry.refresh(served.url, tmp_path / "b.json", timeout=0.5)
    assert unreachable.note == "bundled snapshot (the registry could not be used: the registry refused the connection)"
    assert unreachable.agents == []  # said in words, not as `[Errno 111] Connection refused`


def test_the_cache_is_fresh_for_a_day(served: Registry, tmp_path: Path) -> None:
    cache = tmp_path / "registry.json"
    assert registry.current(cache) == (None, True)
    registry.refresh(served.url, cache)
    cached, stale = registry.current(cache)
    assert cached is not None and not stale and cached.note.startswith("cached registry (fetched ")
    old = time.time() - registry.MAX_AGE - 60
    os.utime(cache, (old, old))
    assert registry.current(cache)[1]


async def test_the_picker_opens_at_once_and_shows_the_registry_when_fetched(served: Registry, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(registry.OFF_ENV)
    served.delay = 0.5  # the picker must not wait for it
    app = RatApp(demo_agent(), tmp_path, config=Config(registry=RegistryConfig(url=served.url)))
    async with app.run_test(size=(120, 45)) as pilot:
        await until(pilot, lambda: app.session.state.status == "ready", "ready")
        app.action_agents()
        await until(pilot, lambda: isinstance(app.screen, AgentPickerScreen), "the picker")
        picker = app.screen
        assert picker.catalog.source_note == "bundled snapshot" and picker.catalog.find("brand-new") is None
        await until(pilot, lambda: picker.catalog.source_note == "live registry", "the registry fetched")
        assert picker.catalog.find("brand-new") is not None
        assert "live registry" in str(picker.query_one("#title").render())
        assert served.hits == 1
        app.action_agents()  # a second picker within the day uses the cache: no second fetch
        await until(pilot, lambda: app.screen is not picker and isinstance(app.screen, AgentPickerScreen)
                    and bool(app.screen.query("#agents")), "the second picker drawn")
        assert app.screen.catalog.find("brand-new") is not None and served.hits == 1
