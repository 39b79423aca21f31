"""KeysFooter (ui/widgets/keys_footer.py): the keys from the first compose, a recompose only when they change."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Button, Input
from textual.widgets._footer import FooterKey

from rat_tui.ui.widgets.keys_footer import KeysFooter


class Saver(Button):
    BINDINGS = [Binding("ctrl+s", "save", "Save")]

    def action_save(self) -> None:
        self.app.saved = True


class FooterApp(App):
    BINDINGS = [Binding("ctrl+q", "quit", "Quit"), Binding("f2", "hidden", "Hidden", show=False)]

    def __init__(self) -> None:
        super().__init__()
        self.saved = False

    def compose(self) -> ComposeResult:
        yield Input(id="first")
        yield Input(id="second")
        yield Saver("save", id="saver")
        yield KeysFooter()


def shown(app: App) -> list[str]:
    return [key.description for key in app.query(FooterKey)]


async def test_the_keys_are_in_the_first_compose_and_the_same_keys_are_not_composed_again() -> None:
    app = FooterApp()
    async with app.run_test() as pilot:
        footer = app.query_one(KeysFooter)
        first = shown(app)
        await pilot.pause()
        assert "Quit" in shown(app) and "Hidden" not in shown(app)
        assert first == shown(app)  # composed with its keys, not empty then recomposed
        assert footer.recomposes == 0
        app.query_one("#first", Input).focus()
        await pilot.pause()
        for key in ("tab", "shift+tab", "tab"):  # moves between the two inputs: the same keys shown
            await pilot.press(key)
            await pilot.pause()
        assert app.focused is app.query_one("#second")
        assert footer.recomposes == 0 and "Save" not in shown(app)


async def test_a_focus_that_brings_its_own_key_recomposes_the_footer() -> None:
    app = FooterApp()
    async with app.run_test() as pilot:
        footer = app.query_one(KeysFooter)
        app.query_one("#second", Input).focus()
        await pilot.pause()
        await pilot.press("tab")  # onto the button, whose Save key the footer must now show
        await pilot.pause()
        assert app.focused is app.query_one("#saver")
        assert "Save" in shown(app) and footer.recomposes == 1
        await pilot.press("ctrl+s")
        assert app.saved
        await pilot.press("shift+tab")  # away again: Save goes
        await pilot.pause()
        assert "Save" not in shown(app) and footer.recomposes == 2


def test_no_screen_of_the_app_composes_textual_s_own_footer() -> None:
    """Every footer of the app is a KeysFooter (Textual's recomposes, and lays the screen out, at every
    focus move): a `Footer()` call anywhere in the UI's source fails this."""
    import ast
    from pathlib import Path

    import rat_tui.ui

    found = []
    for path in Path(rat_tui.ui.__path__[0]).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                if name == "Footer":
                    found.append(f"{path.name}:{node.lineno}")
    assert found == []


class FocusFirstApp(App):
    """A screen that gives the focus as it mounts (as the app's main screen gives it to the composer), or not."""

    AUTO_FOCUS = None
    BINDINGS = [Binding("ctrl+q", "quit", "Quit")]

    def __init__(self, focus: bool) -> None:
        super().__init__()
        self.focus_at_mount = focus
        self.saved = False
        self.first_frame: list[str] | None = None

    def compose(self) -> ComposeResult:
        yield Saver("save", id="saver")
        yield KeysFooter(focus_first=True)

    def on_mount(self) -> None:
        if self.focus_at_mount:
            self.screen.set_focus(self.query_one(Saver))

    def _display(self, screen, renderable) -> None:  # noqa: ANN001 (Textual's own signature)
        if renderable is not None and self.first_frame is None:
            self.first_frame = shown(self)
        return super()._display(screen, renderable)


async def test_a_footer_that_waits_for_the_focus_composes_once_with_the_focused_keys() -> None:
    app = FocusFirstApp(focus=True)
    async with app.run_test() as pilot:
        await pilot.pause()
        footer = app.query_one(KeysFooter)
        assert app.first_frame is not None and "Save" in app.first_frame and "Quit" in app.first_frame
        assert footer.recomposes == 0  # one compose, once the focus landed: none with the keys before it


async def test_a_footer_that_waits_for_a_focus_that_never_comes_shows_the_keys_all_the_same() -> None:
    app = FocusFirstApp(focus=False)
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.pause()
        assert app.focused is None
        assert "Quit" in shown(app) and app.query_one(KeysFooter).recomposes == 0
