"""Every name list of the command line comes from its registry: a choice added to a registry is
a choice of the command, and none is typed twice."""

import argparse

import pytest

from entropylaw.api import plumbing
from entropylaw.cli.main import build_parser
from entropylaw.draw.looks import FORMATS, STYLES
from entropylaw.fit.forms import FORMS
from entropylaw.fit.law import INTERVALS
from entropylaw.fit.pairing import MODES
from entropylaw.fit.robust import LOSSES
from entropylaw.table.convention import CONVERTIBLE


def _choices():
    """(command, flag) -> the choices its parser offers, every sub-command down to nested ones."""
    out = {}

    def walk(parser, name):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub, p in action.choices.items():
                    walk(p, f"{name} {sub}".strip())
            elif action.choices is not None and action.option_strings:
                out[(name, action.option_strings[-1])] = tuple(action.choices)
    walk(build_parser(), "")
    return out


REGISTRIES = {"--pairing": MODES, "--interval": INTERVALS, "--form": FORMS, "--robust": LOSSES,
              "--format": FORMATS, "--style": tuple(STYLES), "--estimator": plumbing.PROBE_ESTIMATORS,
              "--optimizer": plumbing.PROBE_OPTIMIZERS, "--scope": plumbing.PROBE_SCOPES}


def test_each_choice_list_is_its_registry():
    found = _choices()
    checked = 0
    for (command, flag), choices in found.items():
        if flag in REGISTRIES:
            assert choices == tuple(REGISTRIES[flag]), (command, flag)
            checked += 1
    assert checked >= 13  # pairing and interval in 4 fitting commands, form, robust, format, style, 3 of probe
    assert {f for _, f in found} <= set(REGISTRIES) | {"--method", "--prior-base", "--which"}


def test_the_entropy_conventions_named_in_help_are_the_registry():
    fit = build_parser()._subparsers._group_actions[0].choices["fit"]
    help_text = next(a.help for a in fit._actions if "--entropy-convention" in a.option_strings)
    assert help_text.endswith(", ".join(CONVERTIBLE))


def test_the_probes_torch_free_lists_are_its_registries():
    pytest.importorskip("torch")
    from entropylaw.probing.advantages import ESTIMATORS
    from entropylaw.probing.ladder import OPTIMIZERS, SCOPES

    assert (plumbing.PROBE_ESTIMATORS, plumbing.PROBE_OPTIMIZERS, plumbing.PROBE_SCOPES) == (ESTIMATORS, OPTIMIZERS,
                                                                                             SCOPES)


def test_the_api_refuses_a_name_not_in_the_probes_lists_before_loading_anything():
    import entropylaw as el
    from entropylaw.errors import EntropyLawError

    with pytest.raises(EntropyLawError, match=r"^`optimizer` 'rmsprop': expected one of sgd, adam$"):
        el.probe("no-such-model", "no-such.jsonl", out="never", optimizer="rmsprop")
