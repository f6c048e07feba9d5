"""The CLI says its flags where the API's messages name parameters (core messages are in API terms)."""

from __future__ import annotations

import argparse

from entropylaw.cli.main import build_parser, command_parser
from entropylaw.cli.terms import in_flags


def _command(*argv):
    parser = build_parser()
    return command_parser(parser, parser.parse_args(list(argv)))


def test_each_command_says_its_own_flag_for_an_api_parameter():
    msg = "`fit_frac` must lie strictly between 0 and 1; `only` 'x': no such run; `at_steps` 3"
    assert in_flags(msg, _command("forecast", "a.csv")) == \
        "--fit-frac must lie strictly between 0 and 1; --run 'x': no such run; --at-step 3"
    assert in_flags("`only` 'x': no such run", _command("fit", "a.csv")) == "--only 'x': no such run"


def test_a_nested_command_is_translated_by_its_own_parser():
    cmd = _command("lab", "run", "--out", "d")
    assert "--out" in {s for a in cmd._actions for s in a.option_strings}
    assert in_flags("choose another `out` or delete it", cmd) == "choose another --out or delete it"


def test_an_error_line_drops_the_backticks_of_what_the_command_has_no_flag_for():
    cmd = _command("probe-checkpoints", "ckpt", "--prompts", "p", "--out", "o.parquet")
    assert in_flags("`model` /x: no such file", cmd, plain=True) == "model /x: no such file"
    assert in_flags("`model` /x: no such file", cmd) == "`model` /x: no such file"  # results keep them
    assert in_flags("see `entropylaw audit` and `model`", argparse.ArgumentParser(), plain=True) == \
        "see `entropylaw audit` and model"
