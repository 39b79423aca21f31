"""Widget hooks that need Textual's internals, each behind a public name the widgets use.

Textual internals (8.2.8): `Widget._extend_compose` (Textual's hook for what a screen composes besides its own
widgets: the tooltip, the toasts), `Footer._bindings_ready`, `DOMNode._get_default_css` (a widget's default CSS
as parsed), `DOMNode._pruning` and `MessagePump._closing` (a widget being removed), `ScrollView._size_updated`,
`Widget._scroll_update`, `Widget._size`, `Widget._container_size` (what a layout tells a scroll view), and
`TextArea._on_paste` (a paste, before the text area inserts it).
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.dom import DOMNode
from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import Footer


class ComposedWith:
    """Mixin for a Screen (before it): `compose_also(widgets)` adds widgets composed with the screen's own (as
    Textual composes its tooltip and toasts), so they need no mount (and no layout) of their own afterwards."""

    def compose_also(self, widgets: list[Widget]) -> None:
        """Append what to compose besides `widgets` (the screen's own, as composed)."""

    def _extend_compose(self, widgets: list[Widget]) -> None:
        super()._extend_compose(widgets)  # type: ignore[misc]
        self.compose_also(widgets)


def footer_ready(footer: Footer) -> None:
    """A Footer that composes its keys as it mounts, not empty first."""
    footer.set_reactive(Footer._bindings_ready, True)


class DefaultCSS:
    """Mixin for a widget (before it): `default_css(sources)` may rewrite the widget's default CSS, as
    `(where, css, tie_breaker, scope)` tuples, before Textual parses it."""

    def default_css(self, sources: list[Any]) -> list[Any]:
        return sources

    def _get_default_css(self) -> list[Any]:
        return self.default_css(super()._get_default_css())  # type: ignore[misc]


def going(widget: DOMNode) -> bool:
    """Whether `widget` is being removed (its pruning has begun, or its message pump is closing)."""
    return widget._closing or widget._pruning


class SteadyBars:
    """Mixin for a ScrollView (before it): a layout of the screen that changes nothing the scrollbars show
    leaves them alone. Textual compares the virtual size the compositor gives (the region's, less the bar) with
    the view's own (its lines), which differ whenever the content is not exactly one screen high; so every
    layout of the screen (a toast, a tab label of a new width, a dialog's removal) refreshed the vertical bar,
    and the bar, drawn over the view's region, had the compositor render every visible row of it again. The
    content's own changes update the bars with `update_scrollbars`; a new size, a scrollbar shown or hidden, or
    a new style goes through Textual's as before."""

    # What the scrollbars were last updated for (`update_scrollbars`).
    _bars_for: tuple | None = None

    def _bars_key(self, size: Size) -> tuple:
        styles = self.styles  # type: ignore[attr-defined]
        return (size, self.virtual_size, self.show_vertical_scrollbar,  # type: ignore[attr-defined]
                self.show_horizontal_scrollbar, styles.gutter.totals,  # type: ignore[attr-defined]
                styles.overflow_x, styles.overflow_y, styles.scrollbar_size_vertical,
                styles.scrollbar_size_horizontal, styles.scrollbar_gutter)

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True) -> bool:
        if self._size == size and self._bars_for == self._bars_key(size):  # type: ignore[attr-defined]
            return self._container_size != container_size  # (what Textual returns when nothing changed)
        return super()._size_updated(size, virtual_size, container_size, layout)  # type: ignore[misc]

    def _scroll_update(self, virtual_size: Size) -> None:
        super()._scroll_update(virtual_size)  # type: ignore[misc]
        self._bars_for = self._bars_key(self._size)  # type: ignore[attr-defined]

    def update_scrollbars(self, virtual_size: Size) -> None:
        """The content's size changed to `virtual_size`: the scrollbars follow (what Textual's layout does)."""
        self._scroll_update(virtual_size)


class PasteFirst:
    """Mixin for a TextArea (before it): `take_paste(event)` sees a paste before the text area inserts it;
    True: it took it (the text area inserts nothing)."""

    async def take_paste(self, event: events.Paste) -> bool:
        return False

    async def _on_paste(self, event: events.Paste) -> None:
        if not await self.take_paste(event):
            await super()._on_paste(event)  # type: ignore[misc]


__all__ = ["ComposedWith", "DefaultCSS", "PasteFirst", "SteadyBars", "footer_ready", "going"]
