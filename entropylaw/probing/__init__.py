"""entropylaw.probing: token-level covariance, entropy interventions and the entropy-change ladder.

Modules (torch and transformers are imported only inside this package):

- ``advantages``: GRPO / RLOO / REINFORCE++ / REINFORCE advantages (SPEC section 1)
- ``interventions``: token covariance, Clip-Cov / KL-Cov masks, STEER Omega and weights,
  AEnt clamped entropy and coefficient (SPEC section 5)
- ``losses``: ``InterventionConfig`` and ``policy_loss`` (shared with entropylaw.lab)
- ``stream``: log-prob, entropy, clamped entropy and Lemma 1 streamed over vocabulary chunks
- ``dynamics``: Lemma 1, Theorems 1-2 and the per-position forms (SPEC section 4)
- ``model``, ``forward``, ``generate``, ``rewards``: inputs (rollout files are read and
  encoded by :mod:`entropylaw.readers.rollouts`, torch-free)
- ``core``, ``ladder``, ``runner``, ``dist``, ``checkpoints``: the probe itself
"""

from entropylaw._optional import require

require("torch", extra="probe", purpose="entropylaw.probing")  # one line naming the extra, not a traceback
