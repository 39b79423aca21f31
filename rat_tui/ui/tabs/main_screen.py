"""Provides MainScreen: the app's first screen (the session tabs), styled once at launch, not twice; its
frames wait for a key on its way, and it is not drawn anew after a dialog that never showed."""

from __future__ import annotations

from typing import Any

from textual import events, messages
from textual.geometry import Region
from textual.screen import Screen

from ... import priority
from ..band_compositor import BandCompositor
from ..styled_once import StyledOnce

# Seconds after a key arrives during which the screen's timer draws nothing (`_on_timer_update`): the key's own
# frame (RatApp._draw_key) comes first. A key reaches the focused widget within a few ms of the loop being
# free; the hold bounds the wait of the screen's frames for a key that is never drawn (stopped on its way).
KEY_FRAME_HOLD = 0.05
# Seconds at most that whole-screen refreshes are left out after a dialog withdrawn before it was drawn (see
# `uncovered_undrawn`): its removal takes a few frames; past this a refresh asked for is never lost.
UNDRAWN_COVER_MAX = 0.5


class MainScreen(StyledOnce, Screen):
    """Textual's default screen, but its first `ScreenResume` does not restyle every node (StyledOnce), a tick
    of its timer that comes while a key is on its way draws nothing (`_on_timer_update`), and it is not drawn
    anew whole when a dialog pushed over it is taken away before it was ever drawn (`uncovered_undrawn`)."""

    # A dialog pushed over this screen is being taken away before it was ever drawn (`uncovered_undrawn`): until
    # its removal is over (the app's refresh that ends it, or UNDRAWN_COVER_MAX), a whole-screen refresh is not
    # needed. `_resume_plain`: its ScreenResume is still to come.
    _undrawn_cover = False
    _resume_plain = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._compositor = BandCompositor()  # (Textual 8.2 makes its own in Screen.__init__, used from the first frame)

    def whole_repaint_due(self) -> bool:
        """Whether the next frame repaints the whole screen (Textual 8.2: the flag a `refresh()` sets, or the screen in
        the set of what that frame draws); asked as a dialog is pushed over it, for `uncovered_undrawn`."""
        return self._repaint_required or self in self._dirty_widgets

    def uncovered_undrawn(self, repaint_before_push: bool) -> None:
        """A dialog pushed over this screen is being popped before it was ever drawn (AgentDialog.withdraw_unseen):
        the terminal still shows this screen as it was last drawn, so it repaints only what changed since.
        `repaint_before_push`: whether a whole repaint was due before the dialog was pushed (it still is).

        Textual 8.2 repaints a screen covered and shown again whole four times over (the push's `refresh()`,
        the resume's, the pop's `_replace_screen`, the removal's `refresh(layout=True)` of the app): the
        transcript, every bar, laid out again, in the frame of the key that withdrew the dialog, 15-20 ms of
        it (bench/stress.py `pattern`, that key's echo 50-67 ms)."""
        if not repaint_before_push:  # (the push's: its flag, or the screen in the set of what the next frame draws)
            self._repaint_required = False
            self._dirty_widgets.discard(self)
        self._undrawn_cover = self._resume_plain = True
        self.set_timer(UNDRAWN_COVER_MAX, self.end_undrawn_cover)

    def end_undrawn_cover(self) -> None:
        """The dialog's removal is over (RatApp.refresh: its last step), or UNDRAWN_COVER_MAX has passed."""
        self._undrawn_cover = False

    def refresh(self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False) -> Any:
        if self._undrawn_cover and not regions and not recompose:
            return self  # the whole screen, as the pop asks: nothing of it was covered on the terminal
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    async def _on_update(self, message: messages.Update) -> None:
        if self._undrawn_cover and message.widget is self:
            message.stop()
            message.prevent_default()  # (the push's repaint of the whole screen, on its way: not Screen's handler)

    def _on_screen_resume(self, event: events.ScreenResume) -> None:
        """Textual 8.2's resume (`Screen._on_screen_resume`), less its repaint of the whole screen, after a dialog
        that was never drawn (`uncovered_undrawn`)."""
        if not self._resume_plain:
            return  # Screen's own handler runs next (Textual calls each class's along the MRO)
        self._resume_plain = False
        event.prevent_default()  # (not Screen's: what follows is it, less its `refresh()`)
        if self.app.SUSPENDED_SCREEN_CLASS:
            self.remove_class(self.app.SUSPENDED_SCREEN_CLASS)
        self.stack_updates += 1
        self.app._refresh_notifications()
        self._update_auto_focus()
        if self.is_attached:
            if event.refresh_styles:
                self.update_node_styles(animate=False)
            if self._size != self.app.size:
                self._refresh_layout(self.app.size)

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
