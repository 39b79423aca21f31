"""Provides Dialog (the shared modal base: a centred box), AgentDialog (a dialog the agent raised, which
takes no key typed before it appeared or within a grace period after) and KeyGuard (the app mixin that
holds those keys back).

Why a grace period: a key typed less than a human reaction time after a dialog appeared cannot be an
answer to it; it was typed for something else (the prompt). At 100 words a minute keys come about 120 ms
apart and a fast typist's bursts 60–80 ms apart; a simple visual reaction takes 200–250 ms and reading a
dialog's first line to choose an answer well over 400 ms. GRACE_SECONDS = 0.5 covers four keys of a
burst already in flight while leaving a deliberate answer (which needs reading the dialog) untouched.

The full grace is for someone who was typing as the dialog came (a key in the TYPING_WINDOW before it;
for a dialog opened by a key, another key besides that one), and the dialog says so ("reading…" under
its box) until it is over. Someone who was not typing sees the dialog and answers: a key is theirs once
QUICK_GRACE has passed, less than anyone reacts in, so a `y` 0.3 s after a dialog appeared answers it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any, TypeVar

from textual import events
from textual.screen import ModalScreen

from ... import priority
from ..textual_ext.dismiss_once import DismissOnce
from ..textual_ext.screens import DrawGate, FramedScreen
from .modal_footer import ModalFooter

T = TypeVar("T")

GRACE_SECONDS = 0.5
QUICK_GRACE = 0.15
TYPING_WINDOW = 1.0
READING = "reading… keys typed now go to your prompt"


class Withdrawn:
    """What an AgentDialog dismisses with when a key typed for something else reached it: the request
    goes back to waiting (announced); the key went on to where it was meant to go (`key_sink`)."""


class Dialog(ModalFooter, ModalScreen[T]):
    """A modal dialog: the screen dims what lies under it and centres one box, `#dialog`.

    Every modal of the app derives from it, so the look (and the footer under it, which shows the
    dialog's keys and not the session's) is defined once. `-warning` / `-accent` on the screen pick the
    border colour.
    """

    DEFAULT_CSS = """
    Dialog {
        align: center middle;
        & > #dialog {
            width: 90%;
            max-width: 110;
            height: auto;
            max-height: 95%;
            padding: 0 1;
            border: round $accent;
            background: $surface;
        }
        &.-warning > #dialog { border: round $warning; }
        & #header { text-style: bold; }
        & #hint, & .keys { color: $text-muted; }
    }
    """


class AgentDialog(DismissOnce, DrawGate, Dialog[T]):
    """A dialog the agent raised (permission, form, question, login): only a deliberate key answers it.

    Keys stamped earlier than GRACE_SECONDS after the dialog was mounted are held back by KeyGuard.
    With a `key_sink` (the dialog opened by itself, not at the user's request) such a key withdraws
    the dialog: the key goes to the sink (the composer) and the dialog dismisses with Withdrawn(), so
    the caller puts the request back among the waiting ones. Otherwise the key is dropped with a bell.
    """

    key_sink: Callable[[events.Key], None] | None = None
    armed_at: float = math.inf
    # `priority.keys_arrived()` as the dialog was pushed by itself (RequestGate._show); None once it has shown.
    keys_at_push: int | None = None
    # Whether the screen beneath had a whole repaint due as the dialog was pushed (RequestGate._show): withdrawn
    # before it was drawn, the dialog leaves that screen as it was (`withdraw_unseen`).
    repaint_beneath = True

    typing = True  # the user was typing as the dialog came: the full grace, shown (`on_mount`)

    def on_mount(self) -> None:
        # A dialog opened by a key (Ctrl+G) counts that key as not typing.
        self.typing = priority.keys_within(TYPING_WINDOW) > (0 if self.key_sink is not None else 1)
        self.rearm(GRACE_SECONDS if self.typing else min(QUICK_GRACE, GRACE_SECONDS))
        if self.typing and GRACE_SECONDS > 0:
            self._show_reading(True)
            self.set_timer(GRACE_SECONDS, lambda: self._show_reading(False))

    def _show_reading(self, on: bool) -> None:
        """The grace, visible: a line under the dialog's box while keys still go to the prompt."""
        for box in self.query("#dialog"):
            box.border_subtitle = READING if on else ""

    def before_frame(self) -> bool:
        """Whether to draw it (DrawGate: asked before every frame of the screen). Before its first frame: a key
        that reached the driver after the dialog was pushed was typed with the dialog nowhere on screen, so the
        dialog withdraws (`Withdrawn`: the request waits, announced) without being drawn, and the key goes where
        it was meant to, as KeyGuard sends a key of the grace period. Drawn first, the dialog's first frame (the
        screen beneath dimmed) and the frame that took it away again came before the key's echo."""
        if self.withdraw_unseen():
            return False
        self.keys_at_push = None
        return True

    def withdraw_unseen(self) -> bool:
        """Withdraw the dialog if it was pushed by itself, is not drawn yet, and a key arrived since it was pushed
        (see `before_frame`). Whether it did."""
        pushed = self.keys_at_push
        if pushed is None or self.key_sink is None or self.dismissed or priority.keys_arrived() == pushed:
            return False
        self.keys_at_push = None
        stack = self.app.screen_stack
        beneath = stack[-2] if len(stack) > 1 and stack[-1] is self else None
        if isinstance(beneath, FramedScreen):
            beneath.uncovered_undrawn(self.repaint_beneath)  # (not drawn anew whole: nothing of it was covered)
        self.dismiss(Withdrawn())
        return True

    def rearm(self, grace: float | None = None) -> None:
        """Start (again) the grace period (GRACE_SECONDS unless given): the dialog just showed something new."""
        self.armed_at = time.monotonic() + (GRACE_SECONDS if grace is None else grace)

    def guard_key(self, event: events.Key) -> bool:
        """Whether KeyGuard must hold this key back from the dialog (True: held back)."""
        if self.dismissed and self.key_sink is not None:
            self.key_sink(event)  # withdrawn, still being popped: typing goes on into the composer
            return True
        if event.time >= self.armed_at or GRACE_SECONDS <= 0:
            return False  # (no grace at all: not even before the first paint)
        if self.key_sink is not None:
            self.key_sink(event)
            self.dismiss(Withdrawn())
        else:
            self.app.bell()
        return True


class KeyGuard:
    """App mixin: a key reaches an AgentDialog only once it has been on screen for the grace period.

    It runs before any binding (priority ones included), because a dialog's single-key answers are
    bindings; keys typed after a dialog was withdrawn, until it is gone, go where they were meant to.
    """

    def key_arrived(self) -> None:
        """A key has just reached the driver (called on the loop as it arrives, ahead of the key's own hops): a
        dialog that opened by itself and is not drawn yet withdraws at once, not after the rest of its mounting
        (in a trace of bench/stress.py `pattern`, 40-60 ms of its callbacks came before the key's echo)."""
        try:
            screen = self.screen  # type: ignore[attr-defined]
        except Exception:  # no screen (the app is starting or ending): nothing to withdraw
            return
        if isinstance(screen, AgentDialog):
            screen.withdraw_unseen()

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key):
            screen = self.screen  # type: ignore[attr-defined]
            if isinstance(screen, AgentDialog) and screen.guard_key(event):
                return
        await super().on_event(event)  # type: ignore[misc]


def send_key_to(widget: Any) -> Callable[[events.Key], None]:
    """A key sink: the key is delivered to `widget` (the composer) as if typed there."""
    return lambda key: widget.post_message(events.Key(key.key, key.character))
