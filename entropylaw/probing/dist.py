"""Data parallelism over rollouts with ``torch.distributed`` (launched by ``torchrun``).

Each rank takes a contiguous shard of the sequences; per-token results are gathered on
rank 0 in sequence order, and gradients of the ladder's update are summed over ranks.
Backend: NCCL when CUDA is used, gloo otherwise. Without ``torchrun`` (no ``WORLD_SIZE``)
everything runs in one process.
"""

from __future__ import annotations

import os

import torch
import torch.distributed as dist


def init(device: torch.device) -> bool:
    """Start the process group when launched by torchrun; returns whether it is distributed."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return False
    if not dist.is_initialized():
        # torch.distributed.nn takes the default group as its functions' default argument when first
        # imported (transformers imports it): imported after the group starts, it holds the group past
        # destroy_process_group, whose gloo threads then end at the interpreter's exit, where they
        # sometimes abort the process ("terminate called without an active exception") after its work
        import torch.distributed.nn  # noqa: F401

        backend = "nccl" if device.type == "cuda" else "gloo"
        if device.type == "cuda":
            torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
        dist.init_process_group(backend)
    return True


_SHARDED = [False]


def active() -> bool:
    return dist.is_available() and dist.is_initialized()


def shard_model(model) -> None:
    """FSDP2: each decoder layer's weights sharded across the ranks (``--shard``).

    Embeddings, the final norm and the lm_head stay whole on every rank (the streamed head
    needs the full vocabulary matrix). FSDP's forward is collective, so with sharded weights
    every rank runs every sequence, in the same order: the ranks split the weights, not the
    rollouts, and the result is the one-process result. Gradients of the sharded layers are
    reduce-scattered (the mean over ranks of identical gradients: the gradient itself).
    """
    from torch.distributed.fsdp import fully_shard

    if not active():
        from entropylaw.errors import EntropyLawError

        raise EntropyLawError("`shard`: the weights are sharded across processes, and this one was not started "
                              "by torchrun: launch `probe(shard)` under torchrun --nproc_per_node K")
    layers = getattr(model.get_decoder(), "layers", None)
    if layers is None:
        from entropylaw.errors import EntropyLawError

        raise EntropyLawError(f"`shard`: {type(model).__name__} has no decoder .layers to shard")
    for layer in layers:
        fully_shard(layer)
    _SHARDED[0] = True


def reshard(model) -> None:
    """Register every FSDP module's sharded weights again (a forward may leave freed unsharded ones)."""
    if not sharded():
        return
    from torch.distributed.fsdp import FSDPModule

    for m in model.modules():
        if isinstance(m, FSDPModule):
            m.reshard()


def sharded() -> bool:
    return _SHARDED[0]


def data_parallel() -> bool:
    """Ranks hold different rollouts (torchrun without --shard)."""
    return active() and not _SHARDED[0]


def rank() -> int:
    return dist.get_rank() if active() else 0


def world() -> int:
    return dist.get_world_size() if active() else 1


def shard_bounds(n: int, r: int | None = None, w: int | None = None) -> tuple:
    """[start, stop) of rank r's contiguous share of n items."""
    r = rank() if r is None else r
    w = world() if w is None else w
    return n * r // w, n * (r + 1) // w


def group_shard_bounds(keys: list, r: int | None = None, w: int | None = None) -> tuple:
    """[start, stop) of rank r's share of items, cut only where ``keys`` changes.

    Responses to one prompt stay on one rank, so the prompt's forward is shared there
    (probe/forward.py) and every rank computes a group exactly as one process does.

    >>> [group_shard_bounds(list("aaabbc"), r, 2) for r in range(2)]
    [(0, 3), (3, 6)]
    """
    if sharded():
        return 0, len(keys)
    r = rank() if r is None else r
    w = world() if w is None else w
    starts = [i for i in range(len(keys)) if i == 0 or keys[i] != keys[i - 1]] + [len(keys)]

    def cut(k):  # the group start nearest the even split point k * n / w
        target = len(keys) * k // w
        return min(starts, key=lambda s: (abs(s - target), s))

    return cut(r), cut(r + 1) if r + 1 < w else len(keys)


def gather_dict(local: dict) -> dict | None:
    """Concatenate dicts of CPU tensors from all ranks (rank order) on rank 0; None elsewhere."""
    if not active():
        return local
    if sharded():  # every rank computed everything
        return local if rank() == 0 else None
    parts = [None] * world() if rank() == 0 else None
    dist.gather_object({k: v.cpu() for k, v in local.items()}, parts, dst=0)
    if rank() != 0:
        return None
    return {k: torch.cat([p[k] for p in parts]) for k in local}


def broadcast(obj):
    """Rank 0's ``obj`` on every rank."""
    if not active():
        return obj
    box = [obj]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def all_reduce_grads(params) -> None:
    """Sum the ranks' gradients (data parallel); with --shard FSDP has reduced the sharded ones."""
    if not data_parallel():
        return
    for p in params:
        if p.grad is not None:
            dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)


def finish() -> None:
    _SHARDED[0] = False
    if active():
        dist.barrier()
        dist.destroy_process_group()
