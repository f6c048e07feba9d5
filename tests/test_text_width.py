"""Every command's text fits the width: 120 columns when stdout is not a terminal (a pipe, a
log, a test), ``COLUMNS`` when set, with no line ending in spaces; the tables' layout rules
(numbered notes, optional columns, names broken at their separators) at their edges; and
progress that shows only on a terminal, else at most a line per 10 %."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from entropylaw.fit.text_table import fmt_table
from entropylaw.progress import Progress
from entropylaw.terminal import pieces, width, wrap

ROOT = Path(__file__).resolve().parents[1]
REAL, SIZES = "data/real", "data/real-sizes"
RUN = "data/real/verl_ppo_qwen2.5-0.5b-instruct_gsm8k_resp512_verl-data.parquet"
COMMANDS = {
    "fit": ["fit", REAL],
    "forecast": ["forecast", REAL, "--n-boot", "20"],
    "forecast --compare": ["forecast", SIZES, "--compare", "--fit-frac", "0.25", "--n-boot", "20"],
    "forecast --full": ["forecast", SIZES, "--full", "--fit-frac", "0.25", "--n-boot", "20"],
    "rank": ["rank", REAL, "--fit-frac", "0.25", "--n-boot", "20"],
    "summary": ["summary", REAL],
    "scale": ["scale", SIZES, "--predict", "32B", "--predict", "72B"],
    "predict": ["predict", REAL, "--fit-frac", "0.3", "--curve"],
    "algorithms": ["algorithms", *(f"{REAL}/verl_{n}.parquet" for n in (  # one benchmark; the gpg run left out
        "gpg_qwen2-7b-instruct_gsm8k+math_fsdp", "grpo_deepseek-llm-7b-chat_gsm8k_mi300",
        "ppo_deepseek-llm-7b-chat_gsm8k_mi300"))],
    "ingest": ["ingest", REAL],
    "watch": ["watch", RUN, "--plain", "--max-refreshes", "1", "--interval", "0.01", "--n-boot", "20"],
}


def _run(args, capsys, monkeypatch, columns=None):
    """A command's output, run in this process with its stdout captured (not a terminal, as a pipe is)."""
    from entropylaw.cli.main import main

    monkeypatch.chdir(ROOT)
    if columns:
        monkeypatch.setenv("COLUMNS", str(columns))
    capsys.readouterr()
    code = main(list(args))
    out = capsys.readouterr()
    assert code == 0, out.err[-2000:]
    return out.out


def check_fits(text: str, limit: int = 120) -> None:
    lines = text.splitlines()
    assert lines, "no output"
    wide = [ln for ln in lines if len(ln) > limit]
    assert not wide, f"{len(wide)} line(s) over {limit}: {wide[0]!r}"
    padded = [ln for ln in lines if ln != ln.rstrip()]
    assert not padded, f"{len(padded)} line(s) end in spaces: {padded[0]!r}"


@pytest.mark.skipif(not (ROOT / REAL).is_dir(), reason="no data/real")
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_command_fits_120_columns_when_piped(name, capsys, monkeypatch):
    check_fits(_run(COMMANDS[name], capsys, monkeypatch))


@pytest.mark.skipif(not (ROOT / REAL).is_dir(), reason="no data/real")
@pytest.mark.parametrize("name", ["fit", "summary", "scale"])
def test_columns_sets_the_width(name, capsys, monkeypatch):
    out = _run(COMMANDS[name], capsys, monkeypatch, columns=80)
    check_fits(out, 80)
    if name != "scale":  # its table fits 80 whole
        assert "left out at 80 columns" in out  # said, not silently lost


def test_the_width_rule(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    assert width(io.StringIO()) == 120  # not a terminal

    class Tty(io.StringIO):
        def isatty(self):
            return True
    monkeypatch.setattr("shutil.get_terminal_size", lambda fallback=None: os.terminal_size((97, 30)))
    assert width(Tty()) == 97
    monkeypatch.setenv("COLUMNS", "150")
    assert width(io.StringIO()) == 150
    monkeypatch.setenv("COLUMNS", "3")  # nothing readable fits 3 columns: the floor
    assert width(io.StringIO()) == 40
    monkeypatch.setenv("COLUMNS", "wide")  # not a number: ignored
    assert width(Tty()) == 97


def test_names_break_at_separators_and_numbers_never():
    assert pieces("qwen2.5-14b-instruct_grpo-lora_math") == ["qwen2.5-", "14b-", "instruct_", "grpo-", "lora_", "math"]
    assert pieces("val/DigitalLearningGmbH/MATH-lighteval") == ["val/", "DigitalLearningGmbH/", "MATH-", "lighteval"]
    assert pieces("qwen2.5-7b__exp1a") == ["qwen2.5-", "7b__", "exp1a"]
    for number in ("-0.4073", "[-1.0000,", "1e-05", "2.69e-05", "[0.1, 0.2]"):
        assert all(len(pieces(w)) == 1 for w in number.split())


def test_wrap_hangs_continuations_and_is_idempotent():
    line = "  stop paying (power): step 200 [200, 200]: the expected gain over the next 39 steps stays below 0.0262"
    out = wrap(line, 50)
    assert all(len(ln) <= 50 for ln in out.splitlines())
    assert [ln[:4] for ln in out.splitlines()[1:]] == ["    "] * (len(out.splitlines()) - 1)
    assert wrap(out, 50) == out
    note = wrap("[3] cannot run: entropy rises over the window (0.199 -> 0.26 nats)", 30).splitlines()
    assert note[1].startswith("    ") and not note[1].startswith("     ")  # under the note's text
    assert wrap("x" * 130, 40).splitlines() == ["x" * 38, "  " + "x" * 38, "  " + "x" * 38, "  " + "x" * 16]
    assert wrap("", 40) == "" and wrap("trailing   \nspaces ", 40) == "trailing\nspaces"


LONG = ["qwen2.5-14b-instruct_grpo-lora_math", "qwen2.5-7b-instruct_grpo-lora_math",
        "deepseek-llm-7b-chat_ppo-full_math"]


def _rows(n=3):
    return [{"run": LONG[i % 3] + f"_seed{i}", "score": "val/DigitalLearningGmbH/MATH-lighteval",
             "ceiling": 0.8 + i / 100, "ci": (0.7, 0.9), "trust": "law does not apply", "r2": 0.5,
             "why": "entropy rises over the window (0.199 -> 0.26 nats): the law describes entropy being consumed"}
            for i in range(n)]


COLS = [("run", "run"), ("score", "score"), ("ceiling", "ceiling"), ("ceiling_ci", "ci"), ("trust", "trust"),
        ("r2", "r2"), ("why", "why")]


@pytest.mark.parametrize("columns", [300, 200, 120, 100, 80, 60, 40])
def test_a_table_of_long_names_fits_every_width(columns):
    out = fmt_table(_rows(), COLS, width=columns, note="why", optional=("r2",), wraps=("run", "score", "why"))
    check_fits(out, columns)
    lines = out.splitlines()
    if columns >= 80:  # numbers whole, the names broken only at their separators
        assert all(n in out for n in ("0.8000", "0.8100", "0.8200", "[0.7000,"))
        cut = lines[0].index("score")
        body = lines[1:next((i for i, ln in enumerate(lines) if ln.startswith("[1]")), None)]
        parts = [ln[:cut].strip() for ln in body if ln[:cut].strip()]
        assert "".join(parts) == "".join(r["run"] for r in _rows())
        assert all(p.endswith(("_", "-", "/")) or p[-5:-1] == "seed" for p in parts)
    if columns < 300:
        assert "[1] entropy rises" in out and out.count("entropy rises") == 1  # one note for three rows
    else:
        assert out.count("entropy rises") == 3  # everything fits on one line: the notes stay in their column


def test_an_optional_column_is_left_out_only_when_needed_and_said():
    wide = fmt_table(_rows(), COLS, width=300, note="why", optional=("r2",))
    assert "left out" not in wide and "r2" in wide.splitlines()[0]
    narrow = fmt_table(_rows(), COLS, width=80, note="why", optional=("r2", "nonexistent"))
    assert "(left out at 80 columns: r2; the JSON has them)" in narrow and " r2 " not in narrow.splitlines()[0]
    # a heading hyphenated over two lines is named as one word ("algo-\nrithm" was said "algo- rithm")
    from entropylaw.fit.run_summary import format_summary, summarize
    from entropylaw import table
    said = format_summary(summarize(table.from_records([(1, "val/acc", 0.4), (2, "val/acc", 0.5)], run_id="r")), 80)
    assert "algorithm" in " ".join(said.split()) and "algo- rithm" not in " ".join(said.split())


def test_hostile_tables():
    assert fmt_table([], [("run", "run"), ("ceiling", "ceiling")]) == "run  ceiling"  # no rows: the header
    one = fmt_table([{"run": "r", "ceiling": float("nan")}], [("run", "run"), ("ceiling", "ceiling")])
    assert one.splitlines() == ["run  ceiling", "r    -"]
    word = "x" * 300  # one word wider than the terminal: folded, nothing lost
    out = fmt_table([{"run": word, "n": 3}], [("run", "run"), ("n", "n")], width=40)
    check_fits(out, 40)
    assert "".join(ln[:37].strip() for ln in out.splitlines()[1:]).replace("3", "") == word
    assert fmt_table([{"a": 1}], [], width=40) == ""
    indented = fmt_table(_rows(1), COLS, width=60, indent=4, note="why")
    check_fits(indented, 60)
    assert all(ln.startswith("    ") for ln in indented.splitlines() if ln)


def test_a_screen_value_wider_than_its_column_takes_blank_space_not_a_121st_column():
    """The demo's run lines: a score in its own units (-12.35 reached, a ceiling of 103.5) is wider
    than its column; the blank after it takes it up, one space kept before the next value, and
    where no blank is left the run's name gives way (before: every such line pushed to 121)."""
    from entropylaw.results.columns import SCREEN, screen_header, screen_line

    fc = {"forecast": -11.234, "forecast_ci": [-15.5, -10.25], "final_observed": -12.345, "gain": 1.5,
          "gain_ci": [-2.25, 4.75], "call": "undecided", "point": None, "regime": "collapse risk", "method": "m",
          "target_kind": "validation"}
    row = {"number": 24, "run_id": "qwen2.5-0.5b-instruct_grpo-lora_gsm8k_seed_with_a_long_name", "kind": "val",
           "steps": 12000, "ceiling": 103.512, "trust": "good fit", "fc": fc}
    header = screen_header(SCREEN)
    assert len(header) <= 120
    # no gain (a gain in the score's own units, "+1.500 [-2.250, +4.750]", is itself wider than its column)
    calm = {**fc, "forecast": 0.5, "forecast_ci": [0.25, 0.75], "gain": None}
    one = screen_line(SCREEN, {**row, "ceiling": 0.8, "fc": calm}, 120)  # one value too wide: the blank after it
    assert len(one) <= 120 and " v -12.345 " in one and "~h_a_long_name " in one, one
    assert one.index("0.800") + len("0.800") == header.index("ceiling") + len("ceiling")  # before it: in its column
    every = screen_line(SCREEN, row, 120)  # every value too wide: no blank left, the run's name gives way
    assert len(every) == 120, every
    for value in ("-12.345", "103.512", "-11.234 [-15.50, -10.25]", "undecided", "12000", "24 qwen2.5"):
        assert f" {value}" in f" {every}", (value, every)  # whole, and apart from what comes before it
    assert len(screen_line(SCREEN, row)) == 125  # without a width to keep: pushed, nothing cut (gain: 23 wide)


def test_the_coefficients_of_seven_long_named_runs_stay_short_rows():
    rows = [{"run": f"{LONG[i % 3]}_seed{i}", "score": "val/DigitalLearningGmbH/MATH-lighteval", "ceiling": 0.8,
             "ci": (0.7, 0.9), "trust": "good fit", "r2": 0.9} for i in range(7)]
    out = fmt_table(rows, COLS[:-1], width=120)
    check_fits(out)
    assert len(out.splitlines()) <= 1 + 2 * 7  # at most two lines a run


def test_progress_off_a_terminal_is_a_line_per_tenth():
    log = io.StringIO()
    with Progress(200, "reading", "runs", stream=log) as bar:
        for _ in range(200):
            bar.update()
    lines = log.getvalue().splitlines()
    assert (len(lines) == 10 and lines[0] == "reading: 20/200 runs (10 %)"
            and lines[-1] == "reading: 200/200 runs (100 %)")
    assert "\r" not in log.getvalue()
    quiet = io.StringIO()
    for bar in (Progress(None, "ladder", stream=quiet), Progress(5, "x", stream=quiet, lines=False),
                Progress(5, "x", stream=quiet, enabled=False), Progress(0, "x", stream=quiet)):
        bar.update(3)
        bar.set_postfix(H=0.1)
        bar.close()
    assert quiet.getvalue() == ""
    few = io.StringIO()
    bar = Progress(3, "generate", "resp", stream=few)
    bar.update(3)  # one update past several tenths: one line
    assert few.getvalue() == "generate: 3/3 resp (100 %)\n"


def test_progress_on_a_terminal_is_a_live_bar():
    class Tty(io.StringIO):
        def isatty(self):
            return True
    screen = Tty()
    with Progress(50, "probe", "tok", stream=screen) as bar:
        bar.update(25)
        bar.set_postfix_str("clip_cov")
        assert bar.live is not None
    assert bar.live is None and "(10 %)" not in screen.getvalue()


def test_the_audits_printed_report_fits():
    """``entropylaw audit``'s text (its numbers come from a model: a tiny result here, with the
    longest source and verdict the command writes)."""
    from entropylaw.auditing.verdict import audit_text

    r = {"step": 2, "n_rollouts": 16, "n_tokens": 812, "temperature": 1.0, "logged": 2.18557,
         "source": "data/trl/audit/trainer_state.json (actor/entropy at step 2 of qwen2.5-14b-instruct_grpo-lora_math)",
         "conventions": {"token-mean": 2.18557, "seq-mean-token-sum-norm:T": 2.3, "trl-sft-attention-mask": 1.97},
         "matched": "token-mean", "within": ["seq-mean-token-sum-norm:T"], "tolerance": 0.044,
         "relative_tolerance": 0.023, "tolerance_model": {"assumes": "a bf16 trainer: its logits rounded to bf16 "
                                                                     "(relative 2^-8) and its entropy summed in fp32, "
                                                                     "the logged value a bf16 number too"},
         "verdict": "token-mean and seq-mean-token-sum-norm:T both lie within the tolerance: this batch cannot tell "
                    "them apart; rerun with --trainer-precision fp32 or a longer batch",
         "correction": {"factor": 1.0, "mapping": None}}
    out = audit_text(r)
    check_fits(out)
    assert "verdict: token-mean" in out and out.count("\n") > 6


@pytest.mark.skipif(not (ROOT / REAL).is_dir(), reason="no data/real")
def test_figures_says_what_it_skipped_within_120_columns(tmp_path):
    """`figures` printed each skipped figure's reason on one line of up to 192 columns (`report`
    wrapped the same lines)."""
    from conftest import run_cli

    out = run_cli("figures", RUN, "--out", str(tmp_path / "figs"), "--format", "png")
    assert out.returncode == 0 and "entropylaw: skipped " in out.stderr, out.stderr
    check_fits(out.stderr)


def test_a_zero_is_never_printed_negative(tmp_path):
    """``entropylaw fit`` on a run whose score is 0 throughout printed its ceiling's interval ``[-0.0000, 0.0000]``
    (a bound of -4e-151, a negative zero to 4 decimals): every table prints 0.0000."""
    from conftest import run_cli

    table = fmt_table([{"run": "r", "v": -0.0, "ci": (-4.3e-151, 4.3e-151), "small": -0.00004, "neg": -0.00006}],
                      [("run", "run"), ("v", "v"), ("ci", "ci"), ("small", "small"), ("neg", "neg")])
    assert table.splitlines()[1].split() == ["r", "0.0000", "[0.0000,", "0.0000]", "0.0000", "-0.0001"]
    path = tmp_path / "zero.csv"
    path.write_text("step,entropy,reward\n" + "".join(f"{s},{0.9 * 0.95 ** s + 0.05:.4f},0\n" for s in range(1, 61)))
    for command in (["fit"], ["summary"], ["predict", "--curve"], ["rank"]):
        out = run_cli(*command, str(path)).stdout
        assert "-0.0" not in out, (command, out)
    assert "[0.0000, 0.0000]" in run_cli("fit", str(path)).stdout
