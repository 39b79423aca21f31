"""Provides Toasts: the app's toasts, none said twice at once, and those about something that can end (a request
waiting, a session's state) taken down when it ends rather than outliving their news.

Every toast of the app comes through here (`RatApp.notify`, so `Widget.notify` too). A toast that says what one on
screen says replaces it (its timer starts again) instead of stacking under it. A toast shown with a `key` is
replaced by the next one of that key and goes with `withdraw(key)` (or `withdraw_all(owner)`, for every key whose
first item is `owner`). Where toasts are drawn is the app's CSS (RatApp.CSS): top right, under the tab bar, clear of
the composer.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from textual.app import App
from textual.notifications import Notification, SeverityLevel

from .textual_ext.toasts import live_toasts, post_toast, withdraw_toast


class Toasts:
    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self._keyed: dict[Hashable, Notification] = {}

    def show(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
             timeout: float | None = None, markup: bool = True, key: Hashable = None) -> Notification:
        app = self.app
        for live in live_toasts(app):
            if (live.message, live.title, live.severity) == (message, title, severity):
                withdraw_toast(app, live)  # the same news again: one toast, its time counted anew
        if key is not None:
            self.withdraw(key)
        for stale in [key for key, shown in self._keyed.items() if shown.has_expired]:
            del self._keyed[stale]  # timed out by itself
        notification = Notification(message, title, severity,
                                    app.NOTIFICATION_TIMEOUT if timeout is None else timeout, markup=markup)
        if key is not None:
            self._keyed[key] = notification
        post_toast(app, notification)
        return notification

    def withdraw(self, key: Hashable) -> None:
        """The toast shown with `key`, if any, is stale: take it down."""
        notification = self._keyed.pop(key, None)
        if notification is not None:
            withdraw_toast(self.app, notification)

    def withdraw_all(self, owner: object) -> None:
        """Take down every toast whose key is a tuple starting with `owner`."""
        for key in [key for key in self._keyed if isinstance(key, tuple) and key and key[0] is owner]:
            self.withdraw(key)

    def shown(self, key: Hashable) -> bool:
        """Whether the toast of `key` is still up."""
        notification = self._keyed.get(key)
        return notification is not None and notification in live_toasts(self.app)
