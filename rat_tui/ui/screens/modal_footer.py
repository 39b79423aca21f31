"""Provides ModalFooter: a modal screen's own footer, showing the modal's keys.

Textual's Footer shows the bindings of the screen it is mounted in. The app's footer belongs to the
session screen, and a modal leaves it visible under its dimmed backdrop: it went on listing the session's
keys (Cancel turn, Plan, …), which do nothing there. A modal with this mixin composes a footer of its own
(a KeysFooter, with its own widgets), docked at the bottom over the app's, so the last line lists the keys
that work in the modal. tests/test_modal_footer.py checks that every modal screen of the app has it. Every modal is also
StyledOnce through it: its first resume does not restyle what was styled as it mounted.
"""

from __future__ import annotations

from textual.widget import Widget
from textual.widgets import Footer

from ..textual_ext.styled_once import StyledOnce
from ..textual_ext.widgets import ComposedWith
from ..widgets.keys_footer import KeysFooter

FOOTER_ROWS = 1
"""The rows the modal's own footer takes at the bottom (a dialog sizing itself leaves them)."""


class ModalFooter(ComposedWith, StyledOnce):
    """Mixin for a ModalScreen (before it in the bases): a footer of its own, composed with its widgets."""

    def compose_also(self, widgets: list[Widget]) -> None:
        """The footer is composed with the modal's own widgets: mounted afterwards, it cost one more layout of
        the whole dialog as it opened."""
        super().compose_also(widgets)
        if not any(isinstance(widget, Footer) for widget in widgets):
            widgets.append(KeysFooter())
