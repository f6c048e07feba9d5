"""``entropylaw`` command line.

Each sub-command lives in its own module ``entropylaw.cli.<module>`` exposing
``add_parser(subparsers)``, which adds its parser and sets ``func=run`` where
``run(args) -> int``. Modules import heavy dependencies (torch, transformers) inside
``run`` only, so ``entropylaw fit`` starts fast.

One error path (:func:`main`), so every failure is one line on stderr:

- a user mistake (:class:`~entropylaw.errors.EntropyLawError`), a bad option value
  (argparse, same prefix) or an OS error on an input or output (permission, read-only
  file system, no space, is a directory, ...) prints ``entropylaw: error: ...`` and
  exits 2; an OS error reads ``<path>: <what> (<errno name>)``;
- anything else is a bug in entropylaw: one "please report" line, exit 1, and the
  traceback only with ``--debug`` (anywhere on the command line) or ``ENTROPYLAW_DEBUG=1``.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import signal
import sys
import traceback
import warnings

from entropylaw import api
from entropylaw.cli import (algorithms, audit, demo, figures, fit, forecast, ingest, lab, predict, probe,
                            probe_checkpoints, rank,
                            report, scale, summary, watch)
from entropylaw.cli.options import in_flags, print_warning
from entropylaw.errors import EntropyLawError, EntropyLawWarning, describe_os_error

# sub-command modules, in the order --help lists them
COMMANDS = [demo, ingest, summary, fit, predict, forecast, rank, scale, algorithms, watch, probe, probe_checkpoints,
            audit, lab, figures, report]
DEBUG_FLAG = "--debug"
REQUIRED = ("the following arguments are required", "one of the arguments")  # argparse's words
USER_ERROR, INTERNAL_ERROR, INTERRUPTED = 2, 1, 130


class Parser(argparse.ArgumentParser):
    """argparse with our one error line: ``entropylaw: error: <command>: <message>``, exit 2.

    argparse's own format (usage block, then ``prog: error: message``) would be a second
    format beside ours; the usage is one ``--help`` away, and the line says so.

    Options are never abbreviated (``allow_abbrev=False``, inherited by every sub-parser):
    argparse's prefix matching read ``fit --run X`` (``forecast``'s way to pick a run) as
    ``--run-id X`` and renamed every run read. An unknown option is refused by the
    sub-command's own parser, naming the options the user may have meant.
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def parse_args(self, args=None, namespace=None):
        parsed, extras = self.parse_known_args(args, namespace)
        command = command_parser(self, parsed)
        if extras:
            command.error(unknown_arguments(command, extras))
        twice = repeated_option(command, self.given)
        if twice:
            command.error(twice)
        return parsed

    def format_help(self):
        # a command's description is its module's docstring, written for the API reference: its
        # ``code`` marks and ``Examples::`` are reStructuredText, shown as plain words here
        text = re.sub(r"``(.+?)``", r"\1", super().format_help(), flags=re.DOTALL)
        return text.replace("::\n", ":\n")

    def parse_known_args(self, args=None, namespace=None):
        self.given = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message):
        if message.startswith(REQUIRED):  # `predict IN --fit-step 5`: the misspelt option is the news
            given = getattr(self, "given", [])
            given = given[:given.index("--")] if "--" in given else given
            options = {s for a in self._actions for s in a.option_strings}
            unknown = [t for t in given if t.startswith("--") and t.split("=", 1)[0] not in options]
            if unknown:
                message = unknown_arguments(self, unknown)
        message = invalid_choice(dashed_value(message, getattr(self, "given", [])))
        where = self.prog.removeprefix("entropylaw").strip()
        prefix = f"{where}: " if where else ""
        self.exit(USER_ERROR, f"entropylaw: error: {prefix}{message} (see '{self.prog} --help')\n")


def dashed_value(message: str, given: list[str]) -> str:
    """argparse's "expected one argument" where the value given starts with a dash (``--predict
    -1B``: argparse reads ``-1B`` as an option) says so and how to give it (``--predict=-1B``),
    so that the value's own check answers.

    >>> dashed_value("argument --predict: expected one argument", ["x", "--predict", "-1B"])
    "argument --predict: expected one argument: '-1B' starts with '-' and was read as an option; give --predict=-1B"
    """
    found = re.match(r"argument (\S+?)(?:/\S+)?: expected (?:one|at least one) argument", message)
    if not found:
        return message
    names = found.group(0).split(":")[0].removeprefix("argument ").split("/")
    for i, token in enumerate(given[:-1]):
        if token in names and given[i + 1].startswith("-") and given[i + 1] != "--" and \
                not given[i + 1].startswith("--"):
            value = given[i + 1]
            return f"{message}: {value!r} starts with '-' and was read as an option; give {token}={value}"
    return message


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="entropylaw",
        description="Entropy collapse in RL for reasoning LLMs: ingest logs, fit R = -a*exp(H) + b, "
        "predict the ceiling, probe token covariance.",
        epilog=f"{DEBUG_FLAG} (anywhere): show the traceback of an internal error.",
    )
    parser.add_argument("--version", action="version", version=f"entropylaw {api.__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMANDS:
        module.add_parser(subparsers)
    return parser


def _show_warning(message, category, filename, lineno, file=None, line=None, parser=None, said=None):
    if issubclass(category, EntropyLawWarning):
        text = in_flags(message, parser)
        if said is not None and text in said:  # a file read twice (a folder's percent check reads it again): once
            return
        print_warning(text)
        if said is not None:
            said.add(text)
    else:
        print(warnings.formatwarning(message, category, filename, lineno, line), file=sys.stderr, end="")


os_error_line = describe_os_error  # the one line of an OS error (entropylaw.errors)


def _internal_error(err: BaseException, debug: bool) -> None:
    if debug:
        traceback.print_exception(err)
    first = (str(err).splitlines() or [""])[0][:300]
    hint = "" if debug else f"; rerun with {DEBUG_FLAG} for the traceback"
    print(f"entropylaw: internal error: {type(err).__name__}: {first} (a bug in entropylaw {api.__version__}: "
          f"please report it with the command you ran{hint})", file=sys.stderr)


def _restore_sigint() -> None:
    """Ctrl-C (SIGINT) stops a command cleanly (``KeyboardInterrupt``: ``watch`` ends, a write is
    rolled back) even when the shell that started it ignores SIGINT, as a background job, a
    non-interactive script or some CI runners do: Python keeps an inherited ``SIG_IGN``."""
    try:
        if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    except ValueError:  # not the main thread (an embedding application): leave its signals alone
        pass


def main(argv: list[str] | None = None) -> int:
    _restore_sigint()
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = DEBUG_FLAG in argv or os.environ.get("ENTROPYLAW_DEBUG", "") not in ("", "0")
    argv = [a for a in argv if a != DEBUG_FLAG]
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return USER_ERROR
    command = command_parser(parser, args)
    said: set = set()  # the warnings this command printed: each once
    warnings.showwarning = lambda *a, **k: _show_warning(*a, **k, parser=command, said=said)
    if getattr(args, "quiet", False):  # -q: no warnings (an error is still said)
        warnings.simplefilter("ignore", EntropyLawWarning)
    commands = sub_commands(parser)
    # a result's text in the CLI's words; ``also``: the commands whose flags name what this one lacks
    args.flags = lambda text, also=(): in_flags(text, command, others={c: commands[c] for c in also})
    try:
        return int(args.func(args) or 0)
    except EntropyLawError as err:
        print(f"entropylaw: error: {in_flags(err, command, plain=True)}", file=sys.stderr)
        return USER_ERROR
    except KeyboardInterrupt:
        print("entropylaw: interrupted", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:
        _quiet_stdout()
        return 0
    except OSError as err:  # the environment (a file, a disk, a device), not a bug: say where and what
        print(f"entropylaw: error: {os_error_line(err)}", file=sys.stderr)
        return USER_ERROR
    except Exception as err:  # noqa: BLE001 -- the one place a bug becomes a one-line report
        _internal_error(err, debug)
        return INTERNAL_ERROR


def command_parser(parser, args):
    """The sub-command's own parser, down to a nested one (``lab run``): its options are the
    flags a message may name."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = getattr(args, action.dest, None)
            if chosen in action.choices:
                return command_parser(action.choices[chosen], args)
    return parser


def sub_commands(parser, prefix: str = "") -> dict:
    """Every sub-command's parser by its words (``'forecast'``, ``'lab run'``), nested ones too."""
    out = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                words = f"{prefix} {name}".strip()
                out[words] = sub
                out.update(sub_commands(sub, words))
    return out


def repeated_option(parser, given: list[str]) -> str | None:
    """The message for an option of one value given twice (``watch --run a --run b``: argparse keeps
    the last and drops the first unsaid), else None. Options of several values add up (``extend``).

    >>> p = argparse.ArgumentParser(prog="x")
    >>> _ = p.add_argument("--run")
    >>> repeated_option(p, ["--run", "a", "--run=b"])
    '--run given 2 times (it takes one value; the last would be used and the others dropped): give it once'
    >>> repeated_option(p, ["--run", "a", "--", "--run"]) is None
    True
    >>> _ = p.add_argument("-o", "--output")
    >>> repeated_option(p, ["-o", "a.csv", "-ob.csv"])[:28]
    '-o given 2 times (it takes o'
    """
    given = given[:given.index("--")] if "--" in given else given
    counts: dict[str, list[str]] = {}
    for token in given:
        # --name, --name=value; -o, -ovalue (a short option's value may follow it in the same word)
        name = token.split("=", 1)[0] if token.startswith("--") else token[:2] if token.startswith("-") else ""
        action = parser._option_string_actions.get(name) if name else None
        if isinstance(action, argparse._StoreAction) and action.nargs in (None, "?"):
            counts.setdefault(action.dest, []).append(name)
    for names in counts.values():
        if len(names) > 1:
            return (f"{' / '.join(dict.fromkeys(names))} given {len(names)} times (it takes one value; the last would "
                    "be used and the others dropped): give it once")
    return None


RUN_PICKERS = ("--run", "--runs", "--only", "--run-name", "--select")  # what users type to pick runs


def unknown_arguments(parser, extras: list[str]) -> str:
    """The message for arguments ``parser`` does not take: the first unknown option with the
    options it may have meant (those it begins, close spellings, and the command's way to pick
    runs when it looks like one), each with the start of its help; else argparse's words."""
    options = {s: a for a in parser._actions for s in a.option_strings if s.startswith("--")}
    unknown = next((t.split("=", 1)[0] for t in extras if t.startswith("--") and len(t) > 2), None)
    if unknown is None:
        return f"unrecognized arguments: {' '.join(extras)}"
    meant = [o for o in options if o.startswith(unknown)]
    if unknown in RUN_PICKERS:
        if "--run" in options:
            meant.insert(0, "--run")
    meant = list(dict.fromkeys(meant or close_to(unknown, list(options))))[:3]
    if unknown in meant:  # the option exists, but not where it was given (after a sub-command's own)
        return f"unrecognized arguments: {' '.join(extras)}"
    said = " or ".join(f"{o} ({_gist(options[o].help)})" if options[o].help else o for o in meant)
    return f"unknown option {unknown} (options are not abbreviated)" + (f"; did you mean {said}?" if said else "")


def close_to(word: str, candidates: list[str], cutoff: float = 0.75) -> list[str]:
    """The (at most 2) ``candidates`` spelt close to ``word``: an option or a command mistyped."""
    return difflib.get_close_matches(word, candidates, n=2, cutoff=cutoff)


def invalid_choice(message: str) -> str:
    """argparse's "invalid choice" (a command or an option's value mistyped) with the choices it may
    have meant, as an unknown option's (:func:`unknown_arguments`): those it begins, else close spellings.

    >>> invalid_choice("argument COMMAND: invalid choice: 'forcast' (choose from 'fit', 'forecast', 'rank')")
    "argument COMMAND: invalid choice: 'forcast' (choose from 'fit', 'forecast', 'rank'); did you mean 'forecast'?"
    >>> invalid_choice("argument --form: invalid choice: 'zzz' (choose from 'exp', 'linear')")[-8:]
    "linear')"
    """
    found = re.match(r"argument .+?: invalid choice: '(.*?)' \(choose from (.*)\)$", message, flags=re.DOTALL)
    if not found:
        return message
    given = found.group(1)
    choices = [c.strip().strip("'\"") for c in found.group(2).split(",")]
    meant = ([c for c in choices if given and c.startswith(given)] or close_to(given, choices, cutoff=0.6))[:3]
    return message + (f"; did you mean {' or '.join(map(repr, meant))}?" if meant else "")


def _gist(help_text: str) -> str:
    """The start of an option's help: up to its first parenthesis or semicolon."""
    return re.split(r" \(|;", help_text.replace("%%", "%"), maxsplit=1)[0].strip()


def _quiet_stdout() -> None:
    """After a closed pipe (``entropylaw summary ... | head``), stop Python's exit-time
    flush from failing on stdout again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    raise SystemExit(main())
