"""The report's "Audit of the logged entropy" section, from ``entropylaw audit --out DIR``'s summary.json.

>>> a = {"step": 1, "logged": 1.91, "conventions": {"token-mean": 1.91, "seq-mean-token-mean": 1.84},
...      "matched": "token-mean", "tolerance": 0.009, "verdict": "matches token-mean",
...      "correction": {"from": "token-mean", "to": "token-mean", "factor": 1.0, "mapping": "token-mean = logged"}}
>>> html = audit_section([a])
>>> "Audit of the logged entropy" in html and "<b>token-mean</b>" in html
True
>>> audit_section([])
''
"""

from __future__ import annotations

from typing import Mapping, Sequence

from entropylaw.page.cells import esc


def _six_digits(v) -> str:
    """A number with six significant digits, ``-`` for none."""
    return "-" if v is None else f"{v:.6g}"


def audit_section(audits: Sequence[Mapping]) -> str:
    """One table per audit: each convention's recomputed value and gap, the verdict and the correction."""
    if not audits:
        return ""
    parts = ['<section id="audit"><h2>Audit of the logged entropy: is it the entropy of the policy?</h2>',
             '<p class="muted">The policy\'s per-token entropy recomputed from the checkpoint and the step\'s '
             "rollouts, aggregated as each trainer does; the matching convention is the one within the tolerance "
             "(a model of the trainer's rounding, stated under each step). The law is fitted on <b>token-mean</b>.</p>"]
    for a in audits:
        logged = a.get("logged")
        rows = []
        for name, v in a.get("conventions", {}).items():
            gap = "" if logged is None else f"{v - logged:+.3g}"
            label = f"<b>{esc(name)}</b>" if name == a.get("matched") else esc(name)
            rows.append(f"<tr><td>{label}</td><td>{_six_digits(v)}</td><td>{gap}</td></tr>")
        c = a.get("correction")
        corr = ("none possible" if not c else
                f"token-mean = {c['factor']:.6g} × logged on this batch" + (f"; {esc(c['mapping'])}" if c.get("mapping")
                                                                           else ""))
        parts.append(f"<h3>Step {esc(a.get('step'))}: logged {_six_digits(logged)}, tolerance {_six_digits(a.get('tolerance'))}</h3>"
                     "<table><tr><th>convention</th><th>recomputed</th><th>− logged</th></tr>" + "".join(rows)
                     + f"</table><p><b>Tolerance:</b> {esc((a.get('tolerance_model') or {}).get('assumes', '-'))}<br>"
                     f"<b>Verdict:</b> {esc(a.get('verdict', ''))}<br><b>Correction:</b> {corr}</p>")
    parts.append("</section>")
    return "\n".join(parts)
