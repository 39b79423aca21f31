"""Provides StyledOnce: a screen whose first `ScreenResume` does not restyle every node.

Textual applies the stylesheet to each widget as it mounts; the resume that makes a new screen active
comes right after its widgets mounted and applied the whole stylesheet to all of them again. For the
app's first screen that was about 30 ms of the launch, the largest single item before the first frame;
for the agent's 1,000-field form 42-67 ms headless (130-170 ms in the stall logs of the form workload,
the warm-up sharing the GIL), keys waiting. A later resume restyles when Textual asks it to (after the
app was suspended; a screen popped back to is not restyled by Textual either way).

Its toast rack is also composed hidden: Textual's CSS hides it, but each resume shows the app's toasts
(none, as a rule) by setting `display` inline, which a screen shown the first time took for a change and
laid itself out again for (about 25 ms for the app's first screen, right after its first frame).
"""

from __future__ import annotations

from textual import events
from textual.widget import Widget
from textual.widgets._toast import ToastRack


class StyledOnce:
    """Mixin for a Screen (before it in the bases)."""

    _resumed_once = False

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.ScreenResume) and not self._resumed_once:
            self._resumed_once = True
            event.refresh_styles = False  # every node was styled as it mounted
        await super().on_event(event)  # type: ignore[misc]

    def _extend_compose(self, widgets: list[Widget]) -> None:
        super()._extend_compose(widgets)  # type: ignore[misc]
        for widget in widgets:
            if isinstance(widget, ToastRack):
                widget.display = False  # what ToastRack.show sets with no toast: then no change, no layout
