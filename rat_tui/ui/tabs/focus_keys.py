"""Provides the focus rules of a session view: printable keys typed outside a text field go to the
composer (and the focus with them). Only in the transcript's navigation mode do its letters run block
actions (t, x, d, o, ...): a mode entered by a key (Ctrl+T, Tab), shown by a bar, left with Esc or Ctrl+T.
A click on the transcript (or a selection) gives it the focus for scrolling and copying, never its
letters: a sentence typed after a click lands whole in the composer."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual import events
from textual.widgets import Input, TextArea
from ..textual_ext.keys import modal_binding_chain

from ..widgets.nav_bar import NavBar

if TYPE_CHECKING:
    from .view import SessionView


def bound_here(view: SessionView, key: str) -> bool:
    """Whether a binding of the focused widget or one of its ancestors (the app too) takes this key."""
    for _namespace, bindings in modal_binding_chain(view.screen):
        if key in bindings.key_to_bindings:
            return True
    return False


class Navigation:
    """Whether the transcript's letters run its block actions, and the bar that says so."""

    def __init__(self, view: SessionView) -> None:
        self.view = view
        self.on = False
        self._since = 0.0  # when it was entered (an event's time)
        self._restore: bool | None = None  # the state to take back when a screen above closes
        self._bar: NavBar | None = None

    def focused(self, event: events.DescendantFocus) -> None:
        if event.widget is not self.view.transcript:
            return
        restore, self._restore = self._restore, None
        self._set(True if restore is None else restore, event.time)

    def blurred(self, event: events.DescendantBlur) -> None:
        if event.widget is not self.view.transcript:
            return
        if self.view.app.screen is not self.view.screen:  # a screen above: the focus comes back as it was
            self._restore = self.on
            return
        self._set(False)

    def clicked(self, event: events.MouseDown) -> None:
        """A click that gave the transcript its focus (the focus came after the press) arms nothing."""
        if self.on and self._since >= event.time:
            self._set(False)

    def toggle(self) -> None:
        """Ctrl+T: prompt -> navigation mode -> prompt; a transcript focused by a click enters the mode."""
        view = self.view
        if view.transcript.has_focus and not self.on:
            self._set(True, time.monotonic())
        elif view.transcript.has_focus:
            view.composer.focus()
        else:
            view.transcript.focus()

    def escape(self, event: events.Key) -> bool:
        """Esc in navigation mode goes back to the prompt (a second Esc cancels the turn as ever)."""
        if not self.on or event.key != "escape" or not self.view.transcript.has_focus:
            return False
        self.view.composer.focus()
        return True

    def _set(self, on: bool, since: float = 0.0) -> None:
        self.on, self._since = on, since
        if self._bar is None and not on:
            return
        if self._bar is None:
            self._bar = NavBar()
            self.view.mount(self._bar, before=self.view.composer)
        self._bar.display = on


def redirect_to_composer(view: SessionView, event: events.Key) -> bool:
    if not event.is_printable or not event.character:
        return False
    focused = view.app.focused
    if focused is None or isinstance(focused, (TextArea, Input)) or view.screen is not view.app.screen:
        return False
    if view.navigation.on and focused is view.transcript and bound_here(view, event.key):
        return False
    composer = view.composer
    composer.focus()
    composer.post_message(events.Key(event.key, event.character))
    return True
