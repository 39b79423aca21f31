"""Provides `post_toast`, `live_toasts` and `withdraw_toast`: a toast that can be taken down before its time.

Textual's `App.notify` makes its `Notification` out of sight and returns nothing, and only a toast's own timer or
a click removes it (`Toast._expire` calls `App._unnotify`). A toast whose news went stale (a request answered, a
state that changed) and a second toast saying the same as one on screen are taken down here the same way.

`post_toast` adds the notification at once, as `App._on_notify` does when `App.notify`'s message arrives: by
message, a toast posted twice in one turn of the loop was not yet among the app's notifications the second time,
and one taken down before its message arrived came back with it. So these are for the app's loop only.
"""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.notifications import Notification


def post_toast(app: App[Any], notification: Notification) -> None:
    """Show `notification` as a toast, now (what `App.notify` does with the one it makes, a message later)."""
    app._notifications.add(notification)
    app._refresh_notifications()


def live_toasts(app: App[Any]) -> list[Notification]:
    """The notifications shown now (or about to be), oldest first; expired ones are left out."""
    return [notification for notification in app._notifications if not notification.has_expired]


def withdraw_toast(app: App[Any], notification: Notification) -> None:
    """Take `notification`'s toast down (a no-op when it is gone already); the current screen's toast rack is
    told at once, another screen's when it is shown again (Textual refreshes the rack on each resume)."""
    if notification in app._notifications:
        app._unnotify(notification)
