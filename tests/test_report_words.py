"""The page the command line writes speaks its words: an API parameter is named by a flag
(the report's own, else the forecast command's), while the Python API's page keeps the API's
names; the page's text is reworded before it is rendered, never by the renderer."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import entropylaw as el
from entropylaw.cli.main import build_parser, main, sub_commands
from entropylaw.cli.options import FLAG_NAMES, in_flags

ROOT = Path(__file__).resolve().parents[1]
# a run whose validation key names no benchmark: its call's threshold says how to give the set's size
GPG = ROOT / "data" / "real" / "verl_gpg_qwen2-7b-instruct_gsm8k+math_fsdp.parquet"
needs_gpg = pytest.mark.skipif(not GPG.exists(), reason="no data/real")


def _named_with_a_flag(html: str) -> list[str]:
    """The backticked API names of ``html`` that some command has a flag for."""
    options = {s for p in sub_commands(build_parser()).values() for a in p._actions for s in a.option_strings}
    names = set(re.findall(r"`([a-z_][a-z0-9_]*)`", html))
    return sorted(n for n in names if {FLAG_NAMES.get(n), "--" + n.replace("_", "-")} & options)


def test_a_name_the_command_lacks_is_the_flag_of_the_command_that_has_it():
    commands = sub_commands(build_parser())
    report, forecast = commands["report"], {"forecast": commands["forecast"]}
    text = "give `n_problems` N; `fit_frac` 0.2; `no_such_thing` stays"
    assert in_flags(text, report) == "give `n_problems` N; --fit-frac 0.2; `no_such_thing` stays"
    assert in_flags(text, report, others=forecast) == \
        "give 'entropylaw forecast --n-problems' N; --fit-frac 0.2; `no_such_thing` stays"
    assert "lab run" in commands and "--algo" in commands["lab run"]._option_string_actions  # nested ones too


def test_the_check_finds_a_name_with_a_flag():
    assert _named_with_a_flag("give `n_problems` N, `fit_frac`, `not_a_flag_anywhere`") == ["fit_frac", "n_problems"]


@needs_gpg
def test_the_pages_written_by_report_and_demo_name_flags_and_the_api_page_keeps_its_names(tmp_path, capsys):
    assert main(["report", str(GPG), "--out", str(tmp_path / "rep")]) == 0
    page = (tmp_path / "rep" / "report.html").read_text(encoding="utf-8")
    assert _named_with_a_flag(page) == [] and "entropylaw forecast --n-problems" in page
    assert main(["demo", str(GPG), "--out", str(tmp_path / "demo")]) == 0
    demo = (tmp_path / "demo" / "report.html").read_text(encoding="utf-8")
    assert _named_with_a_flag(demo) == [] and "entropylaw forecast --n-problems" in demo
    capsys.readouterr()
    el.report(el.load(str(GPG), warn=False), out=tmp_path / "api")
    api_page = (tmp_path / "api" / "report.html").read_text(encoding="utf-8")
    assert "`n_problems`" in api_page and "--n-problems" not in api_page  # the Python API says its own names


def test_the_results_are_reworded_as_text_and_the_run_names_are_kept():
    from entropylaw.results.model import RunResults
    from entropylaw.results.picks import Picks

    row = {"run_id": "odd`fit_frac`id", "why": "choose a larger `fit_frac`", "trust_reasons": ["`fit_frac` small"],
           "ceiling_ci": (0.1, 0.2), "n": 3}
    fc = {"run_id": "odd`fit_frac`id", "threshold_source": "give `n_problems` N", "forecast_ci": (0.1, 0.2)}
    res = RunResults([row], [fc], notes=["r: `fit_frac`"], left_out={"x": "no `y`"}, picks=Picks([fc], [], [row], 1))
    out = res.in_words(lambda text: text.replace("`fit_frac`", "--fit-frac").replace("`n_problems`", "--n-problems"))
    assert out.rows[0] == {**row, "why": "choose a larger --fit-frac", "trust_reasons": ["--fit-frac small"]}
    assert out.forecasts[0]["threshold_source"] == "give --n-problems N"
    assert out.forecasts[0]["forecast_ci"] == (0.1, 0.2)
    assert out.notes == ["r: --fit-frac"] and out.left_out == {"x": "no `y`"}
    assert out.picks.untrusted[0]["why"] == "choose a larger --fit-frac" and out.picks.n_untrusted == 1
    assert res.rows[0]["why"] == "choose a larger `fit_frac`"  # a copy: the results themselves are kept


def test_report_quiet_prints_no_skipped_figures_as_figures_quiet_does(tmp_path, capsys):
    """`report -q` printed six 'entropylaw: skipped ...' lines where `figures -q` prints none: the
    page written is said, and the skipped figures are on the page ("Not drawn")."""
    assert main(["report", str(GPG), "--out", str(tmp_path / "rep"), "-q"]) == 0
    err = capsys.readouterr().err
    assert "skipped" not in err, err
    assert "Not drawn" in (tmp_path / "rep" / "report.html").read_text(encoding="utf-8")


def test_report_says_how_many_warnings_the_page_holds_and_the_first_few_as_figures_does(tmp_path, capsys):
    """`report` said none of the fits' warnings (a <= 0, entropy rising) on the terminal, where
    `figures` does: the page had them under "Warnings (n)" unseen. It now says how many the page
    holds and the first few, one `entropylaw: warning:` each, as `figures` prints them; -q: none."""
    import numpy as np

    s = np.arange(0, 300, 10)
    h = 0.1 + np.exp(-s / 80)
    recs = [(t, "entropy", v) for t, v in zip(s, h)]
    recs += [(t, "val/gsm8k", 0.2 + 0.3 * np.exp(v)) for t, v in zip(s, h)]  # the score falls with entropy: a < 0
    path = tmp_path / "runs.csv"
    el.table.write(el.table.from_records(recs, run_id="falls"), path)
    assert main(["report", str(path), "--out", str(tmp_path / "rep")]) == 0
    err = [" ".join(line.split()) for line in re.split(r"\n(?! )", capsys.readouterr().err) if line]  # unwrapped
    page = (tmp_path / "rep" / "report.html").read_text(encoding="utf-8")
    n = int(re.search(r"Warnings \((\d+)\)", page).group(1))
    head = next(i for i, line in enumerate(err) if line.startswith("entropylaw: the page holds"))
    assert err[head].startswith(f"entropylaw: the page holds {n} warning"), err
    said = [line for line in err[head + 1:] if line.startswith("entropylaw: warning: ")]
    assert said and any("<= 0" in line for line in said), err
    assert main(["report", str(path), "--out", str(tmp_path / "rep2"), "-q"]) == 0
    assert "warning" not in capsys.readouterr().err


def test_alternatives_are_cut_to_the_options_the_command_has():
    commands = sub_commands(build_parser())
    text = "choose a larger `fit_steps`/`fit_frac`; or `fit_frac`/`fit_steps`."
    assert in_flags(text, commands["report"]) == "choose a larger --fit-frac; or --fit-frac."
    assert in_flags(text, commands["report"], others={"forecast": commands["forecast"]}) == \
        "choose a larger --fit-frac; or --fit-frac."  # not the other command's --fit-steps beside its own
    assert in_flags(text, commands["forecast"]) == "choose a larger --fit-steps/--fit-frac; or --fit-frac/--fit-steps."
    assert in_flags("`no_such`/`other`", commands["report"]) == "`no_such`/`other`"  # none has one: kept


def test_report_advises_only_its_own_window_option(tmp_path, capsys):
    """A run whose validation starts at step 60 of 200: at report's --fit-frac 0.15 (steps 1..30) neither the forecast
    nor the early prediction has a point; the advice named `fit_steps`, an option report does not have."""
    import json

    import numpy as np

    path = tmp_path / "late.jsonl"
    with open(path, "w") as f:
        for s in range(1, 201):
            H = 1.5 * np.exp(-s / 60) + 0.1
            row = {"step": s, "actor/entropy": H, "critic/score/mean": 1.2 - 0.3 * np.exp(H)}
            if s % 10 == 0 and s >= 60:
                row["val-core/gsm8k/acc/mean@1"] = 1.2 - 0.3 * np.exp(H)
            f.write(json.dumps(row) + "\n")
    assert main(["report", str(path), "--out", str(tmp_path / "rep")]) == 0
    err = " ".join(capsys.readouterr().err.split())
    page = (tmp_path / "rep" / "report.html").read_text(encoding="utf-8")
    assert err.count("choose a larger --fit-frac)") == 2 and "fit-steps" not in err and "fit_steps" not in err
    assert "choose a larger --fit-frac" in page and "fit-steps" not in page and "fit_steps" not in page
