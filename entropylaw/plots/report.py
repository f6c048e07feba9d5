"""One self-contained HTML page: where each run stands, its figures, the fits' warnings.

Images are PNGs embedded as base64 ``data:`` URIs, styles are inline, and nothing is
fetched from the network, so the file can be mailed or attached to a review. A small
inline script checks, once the page has loaded, that every image decoded and that no
script error happened; it records the result on ``<body>`` as ``data-images-loaded``,
``data-images-failed`` and ``data-js-errors`` (a headless browser test reads them).

A run row is a mapping with any of: ``run_id, model, algorithm, n, a, a_stderr, b,
b_stderr, ceiling, ceiling_ci (lo, hi), r2, rmse, final_observed, final_predicted,
predicted_from``; missing numbers show as ``n/a``.

>>> html = render_html("demo", [{"run_id": "r1", "a": 0.1, "a_stderr": 0.01, "b": 0.8,
...                              "ceiling": 0.7, "ceiling_ci": (0.65, 0.75), "r2": 0.97}],
...                    figures=[], warnings=["r1: only 4 points"])
>>> "0.100 ± 0.010" in html and "[0.650, 0.750]" in html and "only 4 points" in html
True
"""

from __future__ import annotations

import base64
import html as html_lib
import io
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import matplotlib.pyplot as plt

from entropylaw import __version__
from entropylaw.fileio import atomic_dir
from entropylaw.plots.common import pm
from entropylaw.plots.style import RC, fmt


@dataclass
class ReportFigure:
    """A figure for the page: its title, PNG bytes and a one-paragraph caption."""

    title: str
    png: bytes
    caption: str = ""


def figure_png(fig, close: bool = True) -> bytes:
    """The figure as PNG bytes without a timestamp (same figure, same bytes)."""
    buf = io.BytesIO()
    with plt.rc_context(RC):
        fig.savefig(buf, format="png", metadata={"Software": None})
    if close:
        plt.close(fig)
    return buf.getvalue()


_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;max-width:1100px;
     color:#222;line-height:1.45;padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.2rem} h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:.88rem;width:100%} th,td{padding:.3rem .5rem;border-bottom:1px solid #eee;
     text-align:right;white-space:nowrap} th{background:#f5f5f5} td.l,th.l{text-align:left}
figure{margin:1.2rem 0} figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{font-size:.88rem;color:#444} .warn li{color:#8a4b00} .muted{color:#666;font-size:.85rem}
.scroll{overflow-x:auto} td.run{white-space:normal;word-break:break-word;max-width:15rem}
"""

# Runs after load: every <img> must have decoded (naturalWidth > 0); errors are counted.
_CHECK_SCRIPT = """
(function(){
  var errors = 0;
  window.addEventListener('error', function(){ errors += 1; if (document.body) document.body.dataset.jsErrors = errors; });
  window.addEventListener('load', function(){
    var imgs = document.images, ok = 0;
    for (var i = 0; i < imgs.length; i++) { if (imgs[i].complete && imgs[i].naturalWidth > 0) ok += 1; }
    document.body.dataset.imagesLoaded = ok;
    document.body.dataset.imagesFailed = imgs.length - ok;
    document.body.dataset.jsErrors = errors;
  });
})();
"""

RUN_COLUMNS = [
    ("run", "run"), ("model", "model"), ("algorithm", "algorithm"), ("n", "points"),
    ("a", "a ± s.e."), ("b", "b ± s.e."), ("ceiling", "ceiling b−a ± 95 % CI"), ("r2", "R²"),
    ("rmse", "RMSE"), ("final_observed", "final score (observed)"), ("final_predicted", "final score (predicted)"),
]


def _e(value) -> str:
    return html_lib.escape(str(value), quote=True)


def _num(row: Mapping, key: str) -> float:
    value = row.get(key)
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def run_cells(row: Mapping) -> list[tuple[str, bool]]:
    """The table cells of one run as ``(text, left_aligned)``."""
    ci = row.get("ceiling_ci")
    ceiling = pm(_num(row, "ceiling"), _num(row, "ceiling_stderr")) if ci is None else fmt(_num(row, "ceiling"))
    if ci is not None and len(ci) == 2:
        ceiling += f" [{fmt(float(ci[0]))}, {fmt(float(ci[1]))}]"
    predicted = fmt(_num(row, "final_predicted"))
    if row.get("predicted_from"):
        predicted += f" ({row['predicted_from']})"
    n = row.get("n")
    return [
        (str(row.get("run_id", "")), True), (str(row.get("model", "") or "—"), True),
        (str(row.get("algorithm", "") or "—"), True), ("n/a" if n is None else str(int(n)), False),
        (pm(_num(row, "a"), _num(row, "a_stderr")), False), (pm(_num(row, "b"), _num(row, "b_stderr")), False),
        (ceiling, False), (fmt(_num(row, "r2")), False), (fmt(_num(row, "rmse")), False),
        (fmt(_num(row, "final_observed")), False), (predicted, False),
    ]


def render_html(title: str, runs: Sequence[Mapping], figures: Sequence[ReportFigure],
                warnings: Sequence[str] = (), notes: Sequence[str] = (), sources: Sequence[str] = ()) -> str:
    """The page as one string (UTF-8, no external references)."""
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{_e(title)}</title><style>{_CSS}</style>",
             f"<script>{_CHECK_SCRIPT}</script></head><body>",
             f"<h1>{_e(title)}</h1>",
             f'<p class="muted">entropylaw {_e(__version__)} · law R = −a·exp(H) + b, ceiling = b − a '
             "(the score when entropy is used up) · H in nats, scores as fractions</p>"]
    if sources:
        parts.append('<p class="muted">inputs: ' + ", ".join(_e(s) for s in sources) + "</p>")
    parts.append("<h2>Where each run stands</h2>")
    if runs:
        parts.append('<div class="scroll"><table><thead><tr>')
        parts += [f'<th class="{"l" if i < 3 else ""}">{_e(name)}</th>' for i, (_, name) in enumerate(RUN_COLUMNS)]
        parts.append("</tr></thead><tbody>")
        for row in runs:
            cells = run_cells(row)
            parts.append("<tr>" + "".join(f'<td class="{("l run" if i == 0 else "l") if left else ""}">{_e(text)}</td>'
                                          for i, (text, left) in enumerate(cells)) + "</tr>")
        parts.append("</tbody></table></div>")
    else:
        parts.append("<p>No run had enough paired (entropy, score) points to fit.</p>")
    for note in notes:
        parts.append(f'<p class="muted">{_e(note)}</p>')
    parts.append(f"<h2>Warnings ({len(warnings)})</h2>")
    if warnings:
        parts.append('<ul class="warn">' + "".join(f"<li>{_e(w)}</li>" for w in warnings) + "</ul>")
    else:
        parts.append("<p>The fits raised no warnings.</p>")
    parts.append("<h2>Figures</h2>")
    if not figures:
        parts.append("<p>No figure could be drawn from these inputs.</p>")
    for fig in figures:
        data = base64.b64encode(fig.png).decode("ascii")
        parts.append(f'<figure><h3>{_e(fig.title)}</h3><img alt="{_e(fig.title)}" src="data:image/png;base64,{data}">'
                     f"<figcaption>{_e(fig.caption)}</figcaption></figure>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(html: str, out_dir: str | os.PathLike, name: str = "report.html") -> Path:
    """Write the page into ``out_dir``: a new directory appears whole or not at all
    (:func:`entropylaw.fileio.atomic_dir`); returns the page's path."""
    with atomic_dir(out_dir) as tmp:
        (tmp / name).write_text(html, encoding="utf-8")
    return Path(out_dir) / name
