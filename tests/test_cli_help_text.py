"""Every command's ``--help`` is plain text: its description is the module's docstring, written
in reStructuredText for the API reference, and printed as it was (``data/real``, ``DIR``,
``Examples::``) it showed a newcomer the markup instead of the words; and it points to pages
that exist (the forecast's default method was "see the README", which does not say it)."""

import pytest

from entropylaw.cli.main import build_parser, sub_commands

COMMANDS = sub_commands(build_parser())


@pytest.mark.parametrize("words", sorted(COMMANDS))
def test_help_shows_no_restructuredtext(words):
    text = COMMANDS[words].format_help()
    assert "``" not in text, words
    assert "::\n" not in text, words


def test_the_main_help_too():
    assert "``" not in build_parser().format_help()


def test_the_forecast_default_method_points_to_its_page():
    text = COMMANDS["forecast"].format_help()
    assert "see the README" not in text
    assert "docs/guide/forecast.md" in " ".join(text.split())


def test_the_demo_names_its_report_folder_as_its_text_does():
    text = COMMANDS["demo"].format_help()
    assert "--out DIR" in text and "report to DIR" in " ".join(text.split())


@pytest.mark.parametrize("words", sorted(COMMANDS))
def test_every_option_says_what_it_does(words):
    bare = [a.option_strings[0] for a in COMMANDS[words]._actions if a.option_strings and not a.help]
    assert not bare, f"{words}: {bare}"
