"""Tests PermissionPolicy and choose_option against the permission requests in the real traces."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rat_tui import paths
from rat_tui.session.permission_rules_file import default_rules_path, load_policy
from rat_tui.state.permission_policy import (
    PermissionPolicy,
    choose_option,
    escape_pattern,
    merge_tool_call,
    pattern_matches,
    remembered_decision,
    subject_of,
)

TRACES = Path(__file__).resolve().parent / "fixtures" / "acp-traces"


def trace_requests(name: str) -> list[dict]:
    """The params of every session/request_permission in one trace file."""
    found = []
    for line in (TRACES / name).read_text().splitlines():
        msg = json.loads(line).get("msg") or {}
        if msg.get("method") == "session/request_permission":
            found.append(msg["params"])
    return found


CLAUDE = trace_requests("claude-agent-acp.jsonl")  # shell, edit, write (with kinds)
CLAUDE_CODE = trace_requests("claude-code-acp.jsonl")  # no kinds: title + rawInput only
CODEX = trace_requests("codex-acp.jsonl")  # shell as kind "search" with an argv, edits with diffs
GEMINI = trace_requests("gemini.jsonl")  # no rawInput at all


def by_title(requests: list[dict], word: str) -> dict:
    return next(r["toolCall"] for r in requests if word in r["toolCall"].get("title", ""))


@pytest.fixture
def policy(tmp_path: Path) -> PermissionPolicy:
    return load_policy(tmp_path / "rules.json")


def test_traces_have_the_expected_requests() -> None:
    assert len(CLAUDE) == len(CLAUDE_CODE) == len(CODEX) == len(GEMINI) == 3


# -- subjects ------------------------------------------------------------------------------------


def test_subjects_of_real_requests() -> None:
    shell = "echo harness-shell-ok | tee shell-out.txt && ls"
    notes, created = "/home/user/project/notes.txt", "/home/user/project/created.txt"
    assert subject_of(by_title(CLAUDE, "echo")) == ("execute", shell)
    assert subject_of(by_title(CLAUDE, "Edit")) == ("edit", notes)
    assert subject_of(by_title(CLAUDE, "Write")) == ("edit", created)
    # claude-code-acp: no kind; the command title comes in backticks, the path only in rawInput.
    assert subject_of(by_title(CLAUDE_CODE, "echo")) == (None, shell)
    assert subject_of(by_title(CLAUDE_CODE, "Edit")) == (None, notes)
    # Codex: the shell line hides in a ["/bin/bash", "-lc", line] argv under kind "search".
    assert subject_of(by_title(CODEX, "List")) == ("search", shell)
    assert subject_of(by_title(CODEX, "created")) == ("edit", created)
    # Gemini: no rawInput, so an execute falls back to the title; edits have locations.
    assert subject_of(by_title(GEMINI, "echo")) == ("execute", shell)
    assert subject_of(by_title(GEMINI, "notes.txt")) == ("edit", notes)


def test_subject_from_diff_and_argv_without_shell() -> None:
    assert subject_of({"toolCallId": "t", "kind": "delete", "content": [{"type": "diff", "path": "/a b", "newText": ""}]}) == (
        "delete",
        "/a b",
    )
    call = {"toolCallId": "t", "kind": "execute", "rawInput": {"command": ["git", "commit", "-m", "a b"]}}
    assert subject_of(call) == ("execute", "git commit -m 'a b'")
    assert subject_of({"toolCallId": "t"}) == (None, None)


def test_patterns_only_star_is_special_and_derived_patterns_are_exact() -> None:
    assert pattern_matches("npm run *", "npm run test -- --watch")
    assert pattern_matches("/home/user/project/*", "/home/user/project/src/a.py")
    assert not pattern_matches("npm run *", "npx run test")
    assert pattern_matches("ls a?[b]", "ls a?[b]") and not pattern_matches("ls a?[b]", "ls ax[b]")
    for text in ("ls *.py", "find . -name \\*.py", 'grep "a\\|b"', "x\\\\", "plain"):
        pattern = escape_pattern(text)
        assert pattern_matches(pattern, text) and not pattern_matches(pattern, text + "x")
    assert not pattern_matches(escape_pattern("rm *.log"), "rm important.log")


# -- remember and match --------------------------------------------------------------------------


def test_remember_and_match_execute_with_an_edited_star_pattern(policy: PermissionPolicy) -> None:
    call = by_title(CLAUDE, "echo")
    rule = policy.remember("claude", call, "allow")
    assert (rule.agent, rule.kind, rule.decision) == ("claude", "execute", "allow")
    assert rule.pattern == "echo harness-shell-ok | tee shell-out.txt && ls"
    assert policy.match("claude", call) == rule
    other = {"toolCallId": "x", "kind": "execute", "rawInput": {"command": "echo other"}, "title": "echo other"}
    assert policy.match("claude", other) is None
    edited = policy.update(rule.id, pattern="echo *")
    assert edited.pattern == "echo *" and edited.id == rule.id
    assert policy.match("claude", other) == edited
    assert policy.match("claude", {**other, "kind": "edit"}) is None  # same text, other kind
    assert policy.match("claude", {**other, "rawInput": {"command": "rm -rf /"}}) is None


def test_remember_and_match_edit_by_path(policy: PermissionPolicy) -> None:
    rule = policy.remember("gemini", by_title(GEMINI, "notes.txt"), "allow")
    assert (rule.kind, rule.pattern) == ("edit", "/home/user/project/notes.txt")
    again = {"toolCallId": "later", "kind": "edit", "title": "notes.txt: x => y",
             "locations": [{"path": "/home/user/project/notes.txt"}]}
    assert policy.match("gemini", again) == rule
    assert policy.match("gemini", by_title(GEMINI, "created")) is None
    policy.update(rule.id, pattern="/home/user/project/*")
    assert policy.match("gemini", by_title(GEMINI, "created")) is not None


def test_different_agent_does_not_match(policy: PermissionPolicy) -> None:
    call = by_title(CLAUDE, "echo")
    policy.remember("claude", call, "allow")
    assert policy.match("gemini", call) is None
    assert policy.match("claude", call) is not None


def test_reject_wins_and_remember_replaces_an_equal_rule(policy: PermissionPolicy) -> None:
    call = by_title(CODEX, "notes")
    first = policy.remember("codex", call, "allow")
    broad = policy.remember("codex", {"toolCallId": "t", "kind": "edit", "locations": [{"path": "/*"}]}, "reject")
    policy.update(broad.id, pattern="/home/*")
    assert policy.match("codex", call).decision == "reject"
    again = policy.remember("codex", call, "reject")
    assert again.id == first.id and again.decision == "reject" and len(policy.rules) == 2
    with pytest.raises(ValueError):
        policy.remember("codex", call, "maybe")  # type: ignore[arg-type]


def test_revoke(policy: PermissionPolicy) -> None:
    rule = policy.remember("claude", by_title(CLAUDE, "echo"), "allow")
    assert policy.revoke(rule.id) is True
    assert policy.rules == [] and policy.match("claude", by_title(CLAUDE, "echo")) is None
    assert policy.revoke(rule.id) is False
    assert load_policy(policy.path).rules == []
    with pytest.raises(KeyError):
        policy.update(rule.id, pattern="*")


# -- persistence ---------------------------------------------------------------------------------


def test_round_trip_through_the_file(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "rules.json"
    policy = load_policy(path)
    assert policy.rules == [] and policy.problems == []  # a missing file is a first run, not a problem
    a = policy.remember("claude", by_title(CLAUDE_CODE, "echo"), "allow")
    b = policy.remember("codex", by_title(CODEX, "notes"), "reject")
    policy.update(a.id, pattern=None)
    loaded = load_policy(path)
    assert loaded.rules == policy.rules and loaded.problems == []
    assert loaded.rules[0].kind is None and loaded.rules[0].pattern is None and loaded.rules[1] == b
    assert json.loads(path.read_text())["version"] == 1
    assert [p.name for p in path.parent.iterdir()] == ["rules.json"]  # no temp file left behind


def test_default_path_is_in_the_data_dir() -> None:
    assert default_rules_path() == paths.data_dir() / "permission_rules.json"
    assert load_policy().path == default_rules_path()


@pytest.mark.parametrize("content", ["{not json", '{"rules": 3}', "[]", b"\xff\xfe"])
def test_corrupt_file_gives_empty_rules_and_a_problem(tmp_path: Path, content) -> None:
    path = tmp_path / "rules.json"
    original = content if isinstance(content, bytes) else content.encode()
    path.write_bytes(original)
    policy = load_policy(path)
    assert policy.rules == []
    assert len(policy.problems) == 1 and str(path) in policy.problems[0]
    policy.remember("claude", by_title(CLAUDE, "echo"), "allow")
    assert (tmp_path / "rules.json.broken").read_bytes() == original  # kept aside, not overwritten
    assert len(load_policy(path).rules) == 1


def test_malformed_rules_are_skipped_one_by_one(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    good = {"id": "r1", "agent": "claude", "kind": "execute", "pattern": "ls", "decision": "allow", "created": "2025-01-01T00:00:00+00:00"}
    path.write_text(json.dumps({"version": 1, "rules": [good, {**good, "decision": "maybe"}, "junk"]}))
    policy = load_policy(path)
    assert [r.id for r in policy.rules] == ["r1"] and len(policy.problems) == 2


def test_save_failure_is_reported_not_raised(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    policy = load_policy(blocker / "rules.json")  # parent is a file: cannot mkdir
    rule = policy.remember("claude", by_title(CLAUDE, "echo"), "allow")
    assert policy.rules == [rule] and "Cannot save" in policy.problems[-1]


# -- options -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("requests", "ids"),
    [
        (CLAUDE, {"allow_once": "allow", "allow_always": "allow_always", "reject_once": "reject"}),
        (CODEX, {"allow_once": "approved", "allow_always": "approved-execpolicy-amendment", "reject_once": "abort"}),
        (GEMINI, {"allow_once": "proceed_once", "allow_always": "proceed_always", "reject_once": "cancel"}),
    ],
    ids=["claude", "codex", "gemini"],
)
def test_choose_option_by_kind(requests: list[dict], ids: dict[str, str]) -> None:
    options = max((r["options"] for r in requests), key=len)
    assert choose_option(options, "allow")["optionId"] == ids["allow_once"]
    assert choose_option(options, "allow", once=False)["optionId"] == ids["allow_always"]
    assert choose_option(options, "reject")["optionId"] == ids["reject_once"]
    assert choose_option(options, "reject", once=False)["optionId"] == ids["reject_once"]  # no reject_always: fall back


def test_choose_option_fallbacks_and_unknown_kinds() -> None:
    only_always = [{"optionId": "x", "name": "Always", "kind": "allow_always"}, {"optionId": "n", "name": "No", "kind": "reject_always"}]
    assert choose_option(only_always, "allow")["optionId"] == "x"
    assert choose_option(only_always, "reject")["optionId"] == "n"
    # Codex edits offer no allow_always; unknown kinds are never guessed from their ids.
    codex_edit = by_title(CODEX, "notes")
    options = next(r["options"] for r in CODEX if r["toolCall"] is codex_edit)
    assert choose_option(options, "allow", once=False)["optionId"] == "approved"
    assert choose_option([{"optionId": "allow_once", "name": "Allow", "kind": "mystery"}], "allow") is None
    assert choose_option([], "reject") is None


def test_remembered_decision_and_merge() -> None:
    assert remembered_decision({"kind": "allow_always"}) == "allow"
    assert remembered_decision({"kind": "reject_always"}) == "reject"
    assert remembered_decision({"kind": "allow_once"}) is None and remembered_decision(None) is None
    known = {"toolCallId": "t", "title": "Edit", "kind": "edit", "status": "in_progress", "locations": [{"path": "/a"}]}
    merged = merge_tool_call(known, {"toolCallId": "t", "status": "pending", "title": None})
    assert merged == {**known, "status": "pending"}


def test_policy_does_not_import_textual() -> None:
    code = "import sys, rat_tui.state.permission_policy; sys.exit(any(m.split('.')[0] in ('textual', 'rich') for m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
