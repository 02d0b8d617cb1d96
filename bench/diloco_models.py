"""pcp.distributed.diloco on models that are not PCP's GPT (the MLP and the one-block
transformer of tests/test_diloco_models.py, defined in a module the Ray workers cannot import),
against the same DiLoCo run eagerly in this process and synchronous AdamW at equal tokens: the
numbers the tests bound, printed. Starts a local Ray cluster for each run.

Run:  python bench/diloco_models.py
"""
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import test_diloco_models as models  # noqa: E402  (the models and references live with the tests)

from pcp.distributed import Data, DiLoCoConfig, diloco  # noqa: E402
from pcp.train import TrainConfig  # noqa: E402


def main():
    tmp = tempfile.mkdtemp()
    user = models.user_module(tmp)
    rng = np.random.default_rng(0)  # the transformer test's word text
    words = ["the", "king", "queen", "to", "be", "or", "not", "my", "lord", "and", "thou", "art"]
    text = "\n".join(" ".join(rng.choice(words, 8)) for _ in range(3000))[:60000]
    chars = sorted(set(text))
    ids = np.array([chars.index(c) for c in text], np.int64)
    cases = [
        ("3-layer MLP, synthetic regression, 20 rounds", lambda: user.RegressionMLP(4, 16, 0), models.regression(),
         TrainConfig(out=os.path.join(tmp, "mlp"), batch_size=32, learning_rate=5e-3, min_lr=5e-4, warmup_iters=5,
                     grad_clip=1.0, weight_decay=0.0, eval_iters=4, seed=7), 20),
        ("1-block transformer, characters, 15 rounds", lambda: user.TinyTransformer(len(chars), 16, 32, 2, 0),
         Data.tokens(ids[:54000], ids[54000:], 16),
         TrainConfig(out=os.path.join(tmp, "gpt"), batch_size=16, learning_rate=2e-3, min_lr=2e-4, warmup_iters=5,
                     grad_clip=1.0, weight_decay=0.1, eval_iters=4, seed=3), 15),
    ]
    print("| model | start | diloco() (plans) | eager DiLoCo | synchronous AdamW, equal tokens |")
    print("|---|---|---|---|---|")
    for name, make, data, cfg, rounds in cases:
        dcfg = DiLoCoConfig(workers=2, inner_steps=10, rounds=rounds, round_timeout=120)
        model = make()
        start = models.val_loss(model, data, cfg)
        got = diloco(model.loss, model, data, cfg, dcfg)[-1]["val_loss"]
        want = models.eager_diloco(make(), make, data, cfg, dcfg)
        sync = models.synchronous(make(), data, cfg, dcfg)
        print(f"| {name} | {start:.4f} | {got:.4f} | {want:.4f} ({abs(got / want - 1):.0e} apart) | "
              f"{sync:.4f} (DiLoCo {got / sync:.3f} of it) |")


if __name__ == "__main__":
    main()
