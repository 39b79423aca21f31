"""BandCompositor (ui/textual_ext/band_compositor.py): a partial frame renders only the widgets under the regions that changed,
and writes to the terminal what Textual's own compositor writes. Real widgets in a real (headless) app."""

from __future__ import annotations

from textual._compositor import Compositor
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.widgets import Static

from rat_tui.ui.textual_ext.band_compositor import BandCompositor, bands
from rat_tui.ui.tabs.main_screen import MainScreen


class Counted(Static):
    """A tall widget that counts how often it is rendered."""

    renders = 0

    def render_lines(self, crop):
        Counted.renders += 1
        return super().render_lines(crop)


class Stacked(App):
    CSS = "#top, #bottom { height: 2; } #middle { height: 1fr; }"

    def get_default_screen(self) -> MainScreen:
        return MainScreen()

    def compose(self) -> ComposeResult:
        yield Static("top", id="top")
        yield Counted("\n".join(f"middle line {n}" for n in range(40)), id="middle")
        yield Static("bottom", id="bottom")


def test_regions_are_grouped_by_the_rows_they_cover() -> None:
    top, touching, below, beside = Region(0, 0, 10, 2), Region(5, 2, 3, 1), Region(0, 30, 10, 2), Region(20, 31, 5, 5)
    assert bands({below, top, beside, touching}) == [[top, touching], [below, beside]]
    assert bands([]) == []


async def test_a_frame_of_the_top_and_the_foot_leaves_what_is_between_unrendered_and_writes_the_same() -> None:
    app = Stacked()
    async with app.run_test(size=(60, 30)) as pilot:
        await pilot.pause()
        screen = app.screen
        compositor = screen._compositor
        assert isinstance(compositor, BandCompositor)
        top, bottom = app.query_one("#top", Static), app.query_one("#bottom", Static)
        top.update("top, changed")
        bottom.update("bottom, changed")
        await pilot.pause()
        changed = {top.region, bottom.region}

        def frame(render_partial_update) -> tuple[str, int]:
            compositor._dirty_regions = set(changed)
            before = Counted.renders
            update = render_partial_update(compositor)
            return update.render_segments(app.console), Counted.renders - before

        whole = [strip.text for strip in compositor.render_strips()]
        compositor._cuts = None  # (Textual's cache of where widgets start and end on each row, made anew...)
        ours, ours_renders = frame(BandCompositor.render_partial_update)  # (... as our frame renders a band)
        theirs, their_renders = frame(Compositor.render_partial_update)
        assert ours == theirs and "top, changed" in ours and "bottom, changed" in ours
        assert (ours_renders, their_renders) == (0, 1)  # Textual's renders the widget between; ours does not
        assert [strip.text for strip in compositor.render_strips()] == whole  # the next full frame: all of it

        # One band (the middle and the foot touch): Textual's own frame.
        middle = app.query_one("#middle", Counted)
        compositor._dirty_regions = {middle.region, bottom.region}
        before = Counted.renders
        assert compositor.render_partial_update() is not None and Counted.renders == before + 1


async def test_every_partial_frame_of_the_app_under_a_flood_writes_what_textuals_would(tmp_path, monkeypatch) -> None:
    """The real app, an agent flooding the transcript, keys typed one by one meanwhile: each partial frame is
    written as Textual's compositor would have written it from the same regions."""
    from .helpers.app import flood_app, start_flood, until, view

    app, release = flood_app(tmp_path, 3000)
    compared: list[int] = []
    ours = BandCompositor.render_partial_update

    def checked(self: BandCompositor):
        changed = set(self._dirty_regions)
        self._dirty_regions = set(changed)
        theirs = Compositor.render_partial_update(self)
        self._dirty_regions = set(changed)
        update = ours(self)
        assert (update is None) == (theirs is None)
        if update is not None:
            assert update.render_segments(app.console) == theirs.render_segments(app.console)
            compared.append(len(bands(changed)))
        return update

    monkeypatch.setattr(BandCompositor, "render_partial_update", checked)
    async with app.run_test(size=(100, 30)) as pilot:
        await start_flood(pilot, app)
        for key in "typed meanwhile":
            await pilot.press(key if key != " " else "space")
        release.write_text("")
        await until(pilot, lambda: view(app).session.state.status == "ready", "the turn's end")
        await pilot.pause()
    assert len(compared) >= 10, compared  # (the frames of two bands or more: the test above makes one for sure)
