"""The frame scheduler: when Textual draws a frame of rat's screens.

`FrameScheduler` is the one object that decides whether a frame is drawn now (`draws_now`), for each of the
three ways a frame comes: the screen's timer ticks (`TICK`), a key was handled (`KEY`), the end of what an
agent sent is read (`END`). `FramesMixin` is the app's side of it (before `App` in the app's bases): a key's
frame drawn as soon as the key is handled, the agent's end drawn at once, a removal's follow-up run once, and
every unhandled error logged before Textual prints it.

Textual internals (8.2.8): `Screen._dirty_widgets`, `_layout_required`, `_repaint_required` (what the next frame
draws), `Screen._on_timer_update` (what the screen's timer calls to draw), `Widget._check_refresh` (what a
widget's idle does: its repaint posted to the screen), `Event._stop_propagation`, `App._batch_count`,
`App._display` (every frame goes to the terminal through it), `App._prune` and its `_post_remove`,
`App._handle_exception`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Literal

from textual import events
from textual.dom import NoScreen
from textual.screen import Screen
from textual.scrollbar import ScrollBar
from textual.widget import Widget

from ... import priority

log = logging.getLogger("rat.app")

# Seconds after a key arrives during which the screen's timer draws nothing: the key's own frame comes first. A
# key reaches the focused widget within a few ms of the loop being free; the hold bounds the wait of the screen's
# frames for a key that is never drawn (stopped on its way).
KEY_FRAME_HOLD = 0.05
# A frame `draw_now` asks for (the end of what the agent sent) comes at least this long after the last one it
# asked for: half the screen timer's period (Textual's UPDATE_PERIOD, 1/60 s).
DRAW_NOW_GAP = 1 / 120

Cause = Literal["tick", "key", "end"]
TICK: Cause = "tick"
KEY: Cause = "key"
END: Cause = "end"


class FrameScheduler:
    """Whether a frame is drawn now, and when the frames it allowed were drawn.

    - `TICK` (the screen's timer): not while a key has arrived and is not drawn yet (`KEY_FRAME_HOLD` at most).
      Such a tick would draw what the agent changed since the last frame before the key's own frame: the key's
      echo would wait for the agent's lines.
    - `KEY` (the key is handled): always; what only the agent dirtied is left to the next tick (`held_back`).
    - `END` (an agent's end read, `FramesMixin.draw_now`): when the screen is current, no batch is open, no input
      is on its way and something is to draw. `end_wait` says how long it is put off to keep `DRAW_NOW_GAP`.
    """

    def __init__(self, app: Any) -> None:
        self.app = app
        self.frame_at = 0.0  # when the last frame went to the terminal
        self.end_frame_at = 0.0  # when the last frame `END` allowed was drawn
        self.end_due: asyncio.TimerHandle | None = None  # an END frame put off to keep the gap

    def draws_now(self, screen: Screen, cause: Cause) -> bool:
        if cause == TICK:
            return not priority.key_on_its_way(KEY_FRAME_HOLD)
        if cause == KEY:
            return True
        return (screen.is_current and not self.app._batch_count and not priority.input_wait()
                and bool(screen._dirty_widgets or screen._layout_required or screen._repaint_required))

    def end_wait(self) -> float:
        """Seconds an END frame waits to come DRAW_NOW_GAP after the last one (counted from the last such frame,
        not from any: a prompt's own frame does not put off the answer's)."""
        return self.end_frame_at + DRAW_NOW_GAP - time.monotonic()

    @staticmethod
    def held_back(widget: Widget) -> bool:
        """Whether a key's frame leaves `widget` to the next frame: a `DRAWN_AFTER_KEYS` widget (dirty by the
        agent's doing, such as the transcript) without the focus, or one of its scrollbars (drawn over its
        widget's region, so the compositor would render the widget's rows under it too)."""
        owner = widget.parent if isinstance(widget, ScrollBar) else widget
        return owner is not None and getattr(owner, "DRAWN_AFTER_KEYS", False) and not owner.has_focus


def draw_screen(screen: Screen) -> None:
    """Draw what is dirty on `screen` now: what its timer's tick does (Textual's own, not a held one)."""
    Screen._on_timer_update(screen)


def tick(screen: Screen) -> None:
    """What the screen's timer calls at a tick (a `FramedScreen`'s own, which waits for a key on its way)."""
    screen._on_timer_update()


class FramesMixin:
    """The app's frame methods (mixed in before `App`); the decisions are `self.frames`'."""

    frames: FrameScheduler

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.frames = FrameScheduler(self)
        super().__init__(*args, **kwargs)

    async def on_event(self, event: events.Event) -> None:
        seen = priority.serial()
        bubbled = isinstance(event, events.Key) and event.is_forwarded  # back up from the focused widget
        await super().on_event(event)  # type: ignore[misc]
        if isinstance(event, events.Key) and seen:
            # After the key is handled and the next frame is drawn, the work waiting for it goes on
            # (rat_tui/priority.py). Handled where? A printable key by the focused widget; Backspace, the
            # arrows, Tab... by bindings, once the key has bubbled back up here (App._on_key); a priority
            # binding here at once.
            target = self.focused or self.screen  # type: ignore[attr-defined]
            if bubbled or not event.is_forwarded:
                target.call_later(self.key_handled, target, seen)
            else:
                target.call_later(self.key_dispatched, target, seen, event)

    def key_dispatched(self, target: Widget, seen: int, event: events.Key) -> None:
        """`target` has had the key: handled if it stopped it, else the key bubbles up to the bindings and
        comes back to `on_event` (the work waiting for it would otherwise go on before its action had run:
        Backspace echoed a frame later). `_stop_propagation`: Textual has no public flag for it."""
        if event._stop_propagation:
            self.key_handled(target, seen)

    @staticmethod
    def key_handled(target: Widget, seen: int) -> None:
        """The key `seen` is handled: what `target` repaints goes to the screen now, the screen draws it at
        once, and the work waiting for the key goes on (`input_done`).

        Left to the widget's idle, the repaint reached the screen after the screen had gone idle with nothing
        dirty and run its after-refresh callbacks: the work waiting went on before the key's frame. Left to the
        screen's update timer, the frame came at its next tick (the timer keeps to its grid), with the flood
        running again meanwhile."""
        try:
            screen = target.screen
        except NoScreen:  # the key closed what had the focus (a dialog answered): nothing of it to draw
            priority.input_done(seen)
            return
        target._check_refresh()
        screen.call_later(FramesMixin.draw_key, screen, seen)  # after the repaint just posted to it

    @staticmethod
    def draw_key(screen: Screen, seen: int) -> None:
        """The key's frame. What is dirty only by the agent's doing is left to the next tick of the screen's
        timer (`FrameScheduler.held_back`): drawn in the key's frame, its new lines would come before the key."""
        dirty = screen._dirty_widgets
        held = [widget for widget in dirty if FrameScheduler.held_back(widget)]
        dirty.difference_update(held)
        draw_screen(screen)  # Textual's own tick (the framed screen's waits for this key's frame)
        for widget in held:
            widget.refresh()  # (its own dirty regions stay, the compositor takes them at the next frame)
        priority.input_done(seen)

    def refresh(self, *, repaint: bool = True, layout: bool = False, recompose: bool = False) -> Any:
        """Textual's, but the refresh that ends the removal of a dialog withdrawn before it was drawn (the
        prune's, once the dialog is gone) does not repaint the screen beneath whole
        (`FramedScreen.uncovered_undrawn`)."""
        from .screens import FramedScreen

        stack = self.screen_stack  # type: ignore[attr-defined]
        screen = stack[-1] if stack else None
        if isinstance(screen, FramedScreen) and screen.undrawn_cover and not recompose:
            screen.end_undrawn_cover()
            self.check_idle()  # type: ignore[attr-defined]
            return self
        return super().refresh(repaint=repaint, layout=layout, recompose=recompose)  # type: ignore[misc]

    def _prune(self, *nodes: Widget, parent: Any = None) -> Any:
        """Textual's, but what follows a removal (its parent laid out again, the mouse's widget found anew) runs
        once. Textual runs it at every await of the removal: once from its own `call_next`, once more for a
        caller that awaits it too (`await screen.remove()` as a screen is popped), so the parent was laid out
        twice; for a dialog's removal the parent is the app, and the second layout repainted the whole screen
        beneath a dialog withdrawn before it was drawn, just after the key's frame."""
        removal = super()._prune(*nodes, parent=parent)  # type: ignore[misc]
        follow_up = removal._post_remove
        if follow_up is not None:
            done = False

            def once() -> object:
                nonlocal done
                if done:
                    return None
                done = True
                return follow_up()

            removal._post_remove = once
        return removal

    def _display(self, screen: Screen, renderable: Any) -> None:
        """Every frame goes to the terminal here: its time is kept for `draw_now`."""
        if renderable is not None:
            self.frames.frame_at = time.monotonic()
        super()._display(screen, renderable)  # type: ignore[misc]

    def draw_now(self, widget: Widget) -> None:
        """`widget` shows the end of what the agent sent, all of it read: its frame comes now, or DRAW_NOW_GAP
        after the last frame asked for here if that was sooner. Left to the screen's timer, it came up to two
        timer periods after the frame before (resumed after a pause, the timer skips to the grid point after
        the next one). At most one such frame comes per store delivery, which comes at most a frame after the
        one before (SessionStore): with the timer's own, at most two frames come in a timer's period. A key on
        its way goes first: its own frame, then the timer's, draw what is left (`draw_key`)."""
        try:
            screen = widget.screen
        except NoScreen:
            return
        widget._check_refresh()
        wait = self.frames.end_wait()
        if wait > 0:
            if self.frames.end_due is None:
                self.frames.end_due = asyncio.get_running_loop().call_later(wait, self.draw_end, screen)
        else:
            screen.call_later(self.draw_end, screen)  # after the repaint just posted to it

    def draw_end(self, screen: Screen) -> None:
        self.frames.end_due = None
        if self.frames.draws_now(screen, END):
            tick(screen)
            self.frames.end_frame_at = self.frames.frame_at

    def _handle_exception(self, error: Exception) -> None:
        # Textual prints the traceback on the terminal after exit; the log keeps it too (main() says where).
        log.error("unhandled error: the app stops", exc_info=error)
        super()._handle_exception(error)  # type: ignore[misc]
