"""Options are never abbreviated: argparse's prefix matching read ``fit data/real --run X``
(``forecast``'s way to pick a run) as ``--run-id X`` and renamed, then merged, every run read.
An unknown option is refused in one line naming what the user may have meant, exit 2."""

from __future__ import annotations

import argparse

import pytest

from entropylaw.cli.main import build_parser, main, unknown_arguments


def _commands(parser=None, name=()):
    """(name, parser) of the top-level parser and every sub-parser, nested ones (``lab run``) too."""
    parser = parser or build_parser()
    out = [(" ".join(name) or "entropylaw", parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, p in action.choices.items():
                out += _commands(p, name + (sub,))
    return out


COMMANDS = _commands()


def _long_options(parser) -> list[str]:
    return [s for a in parser._actions for s in a.option_strings if s.startswith("--") and s != "--help"]


def _minimal_argv(name: str, parser) -> list[str]:
    """The command and a value for each argument it requires, so parsing reaches the unknown option."""
    argv = [] if name == "entropylaw" else name.split()
    for a in parser._actions:
        if isinstance(a, (argparse._SubParsersAction, argparse._HelpAction)):
            continue
        value = str(a.choices[0]) if a.choices else "x"
        if not a.option_strings and a.nargs not in ("?", "*"):
            argv.append(value)
        elif a.option_strings and a.required:
            argv += [a.option_strings[0], value]
    return argv


def _refused(argv, capsys) -> str:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    out, err = capsys.readouterr()
    assert exit_.value.code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("entropylaw: error: ") and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("name, parser", COMMANDS, ids=[n for n, _ in COMMANDS])
def test_no_parser_abbreviates_an_option(name, parser):
    assert parser.allow_abbrev is False


PREFIXES = [(name, opt, opt[:-1]) for name, parser in COMMANDS for opt in _long_options(parser)
            if len(opt) > 3 and opt[:-1] not in _long_options(parser)]


@pytest.mark.parametrize("name, option, prefix", PREFIXES, ids=[f"{n}:{p}" for n, _, p in PREFIXES])
def test_an_option_cut_short_is_refused_in_one_line(name, option, prefix, capsys):
    parser = dict(COMMANDS)[name]
    value = [] if name == "entropylaw" else ["v"]  # at the top a value would be read as the command
    line = _refused(_minimal_argv(name, parser) + [prefix] + value, capsys)
    assert f"unknown option {prefix} (options are not abbreviated); did you mean" in line, line
    assert option in line  # the option it began, named


RUN_ID_COMMANDS = [name for name, parser in COMMANDS if "--run-id" in _long_options(parser)]


@pytest.mark.parametrize("name", RUN_ID_COMMANDS)
def test_run_is_never_read_as_run_id(name, capsys):
    parser = dict(COMMANDS)[name]
    line = _refused(_minimal_argv(name, parser) + ["--run-", "v"], capsys)
    assert "unknown option --run-" in line and "--run-id" in line
    if "--run" not in _long_options(parser):
        line = _refused(_minimal_argv(name, parser) + ["--run", "v"], capsys)
        assert "unknown option --run " in line and "--run-id" in line


def test_a_misspelt_option_is_said_before_a_missing_required_one(capsys):
    line = _refused(["predict", "data/real", "--fit-step", "10"], capsys)  # not "--fit-steps is required"
    assert "unknown option --fit-step (options are not abbreviated); did you mean --fit-steps" in line
    line = _refused(["predict", "data/real", "--", "--fit-step"], capsys)  # after --: an input, not an option
    assert "one of the arguments --fit-steps --fit-frac is required" in line


def test_run_picks_runs_in_every_command_and_a_guess_is_pointed_to_it(capsys):
    for argv in (["fit", "data/real"], ["forecast", "data/real"], ["summary", "data/real"], ["demo"]):
        assert build_parser().parse_args([*argv, "--run", "X", "--run", "Y"]).run == ["X", "Y"]
    line = _refused(["fit", "data/real", "--only", "X"], capsys)
    assert line.startswith("entropylaw: error: fit: unknown option --only (options are not abbreviated); did you mean "
                           "--run (keep only this run)")
    assert "did you mean --run (" in _refused(["forecast", "data/real", "--runs=X"], capsys)  # the = form too


def test_a_full_option_still_parses():
    args = build_parser().parse_args(["fit", "data/real", "--run-id", "X", "--run", "X"])
    assert (args.run_id, args.run) == ("X", ["X"])


def test_unknown_option_message_hostile_cases():
    p = argparse.ArgumentParser(prog="entropylaw t", allow_abbrev=False)
    p.add_argument("--alpha", help="the first %% (of three)")
    p.add_argument("--" + "x" * 300, help="long")
    assert unknown_arguments(p, ["stray"]) == "unrecognized arguments: stray"  # no option: argparse's words
    assert unknown_arguments(p, ["--"]) == "unrecognized arguments: --"
    assert unknown_arguments(p, ["--zzz"]) == "unknown option --zzz (options are not abbreviated)"  # nothing close
    assert unknown_arguments(p, ["--alph"]).endswith("did you mean --alpha (the first %)?")
    assert unknown_arguments(p, ["--alpha"]) == "unrecognized arguments: --alpha"  # known, but not here
    assert "did you mean --" + "x" * 300 + " (long)?" in unknown_arguments(p, ["--" + "x" * 200])
    assert unknown_arguments(p, ["--run", "X"]) == "unknown option --run (options are not abbreviated)"  # no picker


def test_watch_horizon_is_a_number_of_steps(capsys):
    line = _refused(["watch", "x.log", "--horizon", "abc"], capsys)
    assert "--horizon: 'abc': expected a number of steps such as 100" in line and "seconds" not in line
    assert "positive number of steps" in _refused(["watch", "x.log", "--total-steps", "0"], capsys)
    assert "number of seconds" in _refused(["watch", "x.log", "--interval", "abc"], capsys)


@pytest.mark.parametrize("name, parser", COMMANDS, ids=[n for n, _ in COMMANDS])
def test_an_option_of_several_values_given_twice_keeps_both(name, parser):
    """``figures --which scaling --which early`` drew only ``early``: argparse's ``nargs`` alone
    keeps the last use of an option, and the first is dropped unsaid. Every option that takes
    several values adds each use to the last (``extend``)."""
    for a in parser._actions:
        if a.option_strings and a.nargs in ("+", "*"):
            assert isinstance(a, argparse._ExtendAction), (name, a.option_strings)
            assert not a.default, (name, a.option_strings)  # extend adds to a default list: the default is set later


def test_figures_which_and_format_given_twice():
    args = build_parser().parse_args(["figures", "runs", "--out", "f", "--which", "scaling", "--which", "early", "law",
                                      "--format", "png", "--format", "svg"])
    assert args.which == ["scaling", "early", "law"] and args.format == ["png", "svg"]
    # png and pdf, filled in by the command
    assert build_parser().parse_args(["figures", "runs", "--out", "f"]).format is None


ONE_VALUE = [(name, opt) for name, parser in COMMANDS for a in parser._actions
             if isinstance(a, argparse._StoreAction) and a.nargs is None and not a.required and not a.choices
             for opt in a.option_strings[:1] if opt.startswith("--")]


@pytest.mark.parametrize("name, option", ONE_VALUE, ids=[f"{n}:{o}" for n, o in ONE_VALUE])
def test_an_option_of_one_value_given_twice_is_refused_in_one_line(name, option, capsys, tmp_path, monkeypatch):
    """``forecast RUN --fit-frac 0.1 --fit-frac 0.2`` read 0.2 and dropped 0.1 unsaid."""
    monkeypatch.chdir(tmp_path)  # where a command not refused (the code before this rule) would write
    parser = dict(COMMANDS)[name]
    window = name == "predict" and not option.startswith("--fit-")  # predict needs one of --fit-frac, --fit-steps
    argv = _minimal_argv(name, parser) + (["--fit-frac", "0.5"] if window else [])
    value = next((v for v in ("0.5", "1", "200", "1B", "0,1", "x") if _parses(argv + [option, v])), None)
    assert value is not None, option  # one of these is a value it takes
    capsys.readouterr()  # the tries' own errors
    line = _refused(argv + [option, value, f"{option}={value}"], capsys)
    assert f"{option} given 2 times (it takes one value" in line, line


def _parses(argv) -> bool:
    try:
        build_parser().parse_args(argv)
        return True
    except SystemExit:
        return False


def test_a_short_option_given_twice_is_refused_too(capsys, tmp_path, monkeypatch):
    """``ingest RUN -o a.csv -o b.csv`` wrote b.csv alone, unsaid."""
    monkeypatch.chdir(tmp_path)
    for argv in (["ingest", "x", "-o", "a.csv", "-ob.csv"], ["ingest", "x", "-o", "a.csv", "--output", "b.csv"]):
        assert "given 2 times (it takes one value" in _refused(argv, capsys)
    assert not list(tmp_path.iterdir())


def test_watch_follows_one_run_and_says_so_when_given_two(tmp_path, capsys):
    assert main(["watch", "data/real", "--run", "a", "--run", "b", "--plain", "--max-refreshes", "1"]) == 2
    err = capsys.readouterr().err
    assert "--run given 2 times (a, b): watch follows one run" in err and "Traceback" not in err


@pytest.mark.parametrize("argv, value", [
    (["scale", "x.csv", "--predict", "-1B"], "-1B"),
    (["forecast", "x.csv", "--total-steps", "-1e3"], "-1e3"),
    (["forecast", "x.csv", "--val-key", "-acc"], "-acc"),
])
def test_a_value_starting_with_a_dash_is_said_with_how_to_give_it(argv, value, capsys):
    """argparse reads ``-1B`` as an option and says only "expected one argument"."""
    err = _refused(argv, capsys)
    option = argv[2]
    assert f"'{value}' starts with '-' and was read as an option; give {option}={value}" in err
    assert len(err.strip().splitlines()) == 1


def test_a_value_attached_with_equals_reaches_its_own_check(capsys):
    err = _refused(["scale", "x.csv", "--predict=-1B"], capsys)
    assert "expected a positive parameter count" in err
