"""What a reader of a figure would object to, measured on the drawn figure (window extents).

Written apart from :mod:`entropylaw.draw.placement` (which places the boxes): this is
the test's own reading of the result, not the placing code run a second time.

- a legend or a text box (a text with a frame) covering a data point: scatter points,
  markers, interval bars and line vertices (lines sampled every 2 pixels), of any axes;
- text outside the figure;
- two texts overlapping (titles, labels, tick labels, legend entries, annotations);
- an axis without a label, or whose label names no unit in parentheses (a step count,
  "training step", and axes whose ticks are names rather than numbers are their own unit);
- in the paper style, text smaller than 7 pt.
"""

from __future__ import annotations

import numpy as np
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.legend import Legend
from matplotlib.text import Text

UNITLESS_OK = ("training step",)


def _extent(artist, renderer):
    return artist.get_window_extent(renderer)


def _overlap(a, b, tol: float = 1.0) -> bool:
    return (min(a.x1, b.x1) - max(a.x0, b.x0) > tol) and (min(a.y1, b.y1) - max(a.y0, b.y0) > tol)


def _densify(xy: np.ndarray, step: float = 2.0) -> np.ndarray:
    if len(xy) < 2:
        return xy
    d = np.diff(xy, axis=0)
    n = np.maximum((np.hypot(d[:, 0], d[:, 1]) // step).astype(int), 0)
    parts = [xy[:1]]
    for p, v, k in zip(xy[:-1], d, n):
        t = np.arange(1, k + 2)[:, None] / (k + 1)
        parts.append(p + t * v)
    return np.concatenate(parts)


def data_points(ax) -> np.ndarray:
    """Display coordinates of what the axes show as data (clipped to the axes box)."""
    pts = []
    for c in ax.collections:
        if not c.get_visible():
            continue
        if isinstance(c, PathCollection):
            off = np.asarray(c.get_offsets(), float)
            if len(off):
                pts.append(c.get_offset_transform().transform(off))
        elif isinstance(c, LineCollection):
            for seg in c.get_segments():
                if len(seg):
                    pts.append(_densify(c.get_transform().transform(np.asarray(seg, float))))
    for line in ax.lines:
        if not line.get_visible():
            continue
        xy = np.column_stack([np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)])
        xy = xy[np.isfinite(xy).all(axis=1)]
        if not len(xy):
            continue
        shown = line.get_transform().transform(xy)
        if line.get_transform() != ax.transData:
            if line.get_marker() in (None, "None", "", " "):
                continue  # a reference line (axhline / axvline) spans the axes: not data
            pts.append(shown)  # a marker at the edge: a point beyond the axes, still a mark to see
            continue
        pts.append(shown if line.get_linestyle() in ("None", "none", "", " ") else _densify(shown))
    if not pts:
        return np.empty((0, 2))
    out = np.concatenate(pts)
    box = ax.bbox.padded(4)
    keep = (out[:, 0] >= box.x0) & (out[:, 0] <= box.x1) & (out[:, 1] >= box.y0) & (out[:, 1] <= box.y1)
    return out[keep]


def _boxes(fig):
    """Legends and framed texts: what may not sit on data."""
    out = []
    for leg in fig.findobj(Legend):
        if leg.get_visible() and leg.get_texts():
            out.append(("legend", leg))
    for t in fig.findobj(Text):
        if t.get_visible() and t.get_text().strip() and t.get_bbox_patch() is not None:
            out.append((f"box {t.get_text()[:30]!r}", t))
    return out


def _texts(fig):
    """Every text drawn: tick labels only of the ticks the axis draws (an axis keeps spare
    tick objects whose labels are not drawn and sit anywhere)."""
    ticks, drawn = set(), []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for tick in axis.majorTicks + axis.minorTicks:
                ticks |= {id(tick.label1), id(tick.label2)}
            if ax.get_visible() and axis.get_visible():
                for tick in axis._update_ticks():
                    drawn += [lab for lab in (tick.label1, tick.label2) if lab.get_visible()]
    seen, out = set(), []
    for t in [t for t in fig.findobj(Text) if id(t) not in ticks] + drawn:
        if id(t) in seen or not t.get_visible() or not t.get_text().strip():
            continue
        if t.axes is not None and not t.axes.get_visible():
            continue
        seen.add(id(t))
        out.append(t)
    return out


def _in_legend(fig):
    ids = set()
    for leg in fig.findobj(Legend):
        ids |= {id(t) for t in leg.get_texts()} | {id(leg.get_title())}
    return ids


def _axis_shown(axis) -> bool:
    return axis.get_visible() and any(t.get_visible() and t.get_text() for t in axis.get_ticklabels())


def _categorical(axis) -> bool:
    labels = [t.get_text() for t in axis.get_ticklabels() if t.get_text()]
    def numeric(s):
        s = s.replace("−", "-").replace("$", "").replace("\\mathdefault{", "").replace("}", "")
        try:
            float(s.split("×")[0].split("^")[0])
            return True
        except ValueError:
            return False
    return bool(labels) and not any(numeric(s) for s in labels)


def problems(fig, paper: bool = False) -> list[str]:
    """Every problem found in ``fig`` (drawn here), as one line each."""
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    found = []
    page = fig.bbox
    texts = _texts(fig)
    extents = [_extent(t, renderer) for t in texts]
    for t, e in zip(texts, extents):
        if e.x0 < page.x0 - 1 or e.y0 < page.y0 - 1 or e.x1 > page.x1 + 1 or e.y1 > page.y1 + 1:
            found.append(f"text outside the figure: {t.get_text()[:40]!r}")
        if paper and t.get_fontsize() < 7 - 1e-9:
            found.append(f"text below 7 pt ({t.get_fontsize():.1f} pt): {t.get_text()[:40]!r}")
    legend_texts = _in_legend(fig)
    for i in range(len(texts)):
        for j in range(i + 1, len(texts)):
            if _overlap(extents[i], extents[j]):
                found.append(f"texts overlap: {texts[i].get_text()[:30]!r} and {texts[j].get_text()[:30]!r}")
    points = [data_points(ax) for ax in fig.axes if ax.get_visible()]
    points = np.concatenate(points) if points else np.empty((0, 2))
    for name, box in _boxes(fig):
        e = box.get_bbox_patch().get_window_extent(renderer) if isinstance(box, Text) else _extent(box, renderer)
        inside = ((points[:, 0] > e.x0 + 1) & (points[:, 0] < e.x1 - 1) & (points[:, 1] > e.y0 + 1)
                  & (points[:, 1] < e.y1 - 1)).sum()
        if inside:
            found.append(f"{name} covers {inside} data point(s)")
        if isinstance(box, Legend):
            for t, te in zip(texts, extents):
                if id(t) not in legend_texts and _overlap(e, te):
                    found.append(f"legend overlaps text {t.get_text()[:30]!r}")
    sup_x = fig._supxlabel is not None and fig._supxlabel.get_text()
    sup_y = fig._supylabel is not None and fig._supylabel.get_text()
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        for axis, label, sup in ((ax.xaxis, ax.get_xlabel(), sup_x), (ax.yaxis, ax.get_ylabel(), sup_y)):
            if not _axis_shown(axis) or _categorical(axis):
                continue
            text = label or sup or ""
            if not text:
                found.append(f"axis without a label (axes titled {ax.get_title(loc='left') or ax.get_title()!r})")
            elif not ("(" in text and ")" in text) and text not in UNITLESS_OK:
                found.append(f"axis label without a unit: {text!r}")
    return found
