"""Provides StyledOnce: a screen whose first `ScreenResume` does not restyle every node.

Textual applies the stylesheet to each widget as it mounts; the resume that makes a new screen active
comes right after its widgets mounted and applied the whole stylesheet to all of them again. For the
app's first screen that was about 30 ms of the launch, the largest single item before the first frame;
for the agent's 1,000-field form 42-67 ms headless (130-170 ms in the stall logs of the form workload,
the warm-up sharing the GIL), keys waiting. A later resume restyles when Textual asks it to (after the
app was suspended; a screen popped back to is not restyled by Textual either way).
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
