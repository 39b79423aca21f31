"""Provides MainScreen: the app's first screen (the session tabs), styled once at launch, not twice."""

from __future__ import annotations

from textual import events
from textual.screen import Screen


class MainScreen(Screen):
    """Textual's default screen, but its first `ScreenResume` does not restyle every node.

    The stylesheet is applied to each widget as it mounts; the resume that makes the first screen active
    comes after its widgets mounted and applied the whole stylesheet to all of them again (about 30 ms
    of the launch, the largest single item before the first frame). Later resumes (after a modal screen,
    a theme change meanwhile) restyle as usual.
    """

    _resumed = False

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.ScreenResume) and not self._resumed:
            self._resumed = True
            event.refresh_styles = False  # every node was styled as it mounted
        await super().on_event(event)
