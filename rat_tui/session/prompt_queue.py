"""Provides PromptQueue: prompts typed while a turn runs, sent one by one when turns end (no Textual).

The rules, chosen for a user who types ahead and expects nothing to be lost or sent by surprise:
- Enter while a turn runs queues the prompt; the first queued prompt is sent when the turn ends
  normally (`end_turn`, `max_tokens`, ... anything but `cancelled` or a failure).
- A turn the user cancelled (Esc) or that failed keeps the queue but sends nothing: Esc means "stop",
  and a failed turn is something to look at first. Enter on an empty composer (or Ctrl+S) then sends
  the next queued prompt.
- "Send now" (Ctrl+S) puts the prompt at the front and cancels the running turn; the prompt goes out
  as soon as that turn has ended, whatever its stop reason.
- Editing a queued prompt takes it out of the queue into the composer; a draft already in the
  composer takes its place in the queue, so neither is lost.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

# Stop reasons after which the next queued prompt goes out by itself.
AUTO_SEND_AFTER = frozenset({"end_turn", "max_tokens", "max_turn_requests", "refusal"})


@dataclass
class QueuedPrompt:
    text: str


class PromptQueue:
    """An ordered list of prompts plus the one flag "send the first as soon as the turn ends"."""

    def __init__(self, on_change: Callable[[], None] | None = None) -> None:
        self.items: list[QueuedPrompt] = []
        self.send_now = False
        self.on_change = on_change

    def __len__(self) -> int:
        return len(self.items)

    def __bool__(self) -> bool:
        return bool(self.items)

    @property
    def texts(self) -> list[str]:
        return [item.text for item in self.items]

    def add(self, text: str) -> None:
        self.items.append(QueuedPrompt(text))
        self._changed()

    def push_front(self, text: str) -> None:
        """A prompt to send next (send now): it goes before the others and marks the queue urgent."""
        self.items.insert(0, QueuedPrompt(text))
        self.send_now = True
        self._changed()

    def put_back(self, text: str) -> None:
        """A prompt taken out that did not go: first again, without send now's urgency."""
        self.items.insert(0, QueuedPrompt(text))
        self._changed()

    def remove(self, index: int) -> QueuedPrompt | None:
        if not 0 <= index < len(self.items):
            return None
        item = self.items.pop(index)
        if index == 0:
            self.send_now = False
        self._changed()
        return item

    def edit(self, index: int, draft: str = "") -> str | None:
        """Take prompt `index` out for editing; a non-blank `draft` takes its place. Returns its text."""
        if not 0 <= index < len(self.items):
            return None
        text = self.items[index].text
        if draft.strip():
            self.items[index] = QueuedPrompt(draft)
        else:
            self.items.pop(index)
        if index == 0:
            self.send_now = False
        self._changed()
        return text

    def next_after_turn(self, stop_reason: str | None) -> str | None:
        """The prompt to send now that a turn ended with `stop_reason` (taken out), or None to wait."""
        if not self.items:
            self.send_now = False
            return None
        if not (self.send_now or stop_reason in AUTO_SEND_AFTER):
            return None
        return self.pop_first()

    def pop_first(self) -> str | None:
        if not self.items:
            return None
        self.send_now = False
        text = self.items.pop(0).text
        self._changed()
        return text

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()
