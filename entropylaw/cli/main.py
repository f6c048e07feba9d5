"""``entropylaw`` command line.

Each sub-command lives in its own module ``entropylaw.cli.<module>`` exposing
``add_parser(subparsers)``, which adds its parser and sets ``func=run`` where
``run(args) -> int``. Modules import heavy dependencies (torch, transformers) inside
``run`` only, so ``entropylaw fit`` starts fast.
"""

from __future__ import annotations

import argparse
import sys
import warnings

from entropylaw import __version__
from entropylaw.cli import (algorithms, figures, fit, forecast, ingest, lab, predict, probe, probe_checkpoints,
                            report, scale, summary)
from entropylaw.errors import EntropyLawError, EntropyLawWarning

# sub-command modules, in the order --help lists them
COMMANDS = [ingest, summary, fit, predict, forecast, scale, algorithms, probe, probe_checkpoints, lab, figures,
            report]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="entropylaw",
        description="Entropy collapse in RL for reasoning LLMs: ingest logs, fit R = -a*exp(H) + b, "
        "predict the ceiling, probe token covariance.",
    )
    parser.add_argument("--version", action="version", version=f"entropylaw {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMANDS:
        module.add_parser(subparsers)
    return parser


def _show_warning(message, category, filename, lineno, file=None, line=None):
    if issubclass(category, EntropyLawWarning):
        print(f"entropylaw: warning: {message}", file=sys.stderr)
    else:
        print(warnings.formatwarning(message, category, filename, lineno, line), file=sys.stderr, end="")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    warnings.showwarning = _show_warning
    try:
        return int(args.func(args) or 0)
    except EntropyLawError as err:
        print(f"entropylaw: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("entropylaw: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
