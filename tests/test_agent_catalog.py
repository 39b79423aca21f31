"""The agent catalog: built-in entries, registry-format manifests, config profiles over them, and PATH checks."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from rat_tui.agents import catalog as agent_catalog
from rat_tui.agents.catalog import FETCH, INSTALLED, MISSING, check, load_catalog, parse_manifest, spec_for
from rat_tui.cli import ConfigError, parse_args, resolve_agent
from rat_tui.agents.spec import AgentSpec
from rat_tui.config import validate_config

BUILTIN_IDS = {"claude-acp", "codex-acp", "gemini", "goose", "opencode", "kimi", "qwen-code", "auggie"}


def which_from(*names: str):
    return lambda program: f"/usr/bin/{program}" if program in names else None


def empty_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "agents"
    folder.mkdir(exist_ok=True)
    return folder


def test_builtins_cover_the_common_agents(tmp_path: Path) -> None:
    catalog = load_catalog(None, user_dir=empty_dir(tmp_path))
    assert catalog.problems == []
    assert {agent.id for agent in catalog.agents} == BUILTIN_IDS
    for agent in catalog.agents:
        assert agent.source == "built-in" and agent.name and agent.description and agent.install
        assert agent.launches, agent.id
    gemini = catalog.find("gemini")
    assert gemini.launches[0].argv == ("gemini", "--acp") and gemini.missing_file_empty  # Gemini CLI 0.61
    assert gemini.install == "npm install -g @google/gemini-cli"
    assert catalog.find("goose").launches[0].argv == ("goose", "acp")
    assert catalog.find("opencode").launches[0].argv == ("opencode", "acp")
    assert catalog.find("kimi").launches[0].argv == ("kimi", "--acp")
    assert catalog.find("claude") is catalog.find("claude-acp")  # an alias
    assert catalog.find("nope") is None


def test_builtin_files_ship_with_the_package() -> None:
    pyproject = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    assert '"agents/manifests/*.json"' in pyproject
    assert len(list(agent_catalog.builtin_dir().glob("*.json"))) == len(BUILTIN_IDS)


def test_installed_fetch_and_missing(tmp_path: Path) -> None:
    catalog = load_catalog(None, user_dir=empty_dir(tmp_path))
    claude, goose = catalog.find("claude-acp"), catalog.find("goose")
    # its own program on PATH: installed, run as it is
    availability = check(claude, which_from("claude-agent-acp", "npx"))
    assert availability.status == INSTALLED and availability.launch.argv == ("claude-agent-acp",)
    # only npx: runnable, the package is fetched on first run
    availability = check(claude, which_from("npx"))
    assert availability.status == FETCH and availability.runnable
    assert availability.launch.argv == ("npx", "@agentclientprotocol/claude-agent-acp")
    assert "fetched on first run" in availability.label
    # nothing: missing, with no launch
    assert check(claude, which_from()).status == MISSING and spec_for(claude, check(claude, which_from())) is None
    assert check(goose, which_from("npx")).status == MISSING  # goose has no npx distribution
    spec = spec_for(goose, check(goose, which_from("goose")))
    assert spec == AgentSpec(name="goose", argv=["goose", "acp"], env={}, is_demo=False)


def test_registry_manifest_and_index_in_the_user_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = empty_dir(tmp_path)
    monkeypatch.setattr(agent_catalog, "platform_key", lambda: "linux-x86_64")
    # the registry repository's layout: <id>/agent.json, with fields we do not know
    (folder / "fancy").mkdir()
    (folder / "fancy" / "agent.json").write_text(json.dumps({
        "id": "fancy", "name": "Fancy Agent", "version": "1.2.3", "description": "Does fancy things",
        "repository": "https://example.com/fancy", "authors": ["Someone"], "license": "MIT", "icon": "./icon.svg",
        "license_url": "https://example.com/license", "preview": {"version": "2.0.0"}, "sparkles": True,
        "distribution": {
            "binary": {
                "linux-x86_64": {"archive": "https://example.com/fancy.tar.gz", "cmd": "./fancy-agent",
                                 "args": ["serve", "--acp"], "env": {"FANCY": "1"}},
                "darwin-aarch64": {"archive": "https://example.com/fancy-mac.tar.gz", "cmd": "./fancy-mac"},
            },
            "uvx": {"package": "fancy-agent", "cmd": "fancy", "args": ["acp"]},
            "teleport": {"somewhere": True},
        },
    }))
    # a registry index with two agents, one of which overrides a built-in's description
    (folder / "registry.json").write_text(json.dumps({"version": "1.0.0", "agents": [
        {"id": "pythonic", "name": "Pythonic", "description": "A uvx agent",
         "distribution": {"uvx": {"package": "pythonic-acp"}}},
        {"id": "gemini", "name": "Gemini CLI", "description": "Overridden description",
         "distribution": {"npx": {"package": "@google/gemini-cli@9.9.9", "args": ["--acp"]}}},
    ]}))
    catalog = load_catalog(None, user_dir=folder)
    assert catalog.problems == []
    fancy = catalog.find("fancy")
    assert fancy.name == "Fancy Agent" and fancy.description == "Does fancy things"
    assert fancy.source == str(folder / "fancy" / "agent.json")
    assert [(launch.how, launch.argv) for launch in fancy.launches] == [
        ("binary", ("fancy-agent", "serve", "--acp")),
        ("uvx", ("uvx", "--from", "fancy-agent", "fancy", "acp")),
    ]
    assert fancy.launches[0].env == {"FANCY": "1"}
    assert fancy.install_hint == "see https://example.com/fancy"
    assert check(fancy, which_from("fancy-agent")).status == INSTALLED
    assert check(fancy, which_from("uvx")).status == FETCH
    pythonic = catalog.find("pythonic")
    assert pythonic.launches[0].argv == ("uvx", "pythonic-acp")
    # over a built-in: the manifest's fields win, the built-in's rat block (command, install hint) stays
    gemini = catalog.find("gemini")
    assert gemini.description == "Overridden description"
    assert gemini.launches[0].argv == ("gemini", "--acp")
    assert gemini.launches[1].argv == ("npx", "@google/gemini-cli@9.9.9", "--acp")
    assert gemini.install == "npm install -g @google/gemini-cli"


def test_malformed_manifests_are_skipped_with_a_warning_naming_the_file(tmp_path: Path) -> None:
    folder = empty_dir(tmp_path)
    (folder / "broken.json").write_text('{"id": "broken", "name": ')
    (folder / "list.json").write_text("[1, 2, 3]")
    (folder / "noid.json").write_text(json.dumps({"name": "Nameless", "distribution": {}}))
    (folder / "index.json").write_text(json.dumps({"agents": [{"id": "good", "name": "Good"}, "junk"]}))
    (folder / "weird.json").write_text(json.dumps({  # bad optional fields are dropped, the agent kept
        "id": "weird", "name": 42, "description": ["no"], "distribution": {"npx": {"package": 7}, "binary": "x"},
        "rat": {"command": "weird-agent", "args": "not-a-list", "aliases": [1], "env": {"A": 1, "B": "b"}},
    }))
    catalog = load_catalog(None, user_dir=folder)
    problems = "\n".join(catalog.problems)
    assert len(catalog.problems) == 4, problems
    assert f"{folder / 'broken.json'}: not valid JSON" in problems
    assert f"{folder / 'list.json'}: not a JSON object" in problems
    assert f"{folder / 'noid.json'}: no \"id\"" in problems
    assert f"{folder / 'index.json'} (agent 2): not a JSON object" in problems
    assert all("skipped" in problem for problem in catalog.problems)
    assert catalog.find("good") is not None and catalog.find("broken") is None
    weird = catalog.find("weird")
    assert weird.name == "weird" and weird.description == ""
    assert [launch.argv for launch in weird.launches] == [("weird-agent",)]
    assert weird.launches[0].env == {"B": "b"}
    assert BUILTIN_IDS <= {agent.id for agent in catalog.agents}  # the built-ins survive


def test_config_profiles_merge_over_the_catalog(tmp_path: Path) -> None:
    config, problems = validate_config({"agents": {
        "gemini": {"command": "/opt/gemini/bin/gemini", "args": ["--acp"], "title": "My Gemini"},
        "claude": {"command": "npx", "args": ["@zed-industries/claude-code-acp"]},
        "mine": {"command": "my-agent", "env": {"X": "1"}},
    }})
    assert problems == []
    catalog = load_catalog(config, user_dir=empty_dir(tmp_path))
    assert [agent.id for agent in catalog.agents[:3]] == ["gemini", "claude", "mine"]  # profiles first
    gemini = catalog.find("gemini")
    assert gemini.source == "config" and gemini.name == "My Gemini"
    assert [launch.argv for launch in gemini.launches] == [("/opt/gemini/bin/gemini", "--acp")]
    assert gemini.description and gemini.install == "npm install -g @google/gemini-cli"  # kept from the built-in
    assert not gemini.missing_file_empty  # the profile says so (its default)
    claude = catalog.find("claude")  # the built-in's alias: merged into it
    assert claude.name == "Claude Code" and catalog.find("claude-acp") is claude
    assert claude.launches[0].argv == ("npx", "@zed-industries/claude-code-acp")
    assert check(claude, which_from("npx")).status == INSTALLED
    assert sum(1 for agent in catalog.agents if "claude-acp" in agent.names()) == 1
    mine = catalog.find("mine")
    assert mine.source == "config" and mine.launches[0].env == {"X": "1"} and mine.description == ""
    assert check(mine, which_from()).status == MISSING


def test_a_profile_started_from_the_catalog_keeps_its_settings(tmp_path: Path) -> None:
    config, problems = validate_config({"agents": {"claude": {
        "command": "npx", "args": ["@zed-industries/claude-code-acp"], "env": {"X": "1"},
        "mcp_servers": [{"name": "fs", "command": "fs-server"}], "defaults": {"model": "opus"},
        "client_tools": {"enabled": False},
    }}})
    assert problems == []
    claude = load_catalog(config, user_dir=empty_dir(tmp_path)).find("claude-acp")  # by the built-in's id
    spec = spec_for(claude, check(claude, which_from("npx")))
    assert spec.name == "claude" and spec.argv == ["npx", "@zed-industries/claude-code-acp"] and spec.env == {"X": "1"}
    assert [server.name for server in spec.mcp_servers] == ["fs"] and spec.defaults == {"model": "opus"}
    assert spec.client_tools is not None and spec.client_tools.enabled is False


def test_rat_agent_accepts_a_catalog_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    goose = bin_dir / "goose"
    goose.write_text("#!/bin/sh\nexit 0\n")
    goose.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    config, _ = validate_config({})
    spec, problems = resolve_agent(parse_args(["--agent", "goose"]), config)
    assert spec == AgentSpec(name="goose", argv=["goose", "acp"], env={}, is_demo=False)
    assert problems == []
    with pytest.raises(ConfigError, match=r"Gemini CLI \(gemini\) is not installed.*npm install -g @google/gemini-cli"):
        resolve_agent(parse_args(["--agent", "gemini"]), config)
    with pytest.raises(ConfigError, match="unknown agent 'nope'.*catalog agents: .*goose"):
        resolve_agent(parse_args(["--agent", "nope"]), config)
    # default_agent may name a catalog agent too
    config, _ = validate_config({"default_agent": "goose"})
    spec, problems = resolve_agent(parse_args([]), config)
    assert spec.argv == ["goose", "acp"] and problems == []
    # a config profile of the same name still wins
    config, _ = validate_config({"agents": {"goose": {"command": sys.executable, "args": ["-V"]}}})
    spec, _ = resolve_agent(parse_args(["--agent", "goose"]), config)
    assert spec.argv == [sys.executable, "-V"]


def test_parse_manifest_needs_an_object_with_an_id() -> None:
    with pytest.raises(agent_catalog.ManifestError):
        parse_manifest("gemini")
    with pytest.raises(agent_catalog.ManifestError):
        parse_manifest({"id": "  "})
    agent = parse_manifest({"id": "x", "distribution": {"npx": {"package": "@x/y", "cmd": "y", "args": ["--acp"]}}})
    assert agent.name == "x" and agent.launches[0].argv == ("npx", "--package", "@x/y", "y", "--acp")


def test_the_catalog_does_not_import_textual() -> None:
    import subprocess

    code = "import sys, rat_tui.agents.catalog; sys.exit(any(m.split('.')[0] == 'textual' for m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
