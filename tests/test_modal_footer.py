"""The footer under a modal lists the modal's keys, not the session's (ui/screens/modal_footer.py)."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest
from textual.screen import ModalScreen

import rat_tui.ui
from rat_tui.app import RatApp
from rat_tui.ui.screens.confirm import ConfirmScreen
from rat_tui.ui.screens.modal_footer import ModalFooter
from rat_tui.ui.screens.permission import PermissionScreen

from .helpers.app import scripted_named as scripted
from .helpers.app import screen_text, until, view

PERMISSION = {"request": {"id": "perm-1", "method": "session/request_permission", "params": {
    "sessionId": "$SESSION",
    "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                {"optionId": "reject", "name": "Reject", "kind": "reject_once"}],
    "toolCall": {"toolCallId": "rm-1", "title": "rm -rf build", "kind": "execute"}}}}


def _app_screens(base: type = ModalScreen) -> list[type]:
    """Every subclass of `base` the app defines (every module of its UI imported first)."""
    for module in pkgutil.walk_packages(rat_tui.ui.__path__, "rat_tui.ui."):
        importlib.import_module(module.name)
    found, todo = [], [base]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith("rat_tui."):
                found.append(sub)
    return found


def test_every_screen_of_the_app_is_styled_once() -> None:
    """StyledOnce: no screen of the app restyles every node on its first resume (its widgets were styled
    as they mounted), nor lays itself out again for its empty toast rack."""
    from textual.screen import Screen

    from rat_tui.ui.textual_ext.styled_once import StyledOnce

    found = _app_screens(Screen)
    assert len(found) > 20
    assert [cls.__qualname__ for cls in found if not issubclass(cls, StyledOnce)] == []


def test_every_modal_screen_of_the_app_has_its_own_footer() -> None:
    screens = _app_screens()
    assert len(screens) > 10
    assert [cls.__qualname__ for cls in screens if not issubclass(cls, ModalFooter)] == []


def footer_line(app: RatApp) -> str:
    return screen_text(app).splitlines()[-1]


@pytest.mark.slow
async def test_the_footer_under_a_dialog_shows_the_dialogs_keys(tmp_path: Path, record_file: Path) -> None:
    turn = [PERMISSION, {"chunk": "Removed."}, {"wait_file": str(tmp_path / "never")}]
    app = RatApp(scripted({"turns": [turn]}, tmp_path), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: view(app).status_bar.state_word == "ready", "ready")
        await until(pilot, lambda: "Plan" in footer_line(app), "the session's keys in the footer")
        line = footer_line(app)
        assert "Keys" in line and "Cancel turn" not in line, line  # F1 offered; nothing to cancel while idle
        await pilot.press(*"clean up", "enter")
        await until(pilot, lambda: isinstance(app.screen, PermissionScreen), "the permission dialog")
        await until(pilot, lambda: "Pick" in footer_line(app), "the dialog's footer")
        line = footer_line(app)
        assert "y n Answer" in line and "Pick" in line, line  # no "always" offered: no `a` key shown
        assert "Option 1" not in line, line
        assert "Cancel turn" not in line and "Plan" not in line, line
        await pilot.press("y")
        await until(pilot, lambda: "Removed." in view(app).transcript.plain_text, "the answer")
        await until(pilot, lambda: not isinstance(app.screen, PermissionScreen), "the dialog closed")
        await until(pilot, lambda: "Cancel turn" in footer_line(app), "the session's keys again")
        # Another modal: closing the tab while the turn runs asks first.
        await pilot.press("alt+w")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        await until(pilot, lambda: "Yes" in footer_line(app), "the question's footer")
        line = footer_line(app)
        assert "Yes" in line and "No" in line and "Cancel turn" not in line, line
        await pilot.press("n")
        await until(pilot, lambda: not isinstance(app.screen, ConfirmScreen), "the question closed")


async def test_a_dialog_is_styled_as_it_mounts_and_restyled_only_when_it_comes_back() -> None:
    """StyledOnce (every modal, through ModalFooter): the resume that first shows a dialog does not apply
    the whole stylesheet to its nodes again (they were styled as they mounted: 130-170 ms for the agent's
    big form); a later resume that asks for it restyles as Textual does."""
    from textual.app import App

    from rat_tui.ui.textual_ext.styled_once import StyledOnce

    restyled: list[str] = []

    class Watched(ConfirmScreen):
        def update_node_styles(self, animate: bool = True) -> None:
            restyled.append(type(self).__name__)
            super().update_node_styles(animate)

    app = App()
    async with app.run_test(size=(80, 24)) as pilot:
        first = Watched("Delete", "Delete it?")
        app.push_screen(first)
        await until(pilot, lambda: app.screen is first and first.query("#dialog"), "the dialog")
        await pilot.pause()
        assert isinstance(first, StyledOnce) and restyled == []
        assert first.query_one("#dialog").styles.border_top[0] == "thick"  # styled all the same
        # A later resume that asks for a restyle (Textual's after the app was suspended, Ctrl+Z) gets one.
        from textual import events

        first.post_message(events.ScreenResume())
        await until(pilot, lambda: restyled == ["Watched"], "the dialog restyled")


async def test_a_screen_shown_without_toasts_is_not_laid_out_again_for_its_toast_rack(monkeypatch) -> None:
    """StyledOnce composes the toast rack hidden: each resume shows the app's toasts (none here) by setting
    the rack's `display` inline, which a screen shown the first time took for a change and laid itself out
    again for (the app's first screen, and every dialog as it opened). A toast still shows."""
    from textual.app import App
    from textual.widgets._toast import ToastRack

    from rat_tui.ui.tabs.main_screen import MainScreen

    relayouts: list[str] = []
    refresh = ToastRack.refresh

    def watched(self, *args, layout: bool = False, **kwargs):
        if layout and self.is_mounted:
            relayouts.append(type(self.screen).__name__)
        return refresh(self, *args, layout=layout, **kwargs)

    monkeypatch.setattr(ToastRack, "refresh", watched)

    class Main(App):
        def get_default_screen(self) -> MainScreen:
            return MainScreen(id="_default")

    app = Main()
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        assert relayouts == []  # the app's first screen
        dialog = ConfirmScreen("Delete", "Delete it?")
        app.push_screen(dialog)
        await until(pilot, lambda: app.screen is dialog and dialog.query("#dialog"), "the dialog")
        await pilot.pause()
        assert relayouts == []
        app.notify("a toast")  # a toast still shows, on the screen on top
        await until(pilot, lambda: dialog.query_one(ToastRack).display, "the toast rack shown")
        assert relayouts and set(relayouts) == {"ConfirmScreen"}
