"""Provides StyledOnce: a screen whose first `ScreenResume` does not restyle every node.

Textual applies the stylesheet to each widget as it mounts; the resume that makes a new screen active
comes right after its widgets mounted and applied the whole stylesheet to all of them again. For the
app's first screen that was about 30 ms of the launch, the largest single item before the first frame;
for a dialog of many widgets (a form asked by the agent) 130-170 ms, keys waiting. Later resumes (after
a modal over it closed, a theme changed meanwhile) restyle as usual.
"""

from __future__ import annotations

from textual import events


class StyledOnce:
    """Mixin for a Screen (before it in the bases)."""

    _resumed_once = False

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.ScreenResume) and not self._resumed_once:
            self._resumed_once = True
            event.refresh_styles = False  # every node was styled as it mounted
        await super().on_event(event)  # type: ignore[misc]
