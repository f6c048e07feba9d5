"""`report` on runs that log a score and no policy entropy (a custom training loop that prints
its validation accuracy alone): `forecast` and `rank` forecast such a run, but `report` refused
the whole page ("nothing to report: no run has both entropy and a score"). The page now holds
each such run's forecast, and one line, where the law's numbers would be, saying why it has no
law fit; a run with neither a score nor entropy is still left out with its reason, and nothing
at all to show is still one error line."""

from __future__ import annotations

import json
import math
import re

import pandas as pd

import entropylaw as el
from conftest import run_cli

REASON = ("no law fit: logs no policy entropy: the law R = -a·exp(H) + b needs it; name it with --entropy-key if "
          "it is logged under another name")


def _printed_loop(path):
    """A custom GRPO loop's printed log: a progress line per microbatch, and every 5 iterations an
    evaluation under its own header (its accuracy among a sample's question, answer and metrics)."""
    lines = ["Model Device:  cuda:1", "Loading vllm model..."]
    for it in range(101):
        for mb in range(4):
            lines += [f"GRPO Iteration:  {it} Epoch:  0 Microbatch:  {mb} / 4",
                      "[MEM cuda:1][after step] alloc=18.55 GB  reserved=34.34 GB  peak=34.06 GB"]
        if it % 5 == 0:
            acc = 0.7 - 0.66 * math.exp(-it / 8) + 0.004 * math.sin(it)
            lines += [f"GRPO Iteration {it}, Epoch 0, Evaluating...",
                      "Processed prompts: 100%|█| 1319/1319 [00:34<00:00, 38.73it/s, est. speed input: 5966.24 "
                      "toks/s, output: 8243.83 toks/s",
                      f"Percentage of correct examples:  {acc}",
                      "Question:  What is 2 + 3?", "Generation:  5",
                      "Metrics:  {'format_reward': 1.0, 'answer_reward': 1.0, 'reward': 1.0}",
                      "GT Answer:  5", "--------------------------------"]
    path.write_text("\n".join(lines) + "\n")
    return path


def _with_entropy(path):
    with path.open("w") as f:
        for s in range(0, 200, 5):
            h = math.exp(-s / 60) + 0.1
            row = {"step": s, "actor/entropy": h}
            if s % 10 == 0:
                row["val/gsm8k"] = 0.8 - 0.2 * math.exp(h) + 0.003 * math.sin(s)
            f.write(json.dumps(row) + "\n")


def _no_entropy(path):
    steps = range(0, 200, 10)
    pd.DataFrame({"step": steps, "eval_acc": [0.7 - 0.5 * math.exp(-s / 50) for s in steps],
                  "loss": [1 / (s + 1) for s in steps]}).to_csv(path, index=False)


def _neither(path):
    pd.DataFrame({"step": [1, 2, 3], "loss": [0.5, 0.4, 0.3], "lr": [0.1, 0.1, 0.1]}).to_csv(path, index=False)


def _section(page: str, name: str) -> str:
    start = page.index(f'<section id="{name}">')
    return page[start:page.index("</section>", start)]


def test_a_printed_loop_with_no_entropy_gets_its_page_with_the_forecast_and_why_no_law(tmp_path):
    log = _printed_loop(tmp_path / "grpo_loop.txt")
    out = tmp_path / "rep"
    res = run_cli("report", str(log), "--out", str(out), "--fit-frac", "0.4")
    assert res.returncode == 0, res.stderr
    said = " ".join(res.stderr.split())
    assert "grpo_loop: its forecast alone, no law fit: logs no policy entropy" in said and "left out" not in said
    page = (out / "report.html").read_text()
    forecast = _section(page, "forecast")
    # the run's forecast from its first 40 %, with its interval, and the figure beside the table
    assert "grpo_loop" in forecast and re.search(r"\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\]", forecast), forecast
    assert 'id="forecast_final_score"' in forecast
    # the one line where the law's numbers would be: the forecast's law ceiling, the coefficients
    assert REASON in forecast and REASON in _section(page, "details")
    assert "no law fit" in _section(page, "saturation") and "Left out: run" not in page
    assert "Forecast alone, no law fit: 1 run that logs no policy entropy (grpo_loop;" in page


def test_the_api_names_the_runs_forecast_with_no_law(tmp_path):
    df = el.load(_printed_loop(tmp_path / "grpo_loop.txt"), warn=False)
    rep = el.report(df, out=tmp_path / "rep", fit_frac=0.4)
    assert rep.left_out == {} and list(rep.no_law) == ["grpo_loop"]
    assert rep.no_law["grpo_loop"].startswith("logs no policy entropy") and "`entropy_key`" in rep.no_law["grpo_loop"]


def test_a_folder_mixing_runs_with_and_without_entropy_shows_each_as_it_can(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    _with_entropy(runs / "with_entropy.jsonl")
    _no_entropy(runs / "no_entropy.csv")
    _neither(runs / "only_loss.csv")
    out = tmp_path / "rep"
    res = run_cli("report", str(runs), "--out", str(out))
    assert res.returncode == 0, res.stderr
    said = " ".join(res.stderr.split())
    assert "left out (1 run): only_loss (no score and no entropy (the run's keys: loss, lr;" in said
    assert "no_entropy: its forecast alone, no law fit" in said
    page = (out / "report.html").read_text()
    first = _section(page, "saturation")
    assert first.count("good fit</span>") >= 1 and "no law fit" in first  # the law's run fitted, the other said
    forecast = _section(page, "forecast")
    assert "no_entropy" in forecast and REASON in forecast
    assert len(re.findall(r"\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\]", forecast)) >= 2  # both runs forecast
    assert "Left out: 1 run with no score (only_loss;" in page and "Left out: run only_loss: no score and" in page
    assert "only_loss" not in first  # not on the tables: nothing to show
    assert run_cli("report", str(runs), "--out", str(tmp_path / "strict"), "--strict").returncode == 2


def test_nothing_to_show_is_still_one_error_line(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    _neither(runs / "only_loss.csv")
    pd.DataFrame({"step": [1, 2, 3], "entropy": [0.5, 0.4, 0.3]}).to_csv(runs / "only_entropy.csv", index=False)
    res = run_cli("report", str(runs), "--out", str(tmp_path / "rep"))
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("entropylaw: error")]
    assert res.returncode == 2 and len(errors) == 1, res.stderr
    assert "nothing to report: no run logs a score" in errors[0] and "Traceback" not in res.stderr
    assert "name them with --val-key or --score-key, and --entropy-key" in errors[0]
    assert not (tmp_path / "rep").exists()


def test_the_keys_listed_for_a_run_with_no_entropy_put_the_score_first(tmp_path):
    """A printed log's other keys ('eval/GT Answer', 'eval/Processed prompts') came first, alphabetically,
    and hid its score behind 'and 2 more'."""
    res = run_cli("fit", str(_printed_loop(tmp_path / "grpo_loop.txt")))
    assert res.returncode == 2
    said = " ".join(res.stderr.split())
    keys = said.split("(the run's keys: ", 1)[1].split(";", 1)[0].split(", ")
    # the scores first (the validation, and the rewards one sample's metrics printed beside it), then the rest
    assert "val/Percentage_of_correct_examples" in keys[:4] and keys.index("Microbatch") > keys.index(
        "val/Percentage_of_correct_examples"), res.stderr


def test_figures_of_a_mixed_folder_say_a_run_drawn_in_the_forecast_figure_once_and_not_as_left_out(tmp_path):
    """`figures` drew a run with a score and no entropy in the forecast figure and listed it as "left out"
    (of every figure); it is said once, as in the forecast figure alone with why it is in no law figure,
    the figure marks it and its caption says it; a run in no figure is still left out with its reason."""
    from entropylaw.figure_sets.build import build_all

    runs = tmp_path / "runs"
    runs.mkdir()
    _with_entropy(runs / "with_entropy.jsonl")
    _no_entropy(runs / "no_entropy.csv")
    _neither(runs / "only_loss.csv")
    res = run_cli("figures", str(runs), "--out", str(tmp_path / "figs"), "--format", "png")
    assert res.returncode == 0, res.stderr
    said = " ".join(res.stderr.split())
    assert "left out (1 run): only_loss (" in said and "no_entropy (" not in said, res.stderr
    assert said.count("no_entropy:") == 1 and "no_entropy: in the forecast figure alone, not in the law's figures: " \
        "no entropy metric" in said, res.stderr
    assert (tmp_path / "figs" / "forecast_final_score.png").is_file()
    built, _ = build_all(el.load(runs, warn=False), [], which=["forecast"])
    [fig] = built
    assert "1 run (no_entropy) logs no policy entropy: the forecast alone, no law ceiling." in fig.caption
    texts = [t.get_text() for ax in fig.fig.axes for t in ax.texts]
    assert any("no entropy: no law" in t for t in texts), texts
    # without the forecast figure the run is in no figure: left out, with its reason
    law = run_cli("figures", str(runs), "--out", str(tmp_path / "law"), "--format", "png", "--which", "law")
    assert law.returncode == 0 and "no_entropy (" in " ".join(law.stderr.split()), law.stderr
