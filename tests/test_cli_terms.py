"""Results speak the API's terms; the command line's text names its flags (entropylaw.cli.options)."""

from __future__ import annotations

import numpy as np

import entropylaw as el
import entropylaw.table as table
from entropylaw.cli.main import build_parser, command_parser, main
from entropylaw.cli.options import flag_of, in_flags


def _command(*argv):
    parser = build_parser()
    return command_parser(parser, parser.parse_args(list(argv)))


def _records(n=60):
    return table.from_records(
        [(s, "val/gsm8k", 0.8 - 0.4 * np.exp(-s / 80)) for s in range(0, 10 * n, 10)]
        + [(s, "entropy", 0.05 + np.exp(-s / 100)) for s in range(0, 10 * n, 10)], run_id="r")


def test_a_forecast_in_a_notebook_names_no_flag_and_no_script():
    text = str(el.forecast_all(_records(), fit_frac=0.3, methods=["default"], n_boot=20))
    assert "`methods` None gives every method" in text
    assert "--" not in text and "compare" not in text and "analysis/" not in text and ".py" not in text


def test_the_forecast_command_says_its_own_flag(capsys, tmp_path):
    path = tmp_path / "r.csv"
    table.write(_records(), path)
    assert main(["forecast", str(path), "--fit-frac", "0.3", "--n-boot", "20"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--compare shows every method" in out and "`methods`" not in out and "analysis/" not in out


def test_the_demo_screen_is_data_and_the_command_adds_what_to_type_next():
    df = el.load("data/real-sizes")
    screen = el.overview(df, sources=["data/real-sizes"])
    assert "entropylaw " not in str(screen) and "--" not in str(screen)
    tail = ["next: something"]
    assert screen.lines(tail=tail)[-1] == "next: something"


def test_each_command_says_its_own_flag_for_an_api_parameter():
    msg = "`fit_frac` must lie strictly between 0 and 1; `runs` 'x': no such run; `at_steps` 3"
    assert in_flags(msg, _command("forecast", "a.csv")) == \
        "--fit-frac must lie strictly between 0 and 1; --run 'x': no such run; --at-step 3"
    # --run selects runs in every command that reads them
    for argv in (["fit", "a.csv"], ["summary", "a.csv"], ["ingest", "a.csv"], ["report", "a.csv", "--out", "o"],
                 ["figures", "a.csv", "--out", "o"], ["watch", "a.log"], ["demo"], ["scale", "a.csv"]):
        assert flag_of("runs", _command(*argv)) == "--run", argv


def test_a_nested_command_is_translated_by_its_own_parser():
    cmd = _command("lab", "run", "--out", "d")
    assert in_flags("choose another `out` or delete it", cmd) == "choose another --out or delete it"


def test_an_error_line_drops_the_backticks_of_what_the_command_has_no_flag_for():
    cmd = _command("probe-checkpoints", "ckpt", "--prompts", "p", "--out", "o.parquet")
    assert in_flags("`model` /x: no such file", cmd, plain=True) == "model /x: no such file"
    assert in_flags("`model` /x: no such file", cmd) == "`model` /x: no such file"  # results keep them
    assert in_flags("an odd ` backtick stays", cmd, plain=True) == "an odd ` backtick stays"
    assert in_flags("", cmd) == ""


def test_an_unknown_run_is_one_line_naming_the_flag(capsys):
    assert main(["summary", "data/real-sizes", "--run", "nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("entropylaw: error: --run: no run 'nope' among the 5 runs (")


def test_a_parameter_of_another_call_is_named_as_that_commands_flag(tmp_path, capsys):
    cmd = _command("lab", "export", "d", "--to", "t.csv")
    text = "no runs/ directory (expected the directory given to `lab_sweep(out)`)"
    assert in_flags(text, cmd, plain=True) == "no runs/ directory (expected the directory given to " \
                                              "'entropylaw lab sweep --out')"
    assert in_flags("launch `probe(shard)`", cmd) == "launch 'entropylaw probe --shard'"
    assert in_flags("see `forecast_all()`", cmd) == "see 'entropylaw forecast'"
    assert in_flags("`made_up(x)` stays", cmd) == "`made_up(x)` stays"  # no API function: not translated
    # the library speaks the API's names; the command line says the command
    try:
        el.lab_export(tmp_path, tmp_path / "t.csv")
    except el.api._Error as err:
        assert "`lab_sweep(out)`" in str(err) and "--" not in str(err)
    else:
        raise AssertionError("an empty directory was exported")
    assert main(["lab", "export", str(tmp_path), "--to", str(tmp_path / "t.csv")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("no runs/ directory (expected the directory given to 'entropylaw lab sweep --out')")
