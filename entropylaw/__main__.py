"""``python -m entropylaw`` and the installed ``entropylaw`` script: the command line
(:mod:`entropylaw.cli.main`), with Ctrl-C while it starts (importing numpy, pandas, scipy) one
line and exit 130, as later (:mod:`entropylaw._startup`).

Under torchrun (``WORLD_SIZE`` above 1) each process ends at once when its command has returned,
its output flushed, without the interpreter's finalization: a process group torch still holds
(FSDP's DTensors keep theirs past ``destroy_process_group``) has its gloo threads end there,
which sometimes aborts the process ("terminate called without an active exception") after its
work is done, and torchrun then reports the run failed."""

import os
import sys

from entropylaw._startup import interrupted_on_start


def _under_torchrun() -> bool:
    try:
        return int(os.environ.get("WORLD_SIZE", "1")) > 1
    except ValueError:  # not torchrun's
        return False


def main() -> int:
    with interrupted_on_start(always=True):  # its imports and what main() does before its own handler
        from entropylaw.cli.main import main as command

        code = command()
    if _under_torchrun():
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a closed pipe: nothing more to say
                pass
        os._exit(code)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
