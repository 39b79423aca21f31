"""What a layout of the screen renders again: not the transcript when its size is as it was, and a widget's
removal lays its parent out once (RatApp._prune, Transcript._size_updated).

Textual 8.2 lays the whole screen out for a toast, a tab label of a new width, a dialog's removal. Each such
layout refreshed the transcript's scrollbar (its own virtual size, its lines, differs from the one the
compositor gives), and the bar, drawn over the transcript's region, had every visible row of the transcript
rendered again. And a removal awaited by its caller (a popped screen's) laid its parent out twice: for a dialog
withdrawn before it was drawn, the second was a whole repaint of the screen beneath, just after the key's frame.
"""

from __future__ import annotations

import sys
from pathlib import Path

from textual.widgets import Static

from rat_tui.app import RatApp
from rat_tui.ui.widgets.transcript import Transcript

from .helpers.app import FLOOD_LINE, at_rest, scripted, until, view


async def test_a_layout_that_leaves_the_transcripts_size_as_it_was_does_not_render_it(
        tmp_path: Path, monkeypatch) -> None:
    app = RatApp(scripted({"turns": [[{"chunk": FLOOD_LINE, "repeat": 300}]]}, tmp_path), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        tab_view = view(app)
        await until(pilot, lambda: tab_view.session.state.status == "ready", "ready")
        tab_view.composer.insert("a long answer please")
        await pilot.press("enter")
        transcript = tab_view.transcript
        await until(pilot, lambda: tab_view.session.state.status == "ready" and at_rest(app),
                    "the answer drawn, nothing left to draw")
        assert transcript.virtual_size.height > transcript.size.height  # (more than a screen of it)
        events: list[str] = []
        render_lines, display = Transcript.render_lines, app._display

        def recording_render(self, crop):
            events.append("transcript rendered")
            return render_lines(self, crop)

        def recording_display(screen, renderable) -> None:
            if renderable is not None:
                events.append("frame")
            display(screen, renderable)

        monkeypatch.setattr(Transcript, "render_lines", recording_render)
        monkeypatch.setattr(app, "_display", recording_display)
        tab = app.tabs.get_tab(app.tabs.active)
        tab.label = f"{tab.label.plain} · a title much longer than the one before"  # (Textual lays the screen out)
        await until(pilot, lambda: "frame" in events and not app.screen._layout_required
                    and not app.screen._dirty_widgets, "the new label drawn")
        assert "transcript rendered" not in events, events
        await pilot.resize_terminal(90, 30)  # the transcript's size changes: it is rendered again
        await until(pilot, lambda: "transcript rendered" in events, "the transcript rendered at its new width")


async def test_a_removal_awaited_by_its_caller_lays_its_parent_out_once(tmp_path: Path, monkeypatch) -> None:
    app = RatApp(scripted({}, tmp_path), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: view(app).session.state.status == "ready", "ready")
        parent = view(app)
        child = Static("soon gone")
        await parent.mount(child)
        layouts: list[bool] = []
        refresh = type(parent).refresh

        def recording_refresh(self, *args, **kwargs):
            if self is parent and kwargs.get("layout") and sys._getframe(1).f_code.co_name == "post_mount":
                layouts.append(True)  # (what follows the removal: Textual 8.2's `_prune`, its `post_mount`)
            return refresh(self, *args, **kwargs)

        monkeypatch.setattr(type(parent), "refresh", recording_refresh)
        removal = child.remove()
        await removal  # the caller's await (Textual's own `call_next` awaits it as well)
        await removal  # and another's
        assert not child.is_attached and layouts == [True], layouts
