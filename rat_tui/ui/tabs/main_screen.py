"""Provides MainScreen: the app's first screen (the session tabs), styled once at launch, not twice; its
frames wait for a key on its way, and it is not drawn anew after a dialog that never showed (all of which
`FramedScreen` does, in rat_tui/ui/textual_ext/screens.py)."""

from __future__ import annotations

from ..textual_ext.screens import FramedScreen


class MainScreen(FramedScreen):
    """Textual's default screen, held and gated by the frame scheduler (`FramedScreen`)."""
