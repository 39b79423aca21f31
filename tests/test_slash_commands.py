"""Slash commands: the composer's completion menu, the command-palette provider, and a snapshot."""

from __future__ import annotations

from typing import Any

from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.command import CommandPalette
from textual.message import Message
from textual.widgets import Static, TextArea

from rat_tui.ui.palette.slash_commands import SlashCommandsProvider
from rat_tui.ui.widgets.command_menu import CommandMenu, command_hint, match_commands
from rat_tui.ui.widgets.prompt import PromptComposer

from .helpers.app import palette_offers, screen_text, steady, until
from .helpers.harness import RatThemedApp

# The shape claude-agent-acp sends (acp-traces/claude-agent-acp.jsonl), shortened.
AGENT_COMMANDS: list[dict[str, Any]] = [
    {"name": "debug", "description": "Enable debug logging for this session and help diagnose issues (bundled)",
     "input": {"hint": "[issue description]"}},
    {"name": "compact", "description": "Clear conversation history but keep a summary in context.",
     "input": {"hint": "<optional custom summarization instructions>"}},
    {"name": "context", "description": "Show current context usage", "input": None},
    {"name": "help", "description": "Show help and the commands available"},
    {"name": "init", "description": "Initialize a new CLAUDE.md file with codebase documentation", "input": None},
    {"name": "review", "description": "Review a pull request", "input": None},
]


class ComposerApp(RatThemedApp):
    """A stand-in session: something above, the composer, a status line; records what the composer posts."""

    CSS = "#above { height: 1fr; }"
    COMMANDS = App.COMMANDS | {SlashCommandsProvider}
    # What SessionView binds: Escape must not reach it while the menu is open.
    BINDINGS = [Binding("escape", "cancel_turn", "Cancel turn")]

    def __init__(self, commands: list[dict[str, Any]] | None = None) -> None:
        super().__init__()
        self.agent_commands = AGENT_COMMANDS if commands is None else commands
        self.cancels = 0
        self.submitted: list[str] = []
        self.posted: list[Message] = []

    def compose(self) -> ComposeResult:
        yield Static("The transcript would be here.", id="above")
        yield PromptComposer(id="composer")
        yield Static("status bar")

    def on_mount(self) -> None:
        self.use_rat_theme()
        composer = self.query_one(PromptComposer)
        composer.set_commands(self.agent_commands)
        composer.focus()

    def on_prompt_composer_submitted(self, event: PromptComposer.Submitted) -> None:
        self.submitted.append(event.text)

    def action_cancel_turn(self) -> None:
        self.cancels += 1


def parts(app: ComposerApp) -> tuple[PromptComposer, CommandMenu]:
    composer = app.query_one(PromptComposer)
    return composer, composer.menu


def test_match_commands_prefix_first_then_fuzzy() -> None:
    assert [c["name"] for c in match_commands(AGENT_COMMANDS, "")] == [c["name"] for c in AGENT_COMMANDS]
    assert [c["name"] for c in match_commands(AGENT_COMMANDS, "co")] == ["compact", "context"]
    assert [c["name"] for c in match_commands(AGENT_COMMANDS, "CON")] == ["context"]
    # "rv" is no prefix, but review has r…v in order.
    assert [c["name"] for c in match_commands(AGENT_COMMANDS, "rv")] == ["review"]
    assert match_commands(AGENT_COMMANDS, "zz") == []
    assert command_hint(AGENT_COMMANDS[0]) == "[issue description]"
    assert command_hint(AGENT_COMMANDS[2]) == "" and command_hint(AGENT_COMMANDS[3]) == ""


async def test_slash_opens_menu_tab_completes_enter_sends() -> None:
    app = ComposerApp()
    async with app.run_test(size=(80, 24), message_hook=lambda m: app.posted.append(m)) as pilot:
        composer, menu = parts(app)
        assert not menu.is_open
        await pilot.press("/")
        await pilot.pause()
        assert menu.is_open
        assert [c["name"] for c in menu.matches] == [c["name"] for c in AGENT_COMMANDS]
        # Above the composer, as wide as it.
        assert menu.region.bottom == composer.region.y and menu.region.width == composer.region.width
        await pilot.press("h", "e")
        await pilot.pause()
        assert [c["name"] for c in menu.matches] == ["help"] and menu.selected_name == "help"
        await pilot.press("tab")
        await pilot.pause()
        assert composer.text == "/help " and composer.cursor_location == (0, 6)
        assert not menu.is_open and composer.has_focus  # Tab completed, it did not move focus
        await pilot.press("m", "e")
        await pilot.press("enter")
        await pilot.pause()
        assert app.submitted == ["/help me"]


async def test_arrows_move_and_enter_completes_instead_of_sending() -> None:
    app = ComposerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        composer, menu = parts(app)
        await pilot.press("/", "c")
        steady(pilot.app)
        await pilot.pause()
        assert [c["name"] for c in menu.matches][:2] == ["compact", "context"]
        assert menu.selected_name == "compact"
        await pilot.press("down")
        assert menu.selected_name == "context"
        await pilot.press("up", "up")  # wraps around
        assert menu.selected_name == menu.matches[-1]["name"]
        await pilot.press("down", "down")
        await pilot.press("enter")
        await pilot.pause()
        assert composer.text == "/context " and app.submitted == []
        assert composer.cursor_location == (0, 9)  # the cursor did not move with up/down either


async def test_escape_closes_the_menu_and_goes_no_further() -> None:
    app = ComposerApp()
    async with app.run_test(size=(80, 24), message_hook=lambda m: app.posted.append(m)) as pilot:
        composer, menu = parts(app)
        await pilot.press("/", "d")
        await pilot.pause()
        assert menu.is_open
        app.posted.clear()
        await pilot.press("escape")
        await pilot.pause()
        assert not menu.is_open and app.cancels == 0
        assert composer.text == "/d" and composer.has_focus
        ours = (PromptComposer.Submitted, TextArea.Changed, TextArea.SelectionChanged)
        assert not [m for m in app.posted if isinstance(m, ours)]
        # The Key was posted to the app and the composer only: it did not bubble back up.
        posted_while_open = sum(isinstance(m, events.Key) for m in app.posted)
        # Closed, Enter sends what was typed; another Escape is the session's again, and bubbles.
        await pilot.press("enter")
        await pilot.pause()
        assert app.submitted == ["/d"]
        app.posted.clear()
        await pilot.press("escape")
        assert app.cancels == 1
        assert sum(isinstance(m, events.Key) for m in app.posted) > posted_while_open
        # Typing again reopens it.
        await pilot.press("e")
        await pilot.pause()
        assert menu.is_open and menu.selected_name == "debug"


async def test_menu_only_while_typing_a_leading_command_name() -> None:
    app = ComposerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        composer, menu = parts(app)
        await pilot.press("a", "/")
        await pilot.pause()
        assert not menu.is_open  # not at the start
        composer.clear()
        await pilot.press("/", "z", "z")
        await pilot.pause()
        assert not menu.is_open  # nothing matches
        composer.clear()
        await pilot.press("/", "i", "n", "i", "t", "space")
        await pilot.pause()
        assert not menu.is_open  # arguments now
        await pilot.press("home")
        await pilot.press("right")
        await pilot.pause()
        assert menu.is_open and menu.query == ""  # back inside the name: the query is what precedes the cursor
        await pilot.press("escape")
        composer.set_commands([])
        await pilot.press("end", "backspace")
        await pilot.pause()
        assert not menu.is_open  # no commands, no menu


async def test_completion_keeps_arguments_and_new_commands_refresh() -> None:
    app = ComposerApp(commands=[])
    async with app.run_test(size=(80, 24)) as pilot:
        composer, menu = parts(app)
        await pilot.press("/")
        await pilot.pause()
        assert not menu.is_open
        composer.set_commands(AGENT_COMMANDS)  # the agent's available_commands_update arrives late
        await pilot.pause()
        assert menu.is_open and len(menu.matches) == len(AGENT_COMMANDS)
        composer.clear()
        composer.insert("/re the bug")
        composer.move_cursor((0, 3))
        await pilot.pause()
        assert menu.selected_name == "review"
        await pilot.press("tab")
        assert composer.text == "/review the bug" and composer.cursor_location == (0, 8)


async def test_palette_lists_commands_and_inserts_into_composer() -> None:
    app = ComposerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        composer, _ = parts(app)
        await pilot.press("f", "i", "x")
        provider = SlashCommandsProvider(app.screen)
        provider._init_success = True
        found = [hit.text async for hit in provider.search("/ini")]
        assert found == ["/init"]
        discovered = [hit.text async for hit in provider.discover()]
        assert discovered[0] == "/debug [issue description]" and len(discovered) == len(AGENT_COMMANDS)

        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        await pilot.press(*"/review")
        await palette_offers(pilot, app, "/review")
        await pilot.press("enter")
        await until(pilot, lambda: composer.text.startswith("/review"), "the command in the composer")
        assert composer.text == "/review fix" and composer.has_focus
        assert composer.cursor_location == (0, 8)


def test_snapshot_composer_with_menu(snap_compare) -> None:
    async def run_before(pilot) -> None:
        await pilot.press("/", "c")
        steady(pilot.app)
        await pilot.pause()

    assert snap_compare(ComposerApp(), terminal_size=(80, 24), run_before=run_before)


async def test_a_hint_is_cut_only_when_the_menu_has_no_room_for_it() -> None:
    compact = "/compact <optional custom summarization instructions>"
    for width, whole in ((120, True), (60, False)):
        app = ComposerApp()
        async with app.run_test(size=(width, 24)) as pilot:
            _composer, menu = parts(app)
            for key in "/co":
                await pilot.press(key)
            await until(pilot, lambda menu=menu: menu.is_open, "the menu")
            await pilot.pause()
            shown = screen_text(app)
            assert (compact in shown) is whole, shown
            assert ("/compact <optional" in shown) and ("…" in shown) is not whole, shown
