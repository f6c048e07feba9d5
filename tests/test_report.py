"""The HTML report: content, self-containment, the CLI, and a headless-browser load.

The browser test needs Debian's chromium (``apt-get install -y chromium``); it skips
cleanly when chromium is not installed.
"""

from __future__ import annotations

import base64
import re
import shutil
import subprocess

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from entropylaw import table  # noqa: E402
from entropylaw.plots import report, style  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def small_figure(k=0):
    fig, ax = style.new_axes()
    ax.plot([0, 1, 2], [0, k, 1], label="x")
    ax.set_xlabel("step")
    return fig


def two_runs():
    """Two runs following the law exactly plus a little deterministic wiggle."""
    parts = []
    for k, (a, b) in enumerate([(0.2, 0.8), (0.1, 0.6)]):
        steps = np.arange(0, 300, 10)
        H = 1.0 * np.exp(-steps / (60 + 20 * k)) + 0.1
        R = b - a * np.exp(H) + 0.004 * np.sin(steps)
        recs = [(int(s), "entropy", float(h)) for s, h in zip(steps, H)]
        recs += [(int(s), "val/mean", float(r)) for s, r in zip(steps, R)]
        parts.append(table.from_records(recs, run_id=f"run{k}", model="m", algorithm=["grpo", "rloo"][k]))
    return table.concat(parts)


def test_page_has_rows_warnings_images_and_escapes_text():
    rows = [{"run_id": "<b>r1</b>", "model": "Qwen2.5-7B", "algorithm": "grpo", "n": 12, "a": 0.2, "a_stderr": 0.01,
             "b": 0.9, "b_stderr": 0.02, "ceiling": 0.7, "ceiling_ci": (0.66, 0.74), "r2": 0.98, "rmse": 0.004,
             "final_observed": 0.69, "final_predicted": 0.68, "predicted_from": "fit on first 15 %"},
            {"run_id": "r2"}]
    figs = [report.ReportFigure(f"figure {k}", report.figure_png(small_figure(k)), f"caption {k}") for k in range(2)]
    html = report.render_html("My runs", rows, figs, warnings=["r1: only 5 points", "r2: a < 0 & odd"])
    assert "<b>r1</b>" not in html and "&lt;b&gt;r1&lt;/b&gt;" in html
    assert "0.200 ± 0.010" in html and "0.700 [0.660, 0.740]" in html and "0.680 (fit on first 15 %)" in html
    assert html.count("<tr>") == 3  # header + two runs
    assert "n/a" in html  # the second run has no numbers
    assert "Warnings (2)" in html and "a &lt; 0 &amp; odd" in html
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert len(images) == 2 and all(base64.b64decode(i).startswith(PNG_MAGIC) for i in images)
    # self-contained: nothing is fetched from elsewhere
    assert not re.search(r'(src|href)="(?!data:)', html) and "http" not in html.lower().replace("http-equiv", "")


def test_figure_png_is_reproducible():
    assert report.figure_png(small_figure(1)) == report.figure_png(small_figure(1))


def test_report_from_a_table_fits_each_run():
    pytest.importorskip("entropylaw.fit.law")
    from entropylaw.plots.build_report import report_html, run_rows

    t = two_runs()
    rows, notes = run_rows(t)
    assert [r["run_id"] for r in rows] == ["run0", "run1"]
    # the law is recovered (wiggle 0.004): independent of the plotting code
    assert rows[0]["a"] == pytest.approx(0.2, abs=0.02) and rows[1]["b"] == pytest.approx(0.6, abs=0.02)
    assert rows[0]["ceiling"] == pytest.approx(0.6, abs=0.02)
    html, built, skipped = report_html(t, title="two runs")
    assert html.count("<tr>") == 3 and "<title>two runs</title>" in html
    assert html.count("<img ") == len(built) >= 1
    assert any(s.startswith("table1:") for s in skipped) and "Not drawn: table1" in html
    plt.close("all")


def test_cli_report_and_figures(tmp_path, cli):
    pytest.importorskip("entropylaw.ingest.dispatch")
    src = table.write(two_runs(), tmp_path / "runs.parquet")
    out = tmp_path / "rep"
    res = cli("report", str(src), "--out", str(out))
    assert res.returncode == 0, res.stderr
    page = (out / "report.html").read_text()
    assert "run0" in page and "run1" in page and "Traceback" not in res.stderr
    res = cli("figures", str(src), "--out", str(tmp_path / "figs"), "--which", "interventions")
    assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in (tmp_path / "figs").iterdir()) == ["fig09_interventions.pdf",
                                                                     "fig09_interventions.png"]


def test_cli_bad_inputs_give_one_line_errors(tmp_path, cli):
    res = cli("figures", "--out", str(tmp_path))
    assert res.returncode == 2 and res.stderr.strip().startswith("entropylaw: error: no input given")
    bad = tmp_path / "probe.json"
    bad.write_text("{not json")
    res = cli("report", "--probe", str(bad), "--out", str(tmp_path))
    assert res.returncode == 2 and "probe.json: not a JSON file" in res.stderr
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_cli_probe_only_draws_table1_and_ladder(tmp_path, cli):
    summary = tmp_path / "probe.json"
    summary.write_text('{"table1": {"0.0002": 4.0, "0.02": 1.0, "all": 0.01}, '
                       '"ladder": {"lemma1": {"pearson": 0.9, "spearman": 0.8, "sign_agreement": 0.95, '
                       '"predicted_mean": -0.01}, "measured": -0.011}}')
    res = cli("figures", "--probe", str(summary), "--out", str(tmp_path / "f"), "--format", "png")
    assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in (tmp_path / "f").iterdir()) == ["ladder_entropy_change.png",
                                                                  "table1_covariance.png"]


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (Debian: apt-get install -y chromium)")
def test_report_opens_in_headless_chromium(tmp_path):
    figs = [report.ReportFigure(f"figure {k}", report.figure_png(small_figure(k)), "c") for k in range(3)]
    html = report.render_html("browser check", [{"run_id": "r1", "a": 0.1, "b": 0.5}], figs, ["w"])
    page = report.write_report(html, tmp_path / "out")
    res = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}",
         "--enable-logging=stderr", "--v=0", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    body = re.search(r"<body([^>]*)>", res.stdout)
    assert body, res.stdout[:500]
    attrs = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', body.group(1)))
    assert attrs == {"images-loaded": "3", "images-failed": "0", "js-errors": "0"}
    console = [line for line in res.stderr.splitlines() if ":CONSOLE" in line]
    assert console == []
