"""The cells of the report's tables: escaping, numbers with a column's decimals, intervals,
the run's swatch, label and trust flag, and the family headings (:mod:`.page`,
:mod:`.forecasts`).

>>> interval(0.7, (0.65, 0.75), 3), interval(0.7, (0.65, 1.02), 2)
('0.700 [0.650, 0.750]', '0.70 [0.65, 1.02]†')
"""

from __future__ import annotations

import html as html_lib
import math
import re
from typing import Mapping

from entropylaw.terminal import pieces

FLAG_CLASS = {"good fit": "good", "weak fit": "weak", "law does not apply": "na"}
NOT_APPLICABLE = "law does not apply"


def esc(value) -> str:
    """``value`` as text safe in HTML, in an element or an attribute."""
    return html_lib.escape(str(value), quote=True)


def breakable(value) -> str:
    """``value`` as HTML text whose long name may break at its separators (``_``, ``-``, ``/``)
    and nowhere else: a narrow column then wraps it by its parts, not by letters."""
    return "".join("<wbr>".join(esc(p) for p in pieces(word)) + sep
                   for word, sep in re.findall(r"(\S+)(\s*)", str(value)))


def decimals(values, significant: int = 3, most: int = 4) -> int:
    """Decimals that give the column's typical value ``significant`` digits (same for the column).

    >>> decimals([0.69, 0.71, 0.05]), decimals([12.5, 30.1]), decimals([])
    (3, 1, 3)
    """
    v = sorted(abs(x) for x in values if x is not None and x == x and x != 0 and math.isfinite(x))
    if not v:
        return significant
    typical = v[len(v) // 2]
    return max(0, min(most, significant - 1 - math.floor(math.log10(typical))))


def cell(value: float, d: int) -> str:
    return "n/a" if value != value else f"{value:.{d}f}"


def interval(value: float, ci, d: int, fraction: bool = True) -> str:
    """``0.699 [0.695, 0.703]``, with a dagger when a fraction's interval leaves [0, 1]."""
    if value != value:
        return "n/a"
    if ci is None or len(ci) != 2:
        return cell(value, d)
    out = f"{value:.{d}f} [{float(ci[0]):.{d}f}, {float(ci[1]):.{d}f}]"
    if fraction and (ci[0] < 0 or ci[1] > 1):
        out += "†"
    return out


def pm(value: float, err: float, d: int) -> str:
    if value != value:
        return "n/a"
    return cell(value, d) if err != err else f"{value:.{d}f} ± {err:.{d}f}"


def swatch(row: Mapping) -> str:
    """A small line and marker in the run's colour: the key to the run in every figure."""
    c = esc(row.get("color") or "#888")
    dash = {"--": ' stroke-dasharray="4 2"', ":": ' stroke-dasharray="1.5 2"', "-.": ' stroke-dasharray="4 2 1 2"'}
    ls = dash.get(row.get("linestyle") or "-", "")
    shape = {"s": f'<rect x="8" y="2" width="6" height="6" fill="{c}"/>',
             "^": f'<polygon points="11,1.5 15,8.5 7,8.5" fill="{c}"/>',
             "D": f'<polygon points="11,1 15,5 11,9 7,5" fill="{c}"/>'}.get(
        row.get("marker") or "o", f'<circle cx="11" cy="5" r="3.2" fill="{c}"/>')
    return (f'<svg class="swatch" width="22" height="10" viewBox="0 0 22 10" aria-hidden="true">'
            f'<line x1="0" y1="5" x2="22" y2="5" stroke="{c}" stroke-width="1.6"{ls}/>{shape}</svg>')


def flag(trust: str) -> str:
    return f'<span class="flag {FLAG_CLASS.get(trust, "none")}">{esc(trust or "no fit")}</span>'


def _run_cells(row: Mapping, mixed_kinds: bool = False, number: bool = True) -> str:
    """The run's number (its line in the list of full ids; ``number=False``: not) and its short
    label (full id on hover)."""
    full = row.get("run_id", "")
    label = row.get("label") or full
    tag = ""
    if mixed_kinds and row.get("score_kind") == "training score":
        tag = ' <span class="void" title="fitted to the training score: the run logs no validation">train</span>'
    return ((f'<td class="num">{row.get("number", "")}</td>' if number else "")
            + f'<td class="l run" title="{esc(full)}">{esc(label)}{tag}</td>')


def _kinds(rows) -> set:
    return {r.get("score_kind") for r in rows if r.get("score_kind")}


def _family_rows(rows, ncols):
    """Yield ``(family heading or None, row)``: a heading where the family changes (several
    families only), saying which score its runs were fitted to when they agree."""
    families = [r.get("family") for r in rows]
    several = len(set(families)) > 1
    for i, row in enumerate(rows):
        fam = families[i]
        if several and fam and (i == 0 or fam != families[i - 1]):
            members = [r for r in rows if r.get("family") == fam]
            kinds = _kinds(members)
            kind = {"validation": " · validation score", "training score": " · training score (no validation "
                    "logged)"}.get(next(iter(kinds)), "") if len(kinds) == 1 else ""
            n = len(members)
            yield (f'<tr class="family"><td colspan="{ncols}">{esc(fam)} · {n} run{"s" if n > 1 else ""}{esc(kind)}'
                   "</td></tr>"), row
        else:
            yield None, row


def _mixed_within_families(rows) -> bool:
    fams = {}
    for r in rows:
        fams.setdefault(r.get("family"), []).append(r)
    return any(len(_kinds(m)) > 1 for m in fams.values()) or (len(fams) == 1 and len(_kinds(rows)) > 1)
