"""Provides the focus rules of a session view: printable keys typed outside a text field go to the
composer (and the focus with them), unless a binding there wants the key (the transcript's t, x, d, o)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events
from textual.widgets import Input, TextArea
from ..textual_ext.keys import modal_binding_chain

if TYPE_CHECKING:
    from .view import SessionView


def bound_here(view: SessionView, key: str) -> bool:
    """Whether a binding of the focused widget or one of its ancestors (the app too) takes this key."""
    for _namespace, bindings in modal_binding_chain(view.screen):
        if key in bindings.key_to_bindings:
            return True
    return False


def redirect_to_composer(view: SessionView, event: events.Key) -> bool:
    if not event.is_printable or not event.character:
        return False
    focused = view.app.focused
    if focused is None or isinstance(focused, (TextArea, Input)) or view.screen is not view.app.screen:
        return False
    if bound_here(view, event.key):
        return False
    composer = view.composer
    composer.focus()
    composer.post_message(events.Key(event.key, event.character))
    return True
