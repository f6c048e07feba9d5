"""The HTML report: content, trust flags, forecast, grouped warnings, self-containment, the
CLI, and what a reader sees in headless Chromium at 1280 px (layout measured after load).

The browser tests need Debian's chromium (``apt-get install -y chromium``); they skip
cleanly when chromium is not installed. ``ENTROPYLAW_SCREENSHOT`` (a PNG path) keeps the
screenshot of the data/real report's first screen.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from entropylaw import table  # noqa: E402
from entropylaw.draw import style  # noqa: E402
from entropylaw.page.assemble import figure_png  # noqa: E402
from entropylaw.page.cells import decimals, interval  # noqa: E402
from entropylaw.page.model import PageModel, ReportFigure  # noqa: E402
from entropylaw.page.page import render_html  # noqa: E402
from entropylaw.results.rows import explained  # noqa: E402
from entropylaw.results.model import RunResults  # noqa: E402

# the tests marked printed compare numbers the page prints: run again under another BLAS kernel set
# (make test, OPENBLAS_CORETYPE=Prescott); the rest check the page's layout, a browser and the CLI's
# plumbing, which a kernel set does not change
printed = pytest.mark.printed

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
ROOT = Path(__file__).resolve().parents[1]


def small_figure(k=0):
    fig, ax = style.new_axes()
    ax.plot([0, 1, 2], [0, k, 1], label="x")
    ax.set_xlabel("step")
    return fig


def law_run(run_id, a, b, k=0, model="m", algorithm="grpo", rising=False):
    """A run following R = b - a exp(H) with a small deterministic wiggle (entropy rising if asked)."""
    steps = np.arange(0, 300, 10)
    H = 1.0 * np.exp(-steps / (60 + 20 * k)) + 0.1
    if rising:
        H = H[::-1]
    R = b - a * np.exp(H) + 0.004 * np.sin(steps)
    recs = [(int(s), "entropy", float(h)) for s, h in zip(steps, H)]
    recs += [(int(s), "val/mean", float(r)) for s, r in zip(steps, R)]
    return table.from_records(recs, run_id=run_id, model=model, algorithm=algorithm)


def two_runs():
    return table.concat([law_run("run0", 0.2, 0.8, 0), law_run("run1", 0.1, 0.6, 1, algorithm="rloo")])


@printed
def test_page_has_rows_flags_warnings_images_and_escapes_text():
    rows = [{"run_id": "<b>r1</b>", "label": "<b>r1</b>", "number": 1, "model": "Qwen2.5-7B", "algorithm": "grpo",
             "n": 12, "a": 0.2, "a_stderr": 0.01, "b": 0.9, "b_stderr": 0.02, "ceiling": 0.7,
             "ceiling_ci": (0.66, 0.74), "r2": 0.98, "rmse": 0.004, "final_observed": 0.69, "trust": "good fit",
             "trust_reasons": []},
            {"run_id": "r2", "number": 2, "ceiling": 0.685, "ceiling_ci": (0.677, 0.692), "final_observed": 0.68,
             "trust": "law does not apply", "trust_reasons": ["a = -0.1 <= 0: the score does not rise"]},
            {"run_id": "r3", "number": 3, "ceiling": 0.95, "ceiling_ci": (0.8, 1.1), "trust": "weak fit",
             "trust_reasons": ["ceiling interval leaves [0, 1]"]}]
    figs = [ReportFigure(f"figure {k}", figure_png(small_figure(k)), f"caption {k}") for k in range(2)]
    warnings = ["r1: only 5 points", "r2: only 7 points", "r2: a < 0 & odd"]
    html = render_html(PageModel("My runs", RunResults([explained(r) for r in rows]), figs, warnings))
    assert "<b>r1</b>" not in html and "&lt;b&gt;r1&lt;/b&gt;" in html
    # the first reason is shown whole (it wraps), every reason on hover
    assert '<td class="why" title="a = -0.1 &lt;= 0: the score does not rise">a = -0.1 &lt;= 0: the score does not ' \
           "rise</td>" in html
    # every row carries its flag; the ceiling of a run the law does not describe is greyed
    assert html.count('class="flag good"') == 2 and html.count('class="flag na"') == 2  # summary + details
    assert '<span class="void" title="not a forecast' in html and "(0.685 [0.677, 0.692])" in html
    assert "0.950 [0.800, 1.100]" in html and 'class="dagger"' in html  # the interval leaves [0, 1]
    assert "0.200 ± 0.010" in html and "0.700 [0.660, 0.740]" in html  # the coefficients
    # warnings of one kind are grouped: "only # points" twice, then the odd one
    assert "2 runs: only # points" in html and "a &lt; 0 &amp; odd" in html
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert len(images) == 2 and all(base64.b64decode(i).startswith(PNG_MAGIC) for i in images)
    # self-contained: nothing is fetched from elsewhere (links are anchors on the page)
    assert not re.search(r'(src|href)="(?!data:|#)', html) and "http" not in html.lower().replace("http-equiv", "")


def test_a_void_ceiling_is_greyed_in_every_table_and_the_run_list_says_what_its_numbers_are():
    """The coefficients table greys the ceiling of a run the law does not describe as the first table does (it
    was plain there, its flag a dozen columns away); the list of full ids under the first table is by the tables'
    # column (it said "by the number after each label", and the figures' labels carry no number)."""
    rows = [{"run_id": "r2", "number": 1, "ceiling": 0.685, "ceiling_ci": (0.677, 0.692), "final_observed": 0.68,
             "trust": "law does not apply", "trust_reasons": ["a = -0.1 <= 0: the score does not rise"]}]
    html = render_html(PageModel("p", RunResults([explained(r) for r in rows])))
    details = html[html.index('<table class="details">'):]
    assert '<span class="void" title="not a forecast' in details and "(0.685 [0.677, 0.692])" in details
    assert "number after each label" not in html and "the # column" in html


@printed
def test_numbers_keep_their_column_decimals():
    assert decimals([0.69, 0.71, 0.05]) == 3 and decimals([120.0, 300.0]) == 0
    assert interval(0.5, (0.4, 0.6), 3) == "0.500 [0.400, 0.600]"
    assert interval(0.9, (0.8, 1.02), 3) == "0.900 [0.800, 1.020]†"
    assert interval(2.0, (1.5, 2.5), 2, fraction=False) == "2.00 [1.50, 2.50]"


@printed
def test_figure_png_is_reproducible():
    assert figure_png(small_figure(1)) == figure_png(small_figure(1))


@printed
def test_report_from_a_table_fits_flags_and_forecasts_each_run():
    from entropylaw.page.assemble import report_html
    from entropylaw.results.model import summary_rows

    t = table.concat([two_runs(), law_run("up", 0.2, 0.8, rising=True, model="other")])
    rows, notes = summary_rows(t)
    by_id = {r["run_id"]: r for r in rows}
    # the law is recovered (wiggle 0.004): independent of the plotting code
    assert by_id["run0"]["a"] == pytest.approx(0.2, abs=0.02) and by_id["run1"]["b"] == pytest.approx(0.6, abs=0.02)
    assert by_id["run0"]["ceiling"] == pytest.approx(0.6, abs=0.02)
    assert by_id["run0"]["trust"] == "good fit" and by_id["up"]["trust"] == "law does not apply"
    html, built, skipped = report_html(t, title="three runs", which=["ceilings", "forecast", "law"])
    assert "<title>three runs</title>" in html and html.count("<img ") == len(built) >= 3
    assert "law does not apply" in html and "entropy rises" in html
    # the forecast section shows each run's recommended forecast (the default, or last-value
    # where it cannot run), the same number the API gives
    from entropylaw.api import forecast as api_forecast
    from entropylaw.fit.forecast.core import default_method

    section = html.split('id="forecast"')[1].split("</section>")[0]
    fc = api_forecast(t, run="run0", fit_frac=0.15, methods=[default_method()], n_boot=200, seed=0)
    final = fc.methods[fc.default].final  # the final score: the last step's, or a training score's last 5 %
    assert fc.default in section
    if final["no_forecast"]:
        assert "no forecast" in section
    else:
        assert f"{final['forecast']:.3f} [" in section
    plt.close("all")


def test_cli_report_and_figures(tmp_path, cli):
    src = table.write(two_runs(), tmp_path / "runs.parquet")
    out = tmp_path / "rep"
    res = cli("report", str(src), "--out", str(out))
    assert res.returncode == 0, res.stderr
    page = (out / "report.html").read_text()
    assert "run0" in page and "run1" in page and "Traceback" not in res.stderr and "good fit" in page
    res = cli("figures", str(src), "--out", str(tmp_path / "figs"), "--which", "interventions", "--style", "paper")
    assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in (tmp_path / "figs").iterdir()) == ["runs_over_training.pdf",
                                                                     "runs_over_training.png"]
    pdf = (tmp_path / "figs" / "runs_over_training.pdf").read_bytes()
    assert b"/FontFile2" in pdf and b"/Subtype /Type3" not in pdf  # TrueType (Type 42), not Type 3
    # a figure the inputs cannot give is said, except under -q
    for flags, said in (((), True), (("-q",), False)):
        res = cli("figures", str(src), "--out", str(tmp_path / "figs2"), "--which", "interventions", "table1",
                  "--format", "png", *flags)
        assert res.returncode == 0 and ("entropylaw: skipped table1" in res.stderr) is said, res.stderr


def test_cli_bad_inputs_give_one_line_errors(tmp_path, cli):
    res = cli("figures", "--out", str(tmp_path))
    assert res.returncode == 2 and res.stderr.strip().startswith("entropylaw: error: no input given")
    bad = tmp_path / "probe.json"
    bad.write_text("{not json")
    res = cli("report", "--probe", str(bad), "--out", str(tmp_path / "r"))
    assert res.returncode == 2 and "probe.json: not a JSON file" in res.stderr
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1
    # --out a file: named as the option (it said "<path>: Not a directory (ENOTDIR)")
    res = cli("report", str(ROOT / "data" / "real-sizes"), "--out", str(bad))
    assert res.returncode == 2 and f"--out {bad}: a file; expected a directory" in res.stderr, res.stderr


def test_cli_probe_only_draws_table1_and_ladder(tmp_path, cli):
    summary = tmp_path / "probe.json"
    summary.write_text('{"table1": {"0.0002": 4.0, "0.02": 1.0, "all": 0.01}, '
                       '"ladder": {"lemma1": {"pearson": 0.9, "spearman": 0.8, "sign_agreement": 0.95, '
                       '"predicted_mean": -0.01}, "measured": -0.011}}')
    res = cli("figures", "--probe", str(summary), "--out", str(tmp_path / "f"), "--format", "png")
    assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in (tmp_path / "f").iterdir()) == ["ladder_entropy_change.png",
                                                                  "table1_covariance_top_tokens.png"]


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None,
                                    reason="chromium not installed (Debian: apt-get install -y chromium)")

# measured after load, written on <body> for --dump-dom: the viewport, the widest element's
# right edge, the first table's box and tallest row, every table box that scrolls sideways
# (its own scroll width past its width: the page's scroll width does not see it), the
# coefficients table's tallest row, the most a figure is stretched past its pixels, and whether a click
# on a figure opens it
MEASURE = """<script>
window.addEventListener('load', function(){
  var d = document.body.dataset, vw = window.innerWidth, right = 0, widest = '';
  var all = document.body.getElementsByTagName('*');
  for (var i = 0; i < all.length; i++) {
    var r = all[i].getBoundingClientRect();
    if ((r.width || r.height) && r.right > right) { right = r.right; widest = all[i].tagName + '.' + all[i].className; }
  }
  var table = document.querySelector('table.runs'), t = table.getBoundingClientRect(), tallest = 0;
  var rows = table.querySelectorAll('tbody tr');
  for (var j = 0; j < rows.length; j++) { tallest = Math.max(tallest, rows[j].getBoundingClientRect().height); }
  var flags = table.querySelectorAll('tbody tr .flag').length, runs = rows.length - table.querySelectorAll('tr.family').length;
  var boxes = document.querySelectorAll('.tablebox, .scroll'), over = [];
  for (var k = 0; k < boxes.length; k++) {
    if (boxes[k].scrollWidth > boxes[k].clientWidth) { over.push(k + ':' + boxes[k].scrollWidth + '>' + boxes[k].clientWidth); }
  }
  var coef = document.querySelectorAll('table.details tbody tr'), tallCoef = 0;
  for (var c = 0; c < coef.length; c++) { tallCoef = Math.max(tallCoef, coef[c].getBoundingClientRect().height); }
  d.overflow = over.join(' '); d.tables = boxes.length; d.tallestCoef = Math.ceil(tallCoef);
  var imgs = document.querySelectorAll('figure img'), upscale = 0;
  for (var u = 0; u < imgs.length; u++) {
    var w = imgs[u].naturalWidth;
    if (w) { upscale = Math.max(upscale, imgs[u].getBoundingClientRect().width / w); }
  }
  d.upscale = upscale.toFixed(3);
  var downscale = 1;
  for (var v = 0; v < imgs.length; v++) {
    if (imgs[v].naturalWidth) { downscale = Math.min(downscale, imgs[v].getBoundingClientRect().width / imgs[v].naturalWidth); }
  }
  d.downscale = downscale.toFixed(3);
  var img = document.querySelector('figure img'); img.click();
  var big = document.getElementById('zoom-img');
  d.vw = vw; d.vh = window.innerHeight; d.scrollW = document.documentElement.scrollWidth; d.right = Math.ceil(right);
  d.widest = widest; d.tableBottom = Math.ceil(t.bottom); d.tallestRow = Math.ceil(tallest);
  d.flags = flags; d.runs = runs;
  d.zoom = getComputedStyle(document.getElementById('zoom')).display + ':' + (big && big.src === img.src ? 'same' : 'no');
});
</script></body>"""


def _chromium(tmp_path, page: Path, *extra: str, width: int = 1280) -> subprocess.CompletedProcess:
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}",
         f"--window-size={width},900", "--hide-scrollbars", *extra, page.as_uri()],
        capture_output=True, text=True, timeout=120)


def _measure(tmp_path, html: str, width: int = 1280) -> dict:
    page = tmp_path / "measure.html"
    page.write_text(html.replace("</body>", MEASURE, 1) if "</body>" in html else html)
    res = _chromium(tmp_path, page, "--enable-logging=stderr", "--v=0", "--dump-dom", width=width)
    assert res.returncode == 0, res.stderr[-2000:]
    body = re.search(r"<body([^>]*)>", res.stdout)
    assert body, res.stdout[:500]
    console = [line for line in res.stderr.splitlines() if ":CONSOLE" in line]
    assert console == []
    return dict(re.findall(r'data-([a-z-]+)="([^"]*)"', body.group(1)))


def _check_first_screen(m: dict, n_runs: int) -> None:
    assert m["images-failed"] == "0" and m["js-errors"] == "0", m
    assert int(m["vw"]) == 1280 and int(m["scroll-w"]) <= 1280, m  # no horizontal scrolling
    assert int(m["tables"]) >= 2 and m["overflow"] == "", m  # nor any table inside its own box
    assert int(m["right"]) <= 1280, f"an element reaches past the window: {m}"
    assert int(m["flags"]) == int(m["runs"]) == n_runs, m  # every row carries its trust flag
    assert int(m["tallest-row"]) <= 36, m  # two lines a run at most: the reason wraps
    assert m["zoom"] == "block:same", m  # a click opens the figure at full size
    # no figure drawn wider than its pixels (the ceiling figure under a wide table was stretched 1.5x: blurred,
    # its type half as large again as the table's)
    assert float(m["upscale"]) <= 1.01, m


@needs_chromium
def test_small_report_first_table_fits_one_screen_in_chromium(tmp_path):
    from entropylaw.page.assemble import report_html

    runs = [law_run(f"family-{k // 4}__run{k}", 0.1 + 0.02 * k, 0.7 + 0.01 * k, k % 3, model=f"m{k // 4}")
            for k in range(10)]
    html, _built, _ = report_html(table.concat(runs), which=["ceilings", "forecast"])
    m = _measure(tmp_path, html)
    _check_first_screen(m, 10)
    assert int(m["table-bottom"]) <= int(m["vh"]), m  # ten runs: the first table within one screen
    plt.close("all")


@needs_chromium
@pytest.mark.skipif(not (ROOT / "data" / "real").is_dir(), reason="no data/real")
def test_data_real_report_in_chromium_and_its_screenshot(tmp_path):
    from entropylaw.figure_sets.base import read_tables
    from entropylaw.page.assemble import report_html

    t = read_tables(ROOT / "data/real/*.parquet")
    html, _built, _ = report_html(t, title="entropylaw report: data/real", sources=["data/real"],
                                  which=["ceilings", "forecast"])
    m = _measure(tmp_path, html)
    _check_first_screen(m, len(table.run_ids(t)))
    assert int(m["table-bottom"]) <= 900, m  # 20 runs: the first table within a 1280 x 900 screen
    narrow = _measure(tmp_path, html, width=800)  # below 1100 px the tables reflow: no box scrolls sideways
    assert int(narrow["vw"]) == 800 and narrow["overflow"] == "" and int(narrow["scroll-w"]) <= 800, narrow
    page = tmp_path / "report.html"
    page.write_text(html)
    shot = Path(os.environ.get("ENTROPYLAW_SCREENSHOT") or tmp_path / "first_screen.png")
    res = _chromium(tmp_path, page, f"--screenshot={shot}")
    assert res.returncode == 0 and shot.read_bytes().startswith(PNG_MAGIC), res.stderr[-1000:]
    plt.close("all")


@needs_chromium
@pytest.mark.skipif(not (ROOT / "data" / "real").is_dir(), reason="no data/real")
def test_a_figure_beside_a_wide_table_is_not_shrunk_unreadable_in_chromium(tmp_path):
    """One run's training score: its forecast table (plateau and law ceiling columns) left the forecast figure
    beside it 250 of its 473 pixels at 1280 px, its type half size. A figure beside a table keeps most of its
    pixels, else it goes under the table."""
    from entropylaw.figure_sets.base import read_tables
    from entropylaw.page.assemble import report_html

    t = read_tables(ROOT / "data/real/trl_qwen2.5-7b__exp1a__rho1.00_seed44.parquet")
    html, _built, _ = report_html(t, which=["ceilings", "forecast"])
    m = _measure(tmp_path, html)
    assert float(m["downscale"]) >= 0.8, m
    plt.close("all")


LONG_NAMES = ["qwen2.5-14b-instruct_grpo-lora_math", "qwen2.5-7b-instruct_grpo-lora_math",
              "qwen2.5-3b-instruct_grpo-lora_math", "qwen2.5-1.5b-instruct_grpo-lora_math",
              "deepseek-llm-7b-chat_grpo-full_math", "llama-3.1-8b-instruct_rloo-lora_math",
              "mistral-7b-instruct-v0.3_ppo-full_math"]


@needs_chromium
def test_long_run_names_and_score_key_break_at_their_separators_in_chromium(tmp_path):
    """Seven runs with long names and a long score key: the coefficients table breaks them at
    `_`, `-`, `/` (its rows a few lines tall, not a letter or two a line), and no table scrolls."""
    from entropylaw.page.assemble import report_html

    key = "val/DigitalLearningGmbH/MATH-lighteval"
    runs = []
    for k, name in enumerate(LONG_NAMES):
        run = law_run(name, 0.1 + 0.02 * k, 0.7 + 0.01 * k, k % 3, model=name.split("_")[0])
        run["metric"] = run["metric"].astype(str).replace("val/mean", key)
        runs.append(run)
    html, _built, _ = report_html(table.concat(runs), which=["ceilings", "forecast"])
    assert "qwen2.5-<wbr>14b-<wbr>instruct_<wbr>grpo-<wbr>lora_<wbr>math" in html
    assert "val/<wbr>DigitalLearningGmbH/<wbr>MATH-<wbr>lighteval" in html
    for width in (1280, 800):
        m = _measure(tmp_path, html, width=width)
        assert m["overflow"] == "", m
        # three lines at most at 1280 px (it was eight: a letter or two a line); reflowed at 800
        assert 0 < int(m["tallest-coef"]) <= (64 if width == 1280 else 120), m
    plt.close("all")


def test_build_all_with_no_figure_asked_for_draws_none():
    """`which=[]` draws no figure (it must not mean every figure)."""
    from entropylaw.figure_sets.build import build_all

    built, skipped = build_all(None, which=[])
    assert built == [] and skipped == []


def test_the_early_caption_counts_every_run_it_leaves_out():
    """Three runs, one drawn: the law does not describe one (entropy rising), another logs no score;
    both are counted, each with its reason (the caption said "Left out (1)" for two missing runs)."""
    from entropylaw.figure_sets.build import build

    no_score = table.from_records([(s, "entropy", 1.0 - s / 400) for s in range(0, 300, 10)], run_id="no-score")
    t = table.concat([law_run("good", 0.2, 0.8), law_run("rising", 0.2, 0.8, 1, rising=True), no_score])
    (early,) = build("early", t)
    assert "Left out (2): 1 run the law does not describe, 1 with no entropy or no score." in early.caption
    (one,) = build("early", law_run("good", 0.2, 0.8))
    assert "Left out" not in one.caption
    plt.close("all")


def test_figures_say_a_runs_warning_once_not_once_a_figure(tmp_path):
    """Each figure refits the runs: a run of 3 checkpoints' warnings were printed once per figure
    that fitted it (each of 4 warnings twice)."""
    import entropylaw as el

    recs = [(s, table.ENTROPY, h) for s, h in ((10, 5.54), (20, 5.6), (30, 5.7))] + \
        [(s, "val/q", v) for s, v in ((10, 0.5), (20, 0.5), (30, 0.5))]
    res = el.figures(table.from_records(recs, run_id="ckpts"), out=tmp_path / "figs")
    assert res.warnings and len(res.warnings) == len(set(res.warnings)), res.warnings


def test_cli_figures_says_five_warnings_and_the_lab_figures_in_one_line(tmp_path, cli):
    """`figures` printed every warning (~120 lines on data/real) and one line per figure that needs
    a probe's or the lab's data, while the guide says it prints the first five, as `report` does."""
    runs = table.concat([law_run(f"up{k}", 0.2, 0.8, k, rising=True) for k in range(7)])
    src = table.write(runs, tmp_path / "runs.parquet")
    res = cli("figures", str(src), "--out", str(tmp_path / "f"), "--format", "png")
    assert res.returncode == 0, res.stderr
    said = [ln for ln in res.stderr.splitlines() if ln.startswith("entropylaw: warning:")]
    kept = (tmp_path / "f" / "warnings.txt").read_text().splitlines()[1:]
    assert len(said) == 5 and len(kept) > 5, res.stderr
    text = " ".join(res.stderr.split())
    assert f"entropylaw: {len(kept) - 5} more warnings in {tmp_path / 'f' / 'warnings.txt'}" in text, text
    assert "entropylaw: skipped covariance, checkpoints, table1, ladder: no probe or lab data" in text
    assert "skipped table1: no probe summary given" not in res.stderr
    named = cli("figures", str(src), "--out", str(tmp_path / "g"), "--which", "law", "table1", "--format", "png")
    assert "entropylaw: skipped table1: no probe summary given" in named.stderr, named.stderr


def test_the_page_says_the_shipped_runs_backtests_are_in_sample_and_a_users_are_not():
    """The demo's screen said its backtest scores the shipped runs on what they taught the stored calibration; the
    page did not. Both read one line (``RunResults.in_sample_said``); a run of one's own has none."""
    import entropylaw as el
    from entropylaw.page.assemble import report_html

    if not (ROOT / "data" / "real-sizes").is_dir():
        pytest.skip("no data/real-sizes")
    html, _built, _ = report_html(el.load(str(ROOT / "data" / "real-sizes"), warn=False), which=["forecast"])
    text = " ".join(re.sub(r"<[^>]+>", " ", html).split())
    assert "in-sample: every run here is among the runs the stored calibration" in text
    mine, _built, _ = report_html(table.concat([law_run(f"mine{k}", 0.1 + 0.02 * k, 0.7, k) for k in range(3)]),
                                  which=["forecast"])
    assert "in-sample:" not in mine and "stored calibration" not in mine
    plt.close("all")
