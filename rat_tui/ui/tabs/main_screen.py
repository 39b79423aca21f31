"""Provides MainScreen: the app's first screen (the session tabs), styled once at launch, not twice; its
frames wait for a key on its way."""

from __future__ import annotations

from textual.screen import Screen

from ...protocol import priority
from ..styled_once import StyledOnce

# Seconds after a key arrives during which the screen's timer draws nothing (`_on_timer_update`): the key's own
# frame (RatApp._draw_key) comes first. A key reaches the focused widget within a few ms of the loop being
# free; the hold bounds the wait of the screen's frames for a key that is never drawn (stopped on its way).
KEY_FRAME_HOLD = 0.05


class MainScreen(StyledOnce, Screen):
    """Textual's default screen, but its first `ScreenResume` does not restyle every node (StyledOnce), and a tick
    of its timer that comes while a key is on its way draws nothing (`_on_timer_update`)."""

    def _on_timer_update(self) -> None:
        """The screen's timer tick (Textual 8.2): nothing while a key has arrived and is not drawn yet.

        Such a tick draws what the agent changed since the last frame: a replay's or a flood's new lines,
        20-29 ms a frame in traces of load50000's replay. Drawn as the key arrived, before the app had even
        seen it, that frame came first and the key's own after it: 31-41 ms from the key to its echo. Now the
        tick is skipped (the timer keeps ticking: the next one looks again), the key's frame draws the key
        (RatApp._draw_key, which calls Screen's own tick), and the agent's lines come at the tick after it."""
        if priority.key_on_its_way(KEY_FRAME_HOLD):
            return
        super()._on_timer_update()
