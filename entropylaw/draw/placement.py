"""Where boxes and legends go, and what the axes cut off: the last pass over a figure.

:func:`settle` runs once per figure, after it is drawn and before it is saved (``save``,
``figure_png`` and :class:`~entropylaw.figure_sets.base.Built` call it): it lays the
figure out, puts each number box made with ``loc="best"`` in the corner of its axes
with the fewest data points under it (else outside the axes, on the right), moves an
axes legend that covers data outside too, and marks every data point and interval bar
the axes cut off with a hollow triangle at the edge (▲ above, ▼ below, ◀ ▶ left/right).

>>> import matplotlib
>>> matplotlib.use("Agg")
>>> from entropylaw.draw.style import new_axes, numbers_box
>>> fig, ax = new_axes()
>>> _ = ax.scatter([0.1, 0.2, 0.9], [0.1, 0.15, 2.0])
>>> ax.set_ylim(0, 1)
(0.0, 1.0)
>>> _ = numbers_box(ax, {"a": 1.0}, loc="best")
>>> settle(fig)
1
"""

from __future__ import annotations

import numpy as np
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.lines import Line2D
from matplotlib.transforms import Bbox

# where a number box goes in axes coordinates: (x, y, ha, va)
BOX_POSITIONS = {
    "lower right": (0.98, 0.03, "right", "bottom"),
    "lower left": (0.02, 0.03, "left", "bottom"),
    "upper right": (0.98, 0.97, "right", "top"),
    "upper left": (0.02, 0.97, "left", "top"),
    # outside the axes, right of the plot (constrained layout makes room)
    "outside right": (1.03, 1.0, "left", "top"),
}

AUTO_BOX = "auto-box"  # gid of number boxes placed by place_box
CLIP_MARK = "clip-mark"  # gid of the triangles that mark points beyond the axes
CORNERS = ("upper left", "upper right", "lower left", "lower right")


def _renderer(fig):
    return fig.canvas.get_renderer()


def data_points(ax) -> np.ndarray:
    """Display coordinates (N x 2) of the data in ``ax`` and in its twins (axes on the same
    spot): scatter points, line vertices (long segments sampled every few pixels),
    interval bars. Reference lines drawn in axes coordinates (axhline, axvline) are not data."""
    twins = [a for a in ax.figure.axes if a is not ax and a.get_visible() and a.bbox.bounds == ax.bbox.bounds]
    return np.concatenate([_own_points(a) for a in [ax] + twins])


def _own_points(ax) -> np.ndarray:
    pts = []
    for coll in ax.collections:
        if coll.get_gid() == CLIP_MARK or not coll.get_visible():
            continue
        if isinstance(coll, PathCollection) and len(coll.get_offsets()):
            pts.append(coll.get_offset_transform().transform(np.asarray(coll.get_offsets(), float)))
        elif isinstance(coll, LineCollection):
            for seg in coll.get_segments():
                if len(seg):
                    pts.append(_sample(coll.get_transform().transform(np.asarray(seg, float))))
    for line in ax.get_lines():
        if not line.get_visible() or line.get_gid() == CLIP_MARK or line.get_transform() != ax.transData:
            continue
        xy = np.column_stack([np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)])
        xy = xy[np.isfinite(xy).all(axis=1)]
        if len(xy):
            shown = ax.transData.transform(xy)
            pts.append(shown if line.get_linestyle() in ("None", "none", "", " ") else _sample(shown))
    if not pts:
        return np.empty((0, 2))
    out = np.concatenate(pts)
    inside = ax.bbox.padded(1.0)
    keep = (out[:, 0] >= inside.x0) & (out[:, 0] <= inside.x1) & (out[:, 1] >= inside.y0) & (out[:, 1] <= inside.y1)
    return out[keep]


def _sample(xy: np.ndarray, step: float = 3.0) -> np.ndarray:
    """Points along a polyline every ``step`` display pixels (its vertices included)."""
    if len(xy) < 2:
        return xy
    out = [xy[:1]]
    for p, q in zip(xy[:-1], xy[1:]):
        n = int(np.hypot(*(q - p)) // step)
        if n > 0:
            t = np.linspace(0, 1, n + 2)[1:, None]
            out.append(p + t * (q - p))
        else:
            out.append(q[None])
    return np.concatenate(out)


def count_inside(points: np.ndarray, box: Bbox, pad: float = 2.0) -> int:
    if not len(points):
        return 0
    b = box.padded(pad)
    return int(((points[:, 0] >= b.x0) & (points[:, 0] <= b.x1) & (points[:, 1] >= b.y0)
                & (points[:, 1] <= b.y1)).sum())


def place_box(ax, text, candidates=CORNERS) -> str:
    """Move ``text`` (an axes-fraction text box) to the candidate corner covering the fewest
    data points, or outside the axes on the right when every corner covers some. Returns
    where it went. Tags the text so :func:`settle` checks it again after the layout."""

    text.set_gid(AUTO_BOX)
    fig = ax.figure
    renderer = _renderer(fig)
    points = data_points(ax)
    best, best_n = None, None
    for loc in candidates:
        x, y, ha, va = BOX_POSITIONS[loc]
        text.set_position((x, y))
        text.set_ha(ha)
        text.set_va(va)
        n = count_inside(points, text.get_window_extent(renderer))
        if best_n is None or n < best_n:
            best, best_n = loc, n
        if n == 0:
            break
    loc = best if best_n == 0 else "outside right"
    x, y, ha, va = BOX_POSITIONS[loc]
    text.set_position((x, y))
    text.set_ha(ha)
    text.set_va(va)
    return loc


def _inside_legend(ax):
    """The axes' legend when it sits inside the axes (no anchor of its own), else None."""
    leg = ax.get_legend()
    if leg is None or not leg.get_visible() or leg._bbox_to_anchor is not None:
        return None
    return leg


def _legend_covers_data(ax, renderer) -> bool:
    leg = _inside_legend(ax)
    return leg is not None and count_inside(data_points(ax), leg.get_window_extent(renderer)) > 0


def _move_legend_outside(ax) -> None:
    leg = ax.get_legend()
    handles, labels = leg.legend_handles, [t.get_text() for t in leg.get_texts()]
    title = leg.get_title().get_text()
    ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
              title=title or None, fontsize=leg.get_texts()[0].get_fontsize() if labels else None)


def mark_clipped(ax) -> int:
    """A hollow triangle at the edge for each data point or interval end beyond the axes
    (in the point's colour); returns how many were marked."""
    if ax.get_gid() == "no-clip-marks" or not ax.get_visible():
        return 0
    (x0, x1), (y0, y1) = sorted(ax.get_xlim()), sorted(ax.get_ylim())
    marks = []  # (x in axes fraction, y in axes fraction, marker, colour)
    to_axes = ax.transAxes.inverted()

    def edge(xd, yd, c):
        if not (np.isfinite(xd) and np.isfinite(yd)):
            return
        if y0 <= yd <= y1 and x0 <= xd <= x1:
            return
        fx, fy = to_axes.transform(ax.transData.transform((xd, yd)))
        if yd > y1 or yd < y0:
            if x0 <= xd <= x1:
                marks.append((fx, 1.0 if yd > y1 else 0.0, "^" if yd > y1 else "v", c))
        elif y0 <= yd <= y1:
            marks.append((1.0 if xd > x1 else 0.0, fy, ">" if xd > x1 else "<", c))

    for coll in ax.collections:
        if coll.get_gid() == CLIP_MARK or not coll.get_visible():
            continue
        colors = coll.get_edgecolor() if isinstance(coll, LineCollection) else coll.get_facecolor()
        if not len(colors):
            colors = coll.get_edgecolor()
        c = colors[0] if len(colors) else "0.3"
        if isinstance(coll, PathCollection) and coll.get_offset_transform() == ax.transData:
            for xd, yd in np.asarray(coll.get_offsets(), float):
                edge(xd, yd, c)
        elif isinstance(coll, LineCollection) and coll.get_transform() == ax.transData:
            for seg in coll.get_segments():  # interval bars: mark the end that leaves the axes
                for xd, yd in np.asarray(seg, float)[[0, -1]] if len(seg) else []:
                    edge(xd, yd, c)
    for line in ax.get_lines():
        if line.get_gid() == CLIP_MARK or line.get_transform() != ax.transData:
            continue
        if line.get_linestyle() in ("None", "none", "", " ") and line.get_marker() not in (None, "None", ""):
            c = line.get_markeredgecolor()
            for xd, yd in zip(np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)):
                edge(xd, yd, c)
    if not marks:
        return 0
    seen = set()
    for fx, fy, m, c in marks:
        key = (round(fx, 3), round(fy, 3), m)
        if key in seen:
            continue
        seen.add(key)
        ax.add_line(Line2D([fx], [fy], transform=ax.transAxes, marker=m, ms=6, mfc="white", mec=c, mew=1.2,
                           ls="none", clip_on=False, zorder=7, gid=CLIP_MARK))
    return len(seen)


def settle(fig) -> int:
    """Lay out, place the auto boxes and legends, mark what the axes cut off (once per
    figure); returns the number of clip marks drawn."""
    if getattr(fig, "_entropylaw_settled", False):
        return getattr(fig, "_entropylaw_marks", 0)
    fig._entropylaw_settled = True
    axes = [ax for ax in fig.axes if ax.get_visible()]
    for ax in axes:  # freeze the limits: marks and moves must not rescale the data
        ax.set_xlim(ax.get_xlim())
        ax.set_ylim(ax.get_ylim())
    n_marks = 0
    _labels_fit(fig, axes)
    # only boxes and legends inside the axes need the layout (a draw is the slow part)
    pending = any(t.get_gid() == AUTO_BOX for ax in axes for t in ax.texts) or \
        any(_inside_legend(ax) is not None for ax in axes)
    for _ in range(3 if pending else 0):  # moving a box outside shrinks the axes: check again after the layout
        fig.draw_without_rendering()
        renderer = _renderer(fig)
        moved = False
        for ax in axes:
            for text in ax.texts:
                if text.get_gid() == AUTO_BOX:
                    before = text.get_position()
                    place_box(ax, text)
                    moved |= text.get_position() != before
            if _legend_covers_data(ax, renderer):
                _move_legend_outside(ax)
                moved = True
        if not moved:
            break
    for ax in axes:
        n_marks += mark_clipped(ax)
    fig._entropylaw_marks = n_marks
    return n_marks


def _labels_fit(fig, axes) -> None:
    """In a figure of one axes, an axis label the figure cuts (longer than the axes are tall or
    wide, beside a legend or a box that shrinks them: the one-column paper style) is broken into
    lines at its spaces: a cut label hides its unit. Figures are drawn to find out only where a
    label is over 40 % of the figure's height (width) long. Not in a grid: each draw of a
    constrained layout moves its panels by a pixel or so, and a grid's panels carry texts placed
    under them by the first layout."""
    import textwrap

    if len(axes) != 1:
        return
    size = fig.get_size_inches() * fig.dpi
    labels = [(lab, vertical) for ax in axes for lab, vertical in ((ax.yaxis.label, True), (ax.xaxis.label, False))
              if lab.get_visible() and lab.get_text() and "\n" not in lab.get_text()]
    if not any(0.6 * lab.get_fontsize() * fig.dpi / 72 * len(lab.get_text()) > 0.4 * size[1 if vertical else 0]
               for lab, vertical in labels):
        return
    fig.draw_without_rendering()  # the layout moves every label a little: both are checked
    renderer, page = _renderer(fig), fig.bbox
    for lab, vertical in labels:
        e = lab.get_window_extent(renderer)
        lo, hi, edge0, edge1 = (e.y0, e.y1, page.y0, page.y1) if vertical else (e.x0, e.x1, page.x0, page.x1)
        if lo >= edge0 - 0.5 and hi <= edge1 + 0.5:
            continue
        room = 1.9 * min((lo + hi) / 2 - edge0, edge1 - (lo + hi) / 2)  # centred where the layout put it
        text = lab.get_text()
        lab.set_text(textwrap.fill(text, max(12, int(len(text) * room / max(hi - lo, 1.0))), break_long_words=False))
