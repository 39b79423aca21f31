"""Provides KeysFooter: Textual's Footer, composed once with its keys and again only when they change.

Textual's Footer mounts empty, then recomposes after every `bindings_updated` of its screen: a dialog
opening drew an empty footer, laid the screen out, recomposed, and laid it out again; every focus move
(Tab between fields, a dialog taking the focus) unmounted and mounted all the keys again, with a layout
of the whole screen, even when the keys shown were the same. On the 12-field form those layouts took
35-45 ms each (headless), keys typed meanwhile waiting.

KeysFooter composes its keys as it mounts, remembers what it showed (`shown`), and recomposes only when
what it would show differs: another key, label, tooltip, group, or a key enabled or disabled. Changes
that come before a scheduled recompose runs make no second one (it reads the keys then). Textual
recomposes after the next refresh; a footer not yet laid out (the focus landing as the app starts)
recomposes at once, before the first frame: the launch focus used to reach the footer only after the
first frame, twice, and the two recomposes (with their layouts of the screen) landed on the first keys
the user typed, 40-80 ms each. The main screen's footer (`focus_first`) composes nothing until the focus
lands, so it composes once.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from ..textual_ext.widgets import footer_ready


class KeysFooter(Footer):
    """A Footer with its keys from the first frame, recomposed only when they change."""

    def __init__(self, *args: Any, focus_first: bool = False, **kwargs: Any) -> None:
        """`focus_first`: the screen gives the focus as it mounts (the app's main screen, to the composer):
        compose nothing until then, not keys that the focus changes at once (a recompose before the first
        frame, about 30 ms of the launch), and the keys once it has landed (or after the first refresh, if it
        never does)."""
        super().__init__(*args, **kwargs)
        self._focus_first = focus_first
        footer_ready(self)  # compose the keys as it mounts, not empty first
        self.shown: tuple[Any, ...] | None = None  # what the last compose showed (keys())
        self.recomposes = 0  # compositions after the first (tests)
        self._recompose_due = False  # a recompose is scheduled: it reads the keys as they are then

    def keys(self, screen: Screen) -> tuple[Any, ...]:
        """Everything of the screen's active bindings that Footer.compose shows."""
        app = self.app
        shown: Iterable[tuple[Any, ...]] = (
            (binding.key, app.get_key_display(binding), binding.description, binding.action, enabled, tooltip,
             None if binding.group is None else (binding.group.description, binding.group.compact))
            for key, (_node, binding, enabled, tooltip) in screen.active_bindings.items()
            if binding.show or key == app.COMMAND_PALETTE_BINDING)
        return (self.show_command_palette and app.ENABLE_COMMAND_PALETTE, self.compact, self.combine_groups, *shown)

    def on_mount(self) -> None:  # (after Footer's, which subscribes to the screen's bindings)
        if self._focus_first:
            self.call_after_refresh(self._compose_if_empty)

    def _compose_if_empty(self) -> None:
        self._focus_first = False  # from now on, the keys whatever has the focus
        if self.shown is None and not self._recompose_due and self.is_attached:
            self._recompose_now()

    def _recompose_now(self) -> None:
        """Recompose after the current message, not after the next refresh (Footer.bindings_changed)."""
        self._recompose_due = True
        self.call_later(self.recompose)

    def compose(self) -> ComposeResult:
        if self._focus_first and self.shown is None and self.screen.focused is None:
            return  # the focus lands before the first frame: composed then (bindings_changed)
        if self.shown is not None:
            self.recomposes += 1
        self._recompose_due = False
        self.shown = self.keys(self.screen)
        yield from super().compose()

    def bindings_changed(self, screen: Screen) -> None:
        if not (self.is_attached and screen is self.screen):
            return
        if self._recompose_due or self.keys(screen) == self.shown:
            return  # the same keys, or a recompose to come that reads them: nothing to do (no layout)
        if not self.region:
            # Not laid out yet (the focus landing as the app starts): recompose before the first layout,
            # where it costs no layout of its own, rather than after the next refresh (the first frame).
            self._recompose_now()
            return
        super().bindings_changed(screen)
        self._recompose_due = screen.app.app_focus  # Footer schedules one only while the app has the focus
