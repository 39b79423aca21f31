"""Screens whose frames the frame scheduler holds and gates.

`FramedScreen` (the main screen's base): styled once at launch, drawn through the `BandCompositor`; a tick of
its timer while a key is on its way draws nothing (`FrameScheduler.draws_now(TICK)`); and it is not drawn anew
whole when a dialog pushed over it is taken away before it was ever drawn (`uncovered_undrawn`). `DrawGate`: a
screen whose every frame is asked for first (`before_frame`), so a dialog can withdraw before its first one.

Textual internals (8.2.8): `Screen._compositor` (replaced), `Screen._dirty_widgets` and `_repaint_required` (a
whole repaint due), `Screen._on_update` (a widget's repaint posted to the screen), `Screen._on_screen_resume`
(copied, less its repaint), `Screen._on_timer_update` (the timer's tick), `Screen._compositor_refresh` (every
frame of a screen), `App._refresh_notifications`, `Screen._update_auto_focus`, `Screen._refresh_layout`,
`Widget._size`.
"""

from __future__ import annotations

from typing import Any

from textual import events, messages
from textual.geometry import Region
from textual.screen import Screen

from .band_compositor import BandCompositor
from .frames import TICK, FrameScheduler, FramesMixin
from .styled_once import StyledOnce

# Seconds at most that whole-screen refreshes are left out after a dialog withdrawn before it was drawn (see
# `uncovered_undrawn`): its removal takes a few frames; past this a refresh asked for is never lost.
UNDRAWN_COVER_MAX = 0.5


class FramedScreen(StyledOnce, Screen):
    """A screen whose timer waits for a key's frame and that is not drawn anew after a dialog that never showed."""

    # A dialog pushed over this screen is being taken away before it was ever drawn (`uncovered_undrawn`): until
    # its removal is over (the app's refresh that ends it, or UNDRAWN_COVER_MAX), a whole-screen refresh is not
    # needed. `resume_plain`: its ScreenResume is still to come.
    undrawn_cover = False
    resume_plain = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._compositor = BandCompositor()  # (Textual makes its own in Screen.__init__, used from the first frame)

    def whole_repaint_due(self) -> bool:
        """Whether the next frame repaints the whole screen (the flag a `refresh()` sets, or the screen in the set
        of what that frame draws); asked as a dialog is pushed over it, for `uncovered_undrawn`."""
        return self._repaint_required or self in self._dirty_widgets

    def uncovered_undrawn(self, repaint_before_push: bool) -> None:
        """A dialog pushed over this screen is being popped before it was ever drawn (AgentDialog.withdraw_unseen):
        the terminal still shows this screen as it was last drawn, so it repaints only what changed since.
        `repaint_before_push`: whether a whole repaint was due before the dialog was pushed (it still is).

        Textual repaints a screen covered and shown again whole four times over (the push's `refresh()`, the
        resume's, the pop's `_replace_screen`, the removal's `refresh(layout=True)` of the app): the transcript,
        every bar, laid out again, in the frame of the key that withdrew the dialog."""
        if not repaint_before_push:  # (the push's: its flag, or the screen in the set of what the next frame draws)
            self._repaint_required = False
            self._dirty_widgets.discard(self)
        self.undrawn_cover = self.resume_plain = True
        self.set_timer(UNDRAWN_COVER_MAX, self.end_undrawn_cover)

    def end_undrawn_cover(self) -> None:
        """The dialog's removal is over (FramesMixin.refresh: its last step), or UNDRAWN_COVER_MAX has passed."""
        self.undrawn_cover = False

    def refresh(self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False) -> Any:
        if self.undrawn_cover and not regions and not recompose:
            return self  # the whole screen, as the pop asks: nothing of it was covered on the terminal
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    async def _on_update(self, message: messages.Update) -> None:
        if self.undrawn_cover and message.widget is self:
            message.stop()
            message.prevent_default()  # (the push's repaint of the whole screen, on its way: not Screen's handler)

    def _on_screen_resume(self, event: events.ScreenResume) -> None:
        """Textual 8.2.8's resume (`Screen._on_screen_resume`), less its repaint of the whole screen, after a dialog
        that was never drawn (`uncovered_undrawn`)."""
        if not self.resume_plain:
            return  # Screen's own handler runs next (Textual calls each class's along the MRO)
        self.resume_plain = False
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
        """The screen's timer tick: nothing while a key has arrived and is not drawn yet (the scheduler's TICK).

        Such a tick draws what the agent changed since the last frame; drawn as the key arrived, before the app
        had even seen it, that frame came first and the key's own after it. The tick is skipped (the timer keeps
        ticking: the next one looks again), the key's frame draws the key (FramesMixin.draw_key, which calls
        Screen's own tick), and the agent's lines come at the tick after it."""
        app = self.app
        frames = app.frames if isinstance(app, FramesMixin) else FrameScheduler(app)
        if not frames.draws_now(self, TICK):
            return
        super()._on_timer_update()


class DrawGate:
    """Mixin for a Screen (before it): each frame of the screen is drawn only if `before_frame()` says so."""

    def before_frame(self) -> bool:
        return True

    def _compositor_refresh(self) -> None:
        if self.before_frame():
            super()._compositor_refresh()  # type: ignore[misc]
