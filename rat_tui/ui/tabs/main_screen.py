"""Provides MainScreen: the app's first screen (the session tabs), styled once at launch, not twice."""

from __future__ import annotations

from textual.screen import Screen

from ..styled_once import StyledOnce


class MainScreen(StyledOnce, Screen):
    """Textual's default screen, but its first `ScreenResume` does not restyle every node (StyledOnce)."""
