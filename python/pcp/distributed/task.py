"""DiLoCo over a user's own model (pcp.distributed.diloco): what is trained, described without
code a worker would need. The driver traces the inner step (forward, backward, clipping, AdamW)
and the evaluation into plans once; the data travels as arrays with a small spec of how batches
are drawn from them."""
from dataclasses import dataclass

import numpy as np


@dataclass
class Data:
    """The arrays DiLoCo's workers draw their batches from, and how: put in Ray's object store
    once, each worker samples its own batches (its shard with split='contiguous'; seeded per
    worker and round, so the same spec gives the same batches after a restart).

    Make one with Data.rows or Data.tokens; the batch's tensors are passed to the loss function
    in order.

    Example:
        >>> import numpy as np
        >>> from pcp.distributed import Data
        >>> x = np.zeros((100, 3), np.float32)
        >>> data = Data.rows({"x": x[:80], "y": x[:80, :1]}, {"x": x[80:], "y": x[80:, :1]})
        >>> data.n_train, data.spec()
        (80, {'kind': 'rows', 'names': ['x', 'y']})
    """
    kind: str
    arrays: object  # rows: {name: train rows then val rows}; tokens: train tokens then val tokens
    n_train: int
    names: tuple = ()
    block_size: int = 0

    @staticmethod
    def rows(train, val):
        """Batches of rows of named arrays (features, targets: one length each): a batch is one
        tensor per name, in the dicts' order; floating arrays go to the worker's device,
        integer ones (class indices) stay on the CPU.

        Args:
            train, val: dicts of name to NumPy array (or a path to a .npy file), the same names;
                rows along the first axis.

        Returns:
            A Data.

        Raises:
            ValueError: names that differ, arrays of different lengths, or an empty split.
        """
        def load(arrays):
            return {k: np.load(v) if isinstance(v, str) else np.asarray(v) for k, v in arrays.items()}
        train, val = load(train), load(val)
        if list(train) != list(val) or not train:
            raise ValueError(f"Data.rows: train and val must name the same arrays, got {list(train)} and {list(val)}")
        for split, arrays in (("train", train), ("val", val)):
            lengths = {k: len(a) for k, a in arrays.items()}
            if len(set(lengths.values())) != 1 or 0 in lengths.values():
                raise ValueError(f"Data.rows: the {split} arrays must be non-empty and of one length, got {lengths}")
        joined = {k: np.ascontiguousarray(np.concatenate([train[k], val[k]])) for k in train}
        return Data("rows", joined, len(next(iter(train.values()))), tuple(train))

    @staticmethod
    def tokens(train, val, block_size):
        """A language model's batches: (x, y) windows of block_size + 1 tokens at random offsets
        (int64 ids, on the CPU).

        Args:
            train, val: 1-D integer arrays of token ids (or paths to .npy files).
            block_size: the window's length.

        Returns:
            A Data.

        Raises:
            ValueError: a split not longer than block_size.
        """
        train, val = (np.load(a) if isinstance(a, str) else np.asarray(a) for a in (train, val))
        if min(len(train), len(val)) <= block_size:
            raise ValueError(f"Data.tokens: each split needs more than block_size = {block_size} tokens, got "
                             f"{len(train)} and {len(val)}")
        return Data("tokens", np.concatenate([train, val]), len(train), ("x", "y"), int(block_size))

    def spec(self):
        """The worker's part: how to draw batches (worker.batches_of reads it)."""
        if self.kind == "tokens":
            return {"kind": "tokens", "block_size": self.block_size}
        return {"kind": "rows", "names": list(self.names)}

    def example(self, batch_size):
        """A batch of zeros of the shapes and dtypes a worker's batches have (what the plans are
        traced with), as NumPy arrays."""
        if self.kind == "tokens":
            return [np.zeros((batch_size, self.block_size), np.int64)] * 2
        return [np.zeros((batch_size,) + a.shape[1:], a.dtype) for a in self.arrays.values()]

    def val_batches(self, batch_size, count, seed):
        """count validation batches (NumPy arrays), the same for a seed: what the shepherd
        evaluates the global model on."""
        from .worker import batches_of
        rng = np.random.default_rng(seed)
        sampler = batches_of(self.spec())
        _, val = sampler.split(self.arrays, 0, self.n_train, self.n_train)
        return [[t.numpy() for t in sampler.sample(rng, val, batch_size, "cpu")] for _ in range(count)]


class Parameters:
    """A dict of named tensors as the model DiLoCo trains (its global copy, checkpoints and outer
    step read it like a pcp.nn.Module): made by diloco() from a dict of parameters."""

    def __new__(cls, params):
        import pcp
        for name in params:
            if not isinstance(name, str) or not name or "." in name:
                raise ValueError(f"diloco: parameter names must be non-empty and without '.', got {name!r} "
                                 "(pass a pcp.nn.Module for nested names)")

        class _Params(pcp.nn.Module):
            def __init__(self):
                super().__init__()
                for k, v in params.items():
                    self._parameters[k] = v
        return _Params()


def inner_optimizer(cfg, model):
    """The workers' inner AdamW, as pcp train's (pcp.train.loop.build_optimizer)."""
    from pcp.train.loop import build_optimizer
    return build_optimizer(cfg, model)


def trace(loss_fn, model, data, cfg, device, batch_size):
    """The inner step and the evaluation traced into plans on `device`: (step bytes, eval bytes,
    the batch's (shape, dtype) list). The step is forward, backward, clipping to cfg.grad_clip
    and AdamW; tracing runs it once, on a batch of zeros, from a copy of the parameters (the
    model itself is not changed)."""
    import pcp
    from pcp.optim import clip_grad_norm
    saved = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    opt = inner_optimizer(cfg, model)

    def step(*batch):
        loss = loss_fn(*batch)
        opt.zero_grad()
        loss.backward()
        if cfg.grad_clip > 0:
            clip_grad_norm(list(model.parameters()), cfg.grad_clip)
        opt.step()
        return loss

    def evaluate(*batch):
        return loss_fn(*batch)

    example = [pcp.tensor(a, device=device if np.issubdtype(a.dtype, np.floating) else "cpu")
               for a in data.example(batch_size)]
    names = dict(model.named_parameters())
    compiled, evaluation = pcp.compile(step), pcp.compile(evaluate)
    compiled(*example)
    with pcp.no_grad():
        model.eval()
        evaluation(*example)
        model.train()
    out = compiled.to_bytes(names=names), evaluation.to_bytes(names=names)
    model.load_state_dict({k: pcp.tensor(v) for k, v in saved.items()})  # the step above changed them
    return out + ([(tuple(t.shape), str(t.dtype)) for t in example],)


def diloco(loss_fn, model, data, train=None, config=None, report=None, overwrite=False):
    """Trains your own model with DiLoCo on Ray: the driver traces the inner step once (forward,
    backward, clipping to train.grad_clip, AdamW) and the evaluation, and sends the plans' bytes
    to the workers, which run them on their own device without your code (a worker's process
    never imports your script). Each round every worker takes H inner steps on batches it draws
    from `data`, and the averaged pseudo-gradients take one outer Nesterov step; options as
    ``pcp diloco``'s (fragments, overlap, compression, timeouts, weighting, GPU workers).

    Args:
        loss_fn: loss_fn(*batch) -> the loss (a 0-d tensor), reading `model`'s parameters:
            any function of PCP ops, defined only in the driver's script.
        model: a pcp.nn.Module, or a dict of name to tensor (requires_grad): the parameters it
            trains, set to the final global values when the run ends.
        data: a Data (Data.rows or Data.tokens): the batches, passed to loss_fn in order.
        train: a pcp.train.TrainConfig for the inner optimisation and the run: learning_rate,
            min_lr, warmup_iters (the schedule over all rounds), weight_decay (on 2-D and larger
            parameters), beta1, beta2, grad_clip, batch_size, eval_iters, log_interval, seed,
            out (checkpoints and metrics) and device (of the global copy); its model fields are
            not used (default TrainConfig(out="out-diloco")).
        config: a DiLoCoConfig (default DiLoCoConfig()).
        report: a function receiving the run's events (see Shepherd), or None.
        overwrite: start anew in a train.out that holds a run (default False).

    Returns:
        The history: one record per round (val_loss, the workers' losses, bytes, seconds...),
        round 0 (the starting model) first.

    Raises:
        ValueError: an invalid config, data or parameter name, or a step that cannot be traced
            (it names the op).
        ImportError: Ray is not installed (pip install "pcp[distributed]").

    Example:
        Not run here (it starts a Ray cluster)::

            import numpy as np, pcp
            from pcp.distributed import Data, DiLoCoConfig, diloco
            from pcp.train import TrainConfig

            rng = np.random.default_rng(0)
            w = {"w": pcp.tensor(rng.normal(size=(3, 1)), dtype=pcp.float32, requires_grad=True)}
            x = rng.normal(size=(1000, 3)).astype(np.float32)
            y = (x @ np.array([[1.0], [2.0], [-1.0]], np.float32))
            history = diloco(lambda a, b: ((a @ w["w"] - b) ** 2).mean(), w,
                             Data.rows({"x": x[:800], "y": y[:800]}, {"x": x[800:], "y": y[800:]}),
                             TrainConfig(out="out-regression", batch_size=32, learning_rate=1e-2),
                             DiLoCoConfig(workers=2, inner_steps=20, rounds=5))
            print(history[-1]["val_loss"])
    """
    import types

    import pcp
    from pcp.train import TrainConfig
    from .config import DiLoCoConfig
    from .shepherd import Shepherd
    module = model if isinstance(model, pcp.nn.Module) else Parameters(model)
    task = types.SimpleNamespace(loss_fn=loss_fn, model=module, data=data)
    shepherd = Shepherd(train or TrainConfig(out="out-diloco"), config or DiLoCoConfig(), report=report,
                        overwrite=overwrite, task=task)
    try:
        return shepherd.run()
    finally:
        shepherd.shutdown()
