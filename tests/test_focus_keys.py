"""Focus that follows the user: global keys from the composer, Tab between prompt and transcript,
typing from the transcript lands in the composer, sending brings the view to the end."""

from __future__ import annotations

from pathlib import Path

import pytest

from textual.command import CommandPalette

from rat_tui.app import RatApp
from rat_tui.ui.screens.config_options import ConfigOptionsScreen
from rat_tui.ui.widgets.prompt import PromptComposer
from rat_tui.ui.widgets.transcript import Transcript

from .helpers.app import palette_offers, press_to_quit, until
from .helpers.app import scripted_named as scripted

pytestmark = pytest.mark.slow


async def test_focus_follows_the_user(tmp_path: Path) -> None:
    app = RatApp(scripted({}, tmp_path, "one"), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.tabs.active_view
        await until(pilot, lambda: view.session.state.status == "ready", "ready")
        assert isinstance(app.focused, PromptComposer)
        await pilot.press("f6")  # the session's file preview, not TextArea's "select line"
        await until(pilot, lambda: view.preview.display, "the preview shown by F6")
        await pilot.press("f6")
        await pilot.press("f7")  # the session's options, not TextArea's "select all"
        await until(pilot, lambda: isinstance(app.screen, ConfigOptionsScreen), "the options by F7")
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ConfigOptionsScreen), "options closed")
        await pilot.press("tab")  # to the transcript, not the tab strip
        assert isinstance(app.focused, Transcript)
        await pilot.press("tab")
        assert isinstance(app.focused, PromptComposer)
        await pilot.press("ctrl+t")
        assert isinstance(app.focused, Transcript)
        await pilot.press(*"form")  # f is bound to nothing there: it and the rest go to the composer
        await until(pilot, lambda: view.composer.text == "form", "the typing in the composer")
        assert isinstance(app.focused, PromptComposer)
        assert not view.preview.display  # the "o" did not open a file preview


EDIT_TURN = [{"update": {"sessionUpdate": "tool_call", "toolCallId": "e1", "title": "Edit hello.py", "kind": "edit",
                         "status": "completed", "content": [{"type": "diff", "path": "/p/hello.py", "oldText": "a\n",
                                                              "newText": "b\n"}]}},
             {"chunk": "I changed hello.py."}]


async def test_a_click_in_the_transcript_then_a_sentence_lands_whole_in_the_composer(tmp_path: Path) -> None:
    from rat_tui.ui.widgets.nav_bar import NavBar

    app = RatApp(scripted({"turns": [EDIT_TURN]}, tmp_path, "one"), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.tabs.active_view
        await until(pilot, lambda: view.session.state.status == "ready", "ready")
        await pilot.press(*"go", "enter")
        await until(pilot, lambda: "I changed hello.py." in view.transcript.plain_text, "the answer")
        await until(pilot, lambda: view.session.state.status == "ready", "the turn's end")
        screens = len(app.screen_stack)
        await pilot.click(view.transcript, offset=(10, 2))
        assert isinstance(app.focused, Transcript) and not view.navigation.on
        sentence = "do the same for hello.py"  # d opens the diff, s a subagent, t, o, ... in navigation mode
        for key in sentence:
            await pilot.press("space" if key == " " else "full_stop" if key == "." else key)
        await until(pilot, lambda: view.composer.text == sentence, "the sentence in the composer")
        assert len(app.screen_stack) == screens and isinstance(app.focused, PromptComposer)
        assert not any(bar.display for bar in view.query(NavBar))
        # Navigation mode is a key away, says so, and its letters act; Esc goes back to the prompt.
        await pilot.press("ctrl+t")
        assert view.navigation.on and view.query_one(NavBar).display
        await pilot.press("d")
        await until(pilot, lambda: len(app.screen_stack) == screens + 1, "the diff viewer opened by d")
        await pilot.press("escape")
        await until(pilot, lambda: len(app.screen_stack) == screens, "the viewer closed")
        assert view.navigation.on  # back where it was
        await pilot.press("escape")
        assert isinstance(app.focused, PromptComposer) and not view.query_one(NavBar).display
        assert view.composer.text == sentence and view.session.state.status == "ready"
        # A transcript focused by a click enters the mode by Ctrl+T too.
        await pilot.click(view.transcript, offset=(10, 2))
        assert not view.navigation.on
        await pilot.press("ctrl+t")
        assert view.navigation.on and isinstance(app.focused, Transcript)


async def test_every_bound_action_is_in_the_palette_with_its_remapped_key(tmp_path: Path) -> None:
    from rat_tui.config import Config

    app = RatApp(scripted({}, tmp_path, "one"), tmp_path, config=Config(keymap={"session.traffic": "ctrl+y"}))
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.tabs.active_view
        await until(pilot, lambda: view.session.state.status == "ready", "ready")
        commands = {command.title: command for command in app.get_system_commands(app.screen)}
        for title in ("Show or hide the plan", "Review changes", "Permission rules", "Traffic inspector",
                      "Session options (mode, model, …)", "Next mode", "Pick the model", "Next tab",
                      "History", "Agents", "MCP servers", "Open the waiting request"):
            assert title in commands, title
        assert commands["Traffic inspector"].help.endswith("(^y)")  # the key as remapped
        await pilot.press("ctrl+p")
        await pilot.press(*"Review changes")
        await palette_offers(pilot, app, "Review changes")  # the palette searches in a worker
        await pilot.press("enter")
        from rat_tui.ui.screens.change_review import ChangeReviewScreen

        await until(pilot, lambda: isinstance(app.screen, ChangeReviewScreen), "the change review from the palette")


def help_text(app) -> str:
    from rat_tui.ui.screens.help import HelpScreen

    assert isinstance(app.screen, HelpScreen)
    return "\n".join(f"{row.area} | {row.keys} | {row.what} | {row.ident}" for row in app.screen.rows) \
        + f"\nAREA {app.screen.focus_area}"


async def test_f1_shows_the_keys_of_the_focused_area_as_remapped(tmp_path: Path) -> None:
    from rat_tui.config import Config
    from rat_tui.ui.screens.help import HelpScreen
    from rat_tui.ui.screens.history import HistoryScreen

    app = RatApp(scripted({}, tmp_path, "one"), tmp_path, config=Config(keymap={"session.toggle_plan": "f12"}))
    async with app.run_test(size=(100, 40)) as pilot:
        view = app.tabs.active_view
        await until(pilot, lambda: view.session.state.status == "ready", "ready")
        await pilot.press("f1")  # 1. the prompt
        text = help_text(app)
        assert "AREA Prompt" in text and "Prompt | enter | Send the prompt" in text
        assert "Session | f12 | Show or hide the plan | session.toggle_plan" in text  # as remapped, with its id
        assert "MainScreen" not in text
        assert "Everywhere | ^q" in text
        await pilot.press("escape")
        await pilot.press("?")  # `?` on an empty prompt does the same
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert view.composer.text == ""
        await pilot.press("ctrl+t", "f1")  # 2. the transcript
        text = help_text(app)
        assert "AREA Transcript" in text
        assert "Transcript | t | " in text and "Session | x | " in text
        assert "Page Left" not in text and "Page Right" not in text  # Textual's, not the tabs' keys
        assert "| ^pgup | Previous tab | app.previous_tab" in text
        await pilot.press("escape", "ctrl+r")  # 3. a screen: the history
        await until(pilot, lambda: isinstance(app.screen, HistoryScreen), "history")
        await pilot.press("f1")
        text = help_text(app)
        assert "History" in text and "Session |" not in text  # the session's keys do not work there
        await pilot.press("f1")  # F1 again closes
        assert isinstance(app.screen, HistoryScreen)


def test_snapshot_help_screen(snap_compare) -> None:
    from rat_tui.ui.screens.help import HelpScreen, KeyRow

    from .helpers.harness import RatThemedApp

    rows = [KeyRow("Transcript", "t", "Expand or collapse the nearest thought or long update", "transcript.toggle"),
            KeyRow("Transcript", "end", "Jump to the end and follow", "transcript.end"),
            KeyRow("Session", "esc", "Cancel the running turn", "session.cancel"),
            KeyRow("Session", "f2", "Show or hide the plan", "session.toggle_plan"),
            KeyRow("Session", "x", "Expand or collapse the tool call nearest the bottom of the view", "session.expand"),
            KeyRow("Session", "f10, ^o", "Pick the agent's model", "session.model"),
            KeyRow("Everywhere", "f1", "The keys that work where the focus is", "app.help"),
            KeyRow("Everywhere", "^q", "Quit", "app.quit")]

    class HelpApp(RatThemedApp):
        def on_mount(self) -> None:
            self.use_rat_theme()
            self.push_screen(HelpScreen("Transcript", rows))

    assert snap_compare(HelpApp(), terminal_size=(90, 24))


async def test_up_and_down_in_an_empty_prompt_walk_the_history_kept_per_project(tmp_path: Path) -> None:
    project, other = tmp_path / "project", tmp_path / "other"
    project.mkdir()
    other.mkdir()
    script = {"turns": [[{"chunk": "one done"}], [{"chunk": "two done"}]]}
    app = RatApp(scripted(script, tmp_path, "one"), project)
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.tabs.active_view
        await until(pilot, lambda: view.session.state.status == "ready", "ready")
        for prompt, answer in (("first prompt", "one done"), ("second prompt", "two done")):
            await pilot.press(*prompt, "enter")
            await until(pilot, lambda answer=answer: answer in view.transcript.plain_text, answer)
            await until(pilot, lambda: view.session.state.status == "ready", "ready")
    app = RatApp(scripted({}, tmp_path, "one"), project)  # a restart: the history is on disk
    async with app.run_test(size=(100, 30)) as pilot:
        composer = app.tabs.active_view.composer
        await pilot.press("up")
        assert composer.text == "second prompt"
        await pilot.press("up")
        assert composer.text == "first prompt"
        await pilot.press("up")  # the oldest: stays
        assert composer.text == "first prompt"
        await pilot.press("down", "down")
        assert composer.text == ""
        await pilot.press(*"draft", "up")  # a draft: ↑ is the cursor's, the draft stays
        assert composer.text == "draft"
    app = RatApp(scripted({}, tmp_path, "one"), other)  # another project: its own history
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("up")
        assert app.tabs.active_view.composer.text == ""


async def test_a_theme_chosen_in_the_ui_survives_a_restart_with_the_config_comments_kept(tmp_path: Path) -> None:
    from rat_tui.config import load_config

    config_file = tmp_path / "config.toml"
    config_file.write_text('# My settings, explained.\ntheme = "rat-dark"  # the dark one\n\n'
                           '[keymap]\n# my keys\n"session.traffic" = "f8"\n')
    config, _ = load_config(config_file)
    app = RatApp(scripted({}, tmp_path, "one"), tmp_path, config=config, config_path=config_file)
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.tabs.active_view
        await until(pilot, lambda: view.session.state.status == "ready", "ready")
        await pilot.press("ctrl+p")  # the command palette, typed into key by key
        await until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        await pilot.press(*"theme")
        await palette_offers(pilot, app, "Theme")
        await pilot.press("enter")  # Textual's theme picker, a palette of its own
        await until(pilot, lambda: isinstance(app.screen, CommandPalette)
                    and "themes" in app.screen.query_one("#--input Input").placeholder, "the theme picker")
        await pilot.press(*"rat-light")
        await palette_offers(pilot, app, "rat-light")
        await pilot.press("enter")
        await until(pilot, lambda: not isinstance(app.screen, CommandPalette), "the picker closed")
        assert app.theme == "rat-light"
        await pilot.press("f5", "f2")  # follow mode on, plan panel off
    text = config_file.read_text()
    assert "# My settings, explained." in text and "# the dark one" in text and "# my keys" in text
    config, problems = load_config(config_file)
    assert not problems and config.theme == "rat-light" and config.follow and not config.plan_panel
    app = RatApp(scripted({}, tmp_path, "one"), tmp_path, config=config, config_path=config_file)
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.tabs.active_view
        assert app.theme == "rat-light"
        assert view.preview.follow and view.plan_panel.has_class("-hidden")


async def test_ctrl_q_asks_while_a_turn_runs(tmp_path: Path) -> None:
    from rat_tui.ui.screens.confirm import ConfirmScreen

    release = tmp_path / "release"
    app = RatApp(scripted({"turns": [[{"wait_file": str(release)}]]}, tmp_path, "one"), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.tabs.active_view
        await until(pilot, lambda: view.session.state.status == "ready", "ready")
        await pilot.press(*"go", "enter")
        await until(pilot, lambda: view.session.state.status == "working", "working")
        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the quit question")
        await pilot.press("n")
        assert app.is_running and not isinstance(app.screen, ConfirmScreen)
        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the quit question again")
        await press_to_quit(pilot, "y")
        await until(pilot, lambda: not app.is_running, "the app to quit")
        release.touch()
