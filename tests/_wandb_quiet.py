"""W&B settings for a test's offline run: nothing sampled or written beside the history (no system stats,
machine info, console capture, code or git state), nothing printed."""

from __future__ import annotations


def quiet_settings():
    import wandb

    return wandb.Settings(x_disable_stats=True, x_disable_meta=True, x_disable_machine_info=True,
                          console="off", save_code=False, disable_git=True, silent=True)
