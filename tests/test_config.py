"""config.toml loading: defaults when missing, clear messages when bad, never an exception."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import textwrap
import tomllib
from pathlib import Path

import pytest

from rat_tui import paths, typed_data
from rat_tui.config import AgentProfile, Config, load_config, validate_config

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = Path(__file__).resolve().parent / "configs"


def test_missing_default_file_gives_defaults_and_no_problems() -> None:
    assert not paths.config_file().exists()
    config, problems = load_config()
    assert config == Config()
    assert problems == []


def test_default_file_is_found_in_the_xdg_config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    (tmp_path / "rat-tui").mkdir()
    (tmp_path / "rat-tui" / "config.toml").write_text('theme = "rat-light"\n')
    config, problems = load_config()
    assert (config.theme, problems) == ("rat-light", [])


def test_missing_explicit_file_is_a_problem(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    config, problems = load_config(missing)
    assert config == Config()
    assert problems == [f"Config file not found: {missing}"]


def test_missing_file_named_by_env_var_is_a_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "env.toml"
    monkeypatch.setenv("RAT_CONFIG", str(missing))
    assert paths.config_file() == missing
    config, problems = load_config()
    assert config == Config()
    assert problems == [f"Config file not found: {missing}"]


def test_env_var_names_the_config_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAT_CONFIG", str(CONFIGS / "valid.toml"))
    config, problems = load_config()
    assert problems == []
    assert config.default_agent == "fake"


def test_valid_file_loads_every_key() -> None:
    config, problems = load_config(CONFIGS / "valid.toml")
    assert problems == []
    assert config.theme == "rat-light"
    assert config.rpc_log == "~/rpc.jsonl"
    assert config.keymap == {"app.quit": "ctrl+x"}
    assert config.agents["fake"] == AgentProfile(
        command="~/bin/fake-agent", args=["--acp"], env={"FAKE_LEVEL": "3"}, title="Fake agent"
    )
    assert config.agents["other"] == AgentProfile(command="other-agent")


def test_syntax_error_gives_defaults_and_names_file_and_line() -> None:
    path = CONFIGS / "syntax_error.toml"
    config, problems = load_config(path)
    assert config == Config()
    assert len(problems) == 1
    assert str(path) in problems[0]
    assert "line 6" in problems[0]


def test_unreadable_file_gives_defaults(tmp_path: Path) -> None:
    path = tmp_path / "binary.toml"
    path.write_bytes(b"theme = '\xff\xfe'\n")
    config, problems = load_config(path)
    assert config == Config()
    assert len(problems) == 1 and str(path) in problems[0]


def test_invalid_values_are_named_and_valid_parts_kept() -> None:
    path = CONFIGS / "invalid_parts.toml"
    config, problems = load_config(path)
    # The bad profiles go; the good one and the rest of the file stay.
    assert set(config.agents) == {"goose"}
    assert config.agents["goose"].args == ["acp"]
    assert config.default_agent == "goose"
    assert config.theme == "rat-dark"  # the bad value fell back to its default
    assert config.keymap == {"app.quit": "ctrl+x"}
    text = "\n".join(problems)
    assert "agents.claude.args: Input should be a valid list" in text
    assert "agents.nocommand.command: Field required" in text
    assert "theme: Input should be a valid string" in text
    assert "keymap.session.cancel" in text
    assert len(problems) == 4
    assert all(problem.startswith(f"{path}: ") for problem in problems)


def test_wrong_type_for_a_whole_table_drops_only_that_table(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('agents = "claude"\ntheme = "rat-light"\n')
    config, problems = load_config(path)
    assert config.agents == {} and config.theme == "rat-light"
    assert len(problems) == 1 and "agents: Input should be a valid dictionary" in problems[0]


def test_unknown_keys_are_warned_about_and_ignored() -> None:
    config, problems = load_config(CONFIGS / "unknown_keys.toml")
    assert config.theme == "rat-light"
    assert config.agents["goose"] == AgentProfile(command="goose", args=["acp"])
    text = "\n".join(problems)
    assert "unknown key colour_scheme" in text
    assert "unknown key agents.goose.arguments" in text
    assert len(problems) == 2


def test_unknown_key_and_bad_value_in_one_profile() -> None:
    # Both errors name the same profile: the profile goes, the other keys stay, nothing raises.
    data = {"theme": "nord", "agents": {"x": {"command": 1, "bogus": 2}, "y": {"command": "y"}}}
    config, problems = validate_config(data)
    assert set(config.agents) == {"y"} and config.theme == "nord"
    assert len(problems) == 2


def test_example_config_loads_without_problems() -> None:
    config, problems = load_config(ROOT / "config.example.toml")
    assert problems == []
    # The demo agent stays the default: default_agent is left commented out.
    assert config.default_agent is None
    assert {"claude", "gemini", "codex", "goose", "opencode"} <= set(config.agents)
    assert config.agents["gemini"].args == ["--acp"]


def field_docstrings(cls: type) -> dict[str, str]:
    """The string right under each field of `cls` in its source (how config fields are documented)."""
    body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0].body
    return {node.target.id: after.value.value for node, after in zip(body, body[1:])
            if isinstance(node, ast.AnnAssign) and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)}


def test_every_field_is_documented() -> None:
    for model in (Config, AgentProfile):
        documented = field_docstrings(model)
        for field in dataclasses.fields(model):
            assert documented.get(field.name), f"{model.__name__}.{field.name} has no docstring"


@pytest.mark.parametrize("path", [ROOT / "config.example.toml", CONFIGS / "valid.toml", CONFIGS / "unknown_keys.toml",
                                  CONFIGS / "invalid_parts.toml"], ids=lambda p: p.name)
def test_a_file_is_read_the_same_without_pydantic_as_with_it(path: Path) -> None:
    """The plain build (no pydantic at startup) gives what the pydantic models give for the same data."""
    data = tomllib.loads(path.read_text())
    plain, problems = validate_config(data)
    model = typed_data.pydantic_model(Config)
    if not problems:
        assert typed_data.build(Config, data) == plain
        assert typed_data.from_model(Config, model.model_validate(data)) == plain
    for profile in data.get("agents", {}).values():  # each good profile alone, both ways
        try:
            built = typed_data.build(AgentProfile, profile)
        except typed_data.Unsure:
            continue
        assert typed_data.from_model(AgentProfile, typed_data.pydantic_model(AgentProfile).model_validate(profile)) == built


def test_numbers_and_unions_are_read_as_pydantic_reads_them() -> None:
    data = {"history": {"retention_days": 30, "max_sessions": 5, "max_megabytes": 1.5},
            "request_timeout_seconds": 2, "ui": {"max_width": 0},
            "agents": {"a": {"command": "a", "defaults": {"model": "m", "fast": True}, "protocol": 2}}}
    built = typed_data.build(Config, data)
    assert built == typed_data.from_model(Config, typed_data.pydantic_model(Config).model_validate(data))
    assert built.history.retention_days == 30.0 and type(built.history.retention_days) is float
    assert type(built.request_timeout_seconds) is float and built.agents["a"].defaults == {"model": "m", "fast": True}
    for unsure in ({"history": {"retention_days": 0}}, {"ui": {"max_width": -1}}, {"follow": 1},
                   {"agents": {"a": {"command": "a", "protocol": 3}}}, {"agents": {"a": {"command": "a", "protocol": True}}},
                   {"request_timeout_seconds": float("nan")}, {"mcp_servers": [{"name": "x", "args": "y"}]}):
        with pytest.raises(typed_data.Unsure):
            typed_data.build(Config, unsure)  # then pydantic decides, as it always did:
    assert validate_config({"follow": 1}) == (Config(follow=True), [])
    assert validate_config({"ui": {"max_width": -1}})[1] == ["ui.max_width: Input should be greater than or equal to 0 "
                                                             "(using the default)"]


def test_syntax_error_at_end_of_file_still_names_a_line(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('theme = "nord"\nkeymap = {\n')
    _, problems = load_config(path)
    assert len(problems) == 1 and "line 2" in problems[0]


def test_a_problem_says_on_which_line_of_the_file_it_is(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('# mine\ntheme = "nord"\nnotes = """\nbogus = 1\n"""\n\n[agents.x]\ncommand = 1\n\n'
                    '[[mcp_servers]]\nname = "a"\ncommand = "a"\n[[mcp_servers]]\nname = "b"\ncommand = 2\n'
                    '[keymap]\n"session.traffic" = 3\n')
    config, problems = load_config(path)
    assert config.theme == "nord"
    assert f"{path}: line 3: unknown key notes (ignored)" in problems  # not line 4, inside the string
    assert any(p.startswith(f"{path}: line 8: agents.x.command:") for p in problems)
    assert any(p.startswith(f"{path}: line 15: mcp_servers.1") for p in problems)  # the second entry's command
    assert any(p.startswith(f"{path}: line 17: keymap.session.traffic:") for p in problems)
