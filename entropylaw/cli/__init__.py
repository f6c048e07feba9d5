"""Command-line interface: one module per sub-command, registered in ``main.COMMANDS``."""
