"""Provides BandCompositor: Textual's compositor, but a partial frame renders only the widgets under what changed.

Textual 8.2 draws a partial frame (`Compositor.render_partial_update`) from one crop, the box around every
region that changed, and renders each widget that box overlaps, whole. So a frame where a region near the top
and the composer (at the foot) changed rendered every row of the transcript between them, to keep none: the
frame of a key that withdrew a dialog rendered the transcript (tests/test_request_gate.py's withdrawal).

Textual also takes every widget whose clip (its container's area) the crop overlaps, not its region: a frame of
the composer alone could render the transcript above it, in the same container.

Here the regions that changed are grouped into bands of rows (regions whose rows overlap or touch go together),
and each band is rendered from its own crop, as Textual renders the one, by the widgets whose region the crop
overlaps: the rows drawn and what goes on them are Textual's; the widgets nothing of which changed are not
rendered. A full frame is Textual's own.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual._compositor import ChopsUpdate, Compositor
from textual.geometry import Region
from textual.strip import Strip


def bands(regions: set[Region] | list[Region]) -> list[list[Region]]:
    """The regions grouped by rows: regions whose rows overlap or touch are in one band, bands top to bottom."""
    grouped: list[list[Region]] = []
    bottom = -1
    for region in sorted(regions, key=lambda region: region.y):
        if grouped and region.y <= bottom:
            grouped[-1].append(region)
            bottom = max(bottom, region.bottom)
        else:
            grouped.append([region])
            bottom = region.bottom
    return grouped


class BandCompositor(Compositor):
    """A Compositor whose partial frames render each band of changed rows from its own crop, and only the widgets
    whose region that crop overlaps (see the module)."""

    _crop: Region | None = None  # the band being rendered (`_get_renders`)

    def _get_renders(self, crop: Region | None = None) -> Iterable[tuple[Region, Region, list[Strip]]]:
        """Textual 8.2's, but while a band renders, only the widgets whose region its crop overlaps: Textual takes
        each widget whose clip (its container's area) the crop overlaps, and renders it whole, though nothing of
        it lies in the crop. (Not by filtering `visible_widgets`: the cuts and layers Textual caches are made
        from it.)"""
        band = self._crop
        if band is None:
            yield from super()._get_renders(crop)
            return
        overlaps = band.overlaps
        for widget, (region, clip) in self.visible_widgets.items():
            if not overlaps(region) or not overlaps(clip):
                continue
            if clip.contains_region(region):
                yield region, clip, widget.render_lines(Region(0, 0, region.width, region.height))
            else:
                x, y, width, height = region.intersection(clip)
                if width and height:
                    yield region, clip, widget.render_lines(Region(x - region.x, y - region.y, width, height))

    def render_partial_update(self) -> ChopsUpdate | None:
        update_regions = self._dirty_regions.copy()
        self._dirty_regions.clear()
        if not update_regions:
            return None
        screen_region = self.size.region
        spans = list(self._regions_to_spans(update_regions))
        chops: list = []
        try:
            for band in bands(update_regions):
                crop = Region.from_union(band).intersection(screen_region)
                if not crop:
                    continue
                rows = {y for region in band for y in range(region.y, region.bottom)}
                self._crop = crop
                band_chops = self._render_chops(crop, rows.__contains__)
                if not chops:
                    chops = list(band_chops)
                    continue
                for y in rows:
                    if 0 <= y < len(chops):
                        chops[y] = band_chops[y]
        finally:
            self._crop = None
        if not chops or not spans:
            return None
        chop_ends = [cut_set[1:] for cut_set in self.cuts]
        return ChopsUpdate(chops, spans, chop_ends)
