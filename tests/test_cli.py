"""The command line: parsing, `--` split, --cwd checks, --version and which agent runs."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

import pytest

from rat_tui import __version__
from rat_tui.cli import CliArgs, ConfigError, parse_args, resolve_agent
from rat_tui.agents.spec import AgentSpec
from rat_tui.config import AgentProfile, Config

CONFIG = Config(
    default_agent="goose",
    agents={
        "goose": AgentProfile(command="goose", args=["acp"]),
        "mine": AgentProfile(command="~/bin/agent", args=["--acp"], env={"LEVEL": "3"}),
    },
)


def test_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    args = parse_args([])
    assert args == CliArgs(cwd=Path(os.getcwd()))
    assert args.cwd.samefile(tmp_path)
    assert args.command == [] and args.agent is None and args.config is None and args.rpc_log is None


def test_everything_after_double_dash_is_the_agent_command() -> None:
    args = parse_args(["--agent", "goose", "--", "my-agent", "--help", "--cwd", "x", "--", "y"])
    assert args.command == ["my-agent", "--help", "--cwd", "x", "--", "y"]
    assert args.agent == "goose"


def test_double_dash_without_command_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        parse_args(["--"])
    assert exit_info.value.code == 2
    assert "no agent command after --" in capsys.readouterr().err


def test_relative_cwd_becomes_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "project").mkdir()
    monkeypatch.chdir(tmp_path)
    args = parse_args(["--cwd", "project"])
    assert args.cwd.is_absolute()
    assert args.cwd.samefile(tmp_path / "project")


def test_files_are_paths_with_home_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    args = parse_args(["--config", "~/c.toml", "--rpc-log", "rpc.jsonl"])
    assert args.config == tmp_path / "c.toml"
    assert args.rpc_log == Path("rpc.jsonl")


@pytest.mark.parametrize("make", ["missing", "file"])
def test_bad_cwd_exits_2_with_a_message(tmp_path: Path, make: str, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "target"
    if make == "file":
        target.write_text("not a directory")
    with pytest.raises(SystemExit) as exit_info:
        parse_args(["--cwd", str(target)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "--cwd" in err and str(target) in err
    assert "Traceback" not in err


def test_unknown_option_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        parse_args(["--frobnicate"])
    assert exit_info.value.code == 2
    assert "unrecognized arguments: --frobnicate" in capsys.readouterr().err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        parse_args(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"rat-tui {__version__}"


def test_help_mentions_every_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        parse_args(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for option in ("--cwd", "--agent", "--config", "--rpc-log", "--version", "-- COMMAND"):
        assert option in out


def test_cli_does_not_import_textual() -> None:
    # `rat --version` and argument errors must answer without paying for the UI import.
    import subprocess

    code = "import sys, rat_tui.cli; sys.exit(any(m.split('.')[0] == 'textual' for m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


# resolve_agent: `-- COMMAND` > --agent > default_agent > demo


def test_explicit_command_wins(tmp_path: Path) -> None:
    args = parse_args(["--agent", "mine", "--", "/opt/agents/fancy-agent", "--acp"])
    spec, problems = resolve_agent(args, CONFIG)
    assert spec == AgentSpec(name="fancy-agent", argv=["/opt/agents/fancy-agent", "--acp"], env={}, is_demo=False)
    assert len(problems) == 1 and "--agent mine ignored" in problems[0]


def test_agent_option_picks_the_profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    spec, problems = resolve_agent(parse_args(["--agent", "mine"]), CONFIG)
    assert spec == AgentSpec(
        name="mine", argv=[str(tmp_path / "bin" / "agent"), "--acp"], env={"LEVEL": "3"}, is_demo=False
    )
    assert problems == []


def test_unknown_agent_lists_the_known_profiles() -> None:
    with pytest.raises(ConfigError) as error:
        resolve_agent(parse_args(["--agent", "nope"]), CONFIG)
    message = str(error.value)
    assert "'nope'" in message and "goose, mine" in message


def test_unknown_agent_without_profiles_says_so() -> None:
    with pytest.raises(ConfigError, match="no agent profiles are configured"):
        resolve_agent(parse_args(["--agent", "nope"]), Config())


def test_default_agent_is_used_otherwise() -> None:
    spec, problems = resolve_agent(parse_args([]), CONFIG)
    assert spec == AgentSpec(name="goose", argv=["goose", "acp"], env={}, is_demo=False)
    assert problems == []


def test_missing_default_agent_falls_back_to_demo_with_a_problem() -> None:
    config = dataclasses.replace(CONFIG, default_agent="gone")
    spec, problems = resolve_agent(parse_args([]), config)
    assert spec.is_demo and spec.name == "demo"
    assert len(problems) == 1 and "'gone'" in problems[0] and "goose, mine" in problems[0]


def test_demo_agent_when_nothing_is_configured() -> None:
    spec, problems = resolve_agent(parse_args([]), Config())
    assert spec == AgentSpec(name="demo", argv=[sys.executable, "-m", "rat_tui.demo"], env={}, is_demo=True)
    assert problems == []
    assert os.path.isabs(spec.argv[0])
