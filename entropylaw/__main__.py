"""``python -m entropylaw`` and the installed ``entropylaw`` script: the command line
(:mod:`entropylaw.cli.main`), with Ctrl-C while it starts (importing numpy, pandas, scipy) one
line and exit 130, as later (:mod:`entropylaw._startup`)."""

from entropylaw._startup import interrupted_on_start


def main() -> int:
    with interrupted_on_start(always=True):  # its imports and what main() does before its own handler
        from entropylaw.cli.main import main as command

        return command()


if __name__ == "__main__":
    raise SystemExit(main())
