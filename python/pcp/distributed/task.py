"""DiLoCo over a user's own model (pcp.distributed.diloco): what is trained, described without
code a worker would need. The driver traces the inner step (forward, backward, clipping, AdamW)
and the evaluation into plans once; the data travels as arrays with a small spec of how batches
are drawn from them."""
from dataclasses import dataclass

import numpy as np


def _array(a):
    """An array, or the one a .npy file holds, or the uint16 ids a .bin file holds (nanoGPT's)."""
    if isinstance(a, str):
        return np.fromfile(a, dtype=np.uint16).astype(np.int64) if a.endswith(".bin") else np.load(a)
    return np.asarray(a)


@dataclass
class Data:
    """The arrays DiLoCo's workers draw their batches from, and how: put in Ray's object store
    once, each worker samples its own batches (its shard with split='contiguous'; seeded per
    worker and round, so the same spec gives the same batches after a restart).

    Make one with Data.rows or Data.tokens; the batch's tensors are passed to the loss function
    in order.

    Args:
        kind: 'rows' or 'tokens'.
        arrays: rows: a dict of name to array, train rows then val rows; tokens: one 1-D array,
            train tokens then val tokens.
        n_train: the rows (or tokens) of the train split, which come first.
        names: the arrays' names in batch order (rows), or ('x', 'y') (tokens).
        block_size: the window of tokens (0 for rows).

    Raises:
        Nothing of its own (Data.rows and Data.tokens check what they are given).

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
            train, val: dicts of name to NumPy array (or a path to a .npy file), or paths to
                .safetensors files of named arrays; the same names, rows along the first axis.

        Returns:
            A Data.

        Raises:
            ValueError: names that differ, arrays of different lengths, or an empty split.

        Example:
            >>> import numpy as np
            >>> from pcp.distributed import Data
            >>> data = Data.rows({"x": np.ones((5, 2))}, {"x": np.ones((2, 2))})
            >>> data.n_train, data.arrays["x"].shape
            (5, (7, 2))
        """
        def load(arrays):
            if isinstance(arrays, str):  # a safetensors file of named arrays
                from pcp.serialization import load_safetensors
                return {k: t.numpy() for k, t in load_safetensors(arrays)[0].items()}
            return {k: _array(v) for k, v in arrays.items()}
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
            train, val: 1-D integer arrays of token ids, or paths to .npy files or to .bin files
                of uint16 ids (nanoGPT's train.bin and val.bin).
            block_size: the window's length.

        Returns:
            A Data.

        Raises:
            ValueError: a split not longer than block_size.

        Example:
            >>> import numpy as np
            >>> from pcp.distributed import Data
            >>> Data.tokens(np.arange(100), np.arange(20), 8).spec()
            {'kind': 'tokens', 'block_size': 8}
        """
        train, val = _array(train), _array(val)
        if min(len(train), len(val)) <= block_size:
            raise ValueError(f"Data.tokens: each split needs more than block_size = {block_size} tokens, got "
                             f"{len(train)} and {len(val)}")
        return Data("tokens", np.concatenate([train, val]), len(train), ("x", "y"), int(block_size))

    def spec(self):
        """The worker's part: how to draw batches (batches.batches_of reads it). It raises
        nothing.

        Returns:
            A dict: kind, and names (rows) or block_size (tokens).

        Example:
            >>> import numpy as np
            >>> from pcp.distributed import Data
            >>> Data.rows({"x": np.ones((4, 1))}, {"x": np.ones((1, 1))}).spec()
            {'kind': 'rows', 'names': ['x']}
        """
        if self.kind == "tokens":
            return {"kind": "tokens", "block_size": self.block_size}
        return {"kind": "rows", "names": list(self.names)}

    def example(self, batch_size):
        """A batch of zeros of the shapes and dtypes a worker's batches have (what the plans are
        traced with). It raises nothing.

        Args:
            batch_size: rows (or windows) in the batch.

        Returns:
            A list of NumPy arrays, in batch order.

        Example:
            >>> import numpy as np
            >>> from pcp.distributed import Data
            >>> [a.shape for a in Data.tokens(np.arange(100), np.arange(20), 8).example(4)]
            [(4, 8), (4, 8)]
        """
        if self.kind == "tokens":
            return [np.zeros((batch_size, self.block_size), np.int64)] * 2
        return [np.zeros((batch_size,) + a.shape[1:], a.dtype) for a in self.arrays.values()]

    def val_batches(self, batch_size, count, seed):
        """Validation batches, the same for a seed: what the shepherd evaluates the global model
        on. It raises nothing of its own.

        Args:
            batch_size: rows (or windows) per batch.
            count: how many batches.
            seed: the seed of their sampling.

        Returns:
            A list of batches, each a list of NumPy arrays in batch order.

        Example:
            >>> import numpy as np
            >>> from pcp.distributed import Data
            >>> data = Data.rows({"x": np.ones((5, 2))}, {"x": np.zeros((3, 2))})
            >>> [b[0].shape for b in data.val_batches(2, 3, seed=0)]
            [(2, 2), (2, 2), (2, 2)]
        """
        from .batches import batches_of
        rng = np.random.default_rng(seed)
        sampler = batches_of(self.spec())
        _, val = sampler.split(self.arrays, 0, self.n_train, self.n_train)
        return [[t.numpy() for t in sampler.sample(rng, val, batch_size, "cpu")] for _ in range(count)]


def as_module(params):
    """A dict of named tensors as a pcp.nn.Module holding them under their names: the model
    DiLoCo trains (its global copy, checkpoints and outer step read a module)."""
    import pcp
    for name in params:
        if not isinstance(name, str) or not name or "." in name:
            raise ValueError(f"diloco: parameter names must be non-empty and without '.', got {name!r} "
                             "(pass a pcp.nn.Module for nested names)")
    module = pcp.nn.Module()
    module._parameters.update(params)
    return module


def trace(loss_fn, model, data, cfg, device, batch_size, dtype):
    """The inner step and the evaluation traced into plans on `device`, their products in `dtype`
    (autocast, as pcp train runs them): (step bytes, eval bytes, the batch's (shape, dtype)
    list). The step is forward, backward, clipping to cfg.grad_clip and AdamW; tracing runs it
    once, on a batch of zeros, from a copy of the parameters (the model itself is not changed)."""
    import pcp
    from pcp.optim import clip_grad_norm
    from pcp.train.loop import autocast_for, build_optimizer
    saved = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    opt = build_optimizer(cfg, model)  # the workers' inner AdamW, as pcp train's

    def step(*batch):
        with autocast_for(dtype):
            loss = loss_fn(*batch)
        opt.zero_grad()
        loss.backward()
        if cfg.grad_clip > 0:
            clip_grad_norm(list(model.parameters()), cfg.grad_clip)
        opt.step()
        return loss

    def evaluate(*batch):
        with autocast_for(dtype):
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
    for p in model.parameters():  # and left gradients, which the outer step would take for its own
        p.grad = None
    return out + ([(tuple(t.shape), str(t.dtype)) for t in example],)


class TracedModel:
    """The Shepherd's part for a traced model (pcp.distributed.diloco): the plans it traces and
    sends, the workers that refuse them, and the evaluation with the driver's loss (a mixin: the
    state it reads and writes is the Shepherd's)."""

    def _model_and_data(self):
        """Sets the global model, tokenizer (None for a traced model), n_train and tokens_per_row,
        traces the plans of a traced model, and returns what goes into the object store for the
        workers' batches: the GPT's tokens, or the task's arrays."""
        import types

        import pcp
        from pcp.train.loop import build_data, build_model
        from .worker import on_device
        if self.task is None:  # the built-in GPT: a traced model like any other
            self.tokenizer, self.data = build_data(self.cfg)
            with on_device(self.device):
                self.model = build_model(self.cfg, self.tokenizer.vocab_size)
            train, val = self.data.splits["train"], self.data.splits["val"]
            tokens = Data.tokens(np.asarray(train), np.asarray(val), self.cfg.block_size)
            self.n_train, self.tokens_per_row = tokens.n_train, self.cfg.block_size
            if pcp.float16 in self._dtypes():  # its GradScaler steps on the host, which a plan cannot
                return tokens.arrays  # those workers build the GPT
            model = self.model
            self.task = types.SimpleNamespace(loss_fn=lambda x, y: model(x, y)[1], model=model, data=tokens, gpt=True)
            self._trace_plans()
            return tokens.arrays
        self.tokenizer, self.model, data = None, self.task.model, self.task.data  # the workers get plans
        self.n_train, self.tokens_per_row = data.n_train, data.block_size if data.kind == "tokens" else 1
        self._trace_plans()
        return data.arrays

    def _dtype_of(self, rank):
        """The dtype of worker `rank`'s products, as pcp train picks it for the worker's device
        (a GPU's as this process sees its first one) from its worker_dtypes entry or --dtype."""
        import pcp
        from pcp.train.loop import compute_dtype
        name = self.dcfg.dtype_of(rank, self.cfg.dtype)
        if self.dcfg.device_of(rank) == "cpu":
            return compute_dtype(self.cfg, "cpu", name)
        gpus = [d.split(" ")[0] for d in pcp.devices() if d != "cpu"]
        return compute_dtype(self.cfg, gpus[0], name) if gpus else pcp.DType("float32" if name == "auto" else name)

    def _dtypes(self):
        return {self._dtype_of(rank) for rank in range(self.dcfg.workers)}

    def _plan_key(self, rank):
        """(batch size, dtype) of worker `rank`'s step plan."""
        sizes = self.dcfg.batch_sizes
        return sizes[rank % len(sizes)] if sizes else self.cfg.batch_size, self._dtype_of(rank)

    def _trace_plans(self, keys=None):
        """The task's inner step traced into a plan once per (batch size, dtype) the workers use
        (keys; default the first workers'), and its evaluation at the TrainConfig's batch size
        (what workers evaluate with) once per dtype, put in the object store: plans {(batch
        size, dtype): (step ref, eval ref, eval arguments, arguments)}."""
        import ray
        import pcp
        if pcp.float16 in self._dtypes():
            raise ValueError("diloco: float16 workers need a GradScaler, whose skipped steps a plan cannot take: "
                             "give a traced model's workers bfloat16 or float32 (worker_dtypes, TrainConfig.dtype)")
        self.plans = getattr(self, "plans", {})
        keys = {self._plan_key(r) for r in range(self.dcfg.workers)} if keys is None else set(keys)
        keys |= {(self.cfg.batch_size, dtype) for _, dtype in keys}
        keys -= set(self.plans)
        traced = {(size, dtype): trace(self.task.loss_fn, self.model, self.task.data, self.cfg, str(self.device), size,
                                       dtype) for size, dtype in sorted(keys, key=str)}
        evaluations = {dtype: (ray.put(e), arguments) for (size, dtype), (_, e, arguments) in traced.items()
                       if size == self.cfg.batch_size}
        evaluations.update({dtype: self.plans[(size, dtype)][1:3] for size, dtype in self.plans})
        self.plans.update({(size, dtype): (ray.put(step), *evaluations[dtype], arguments)
                           for (size, dtype), (step, _, arguments) in traced.items()})

    def _plan_spec(self, rank):
        key = self._plan_key(rank)
        if key not in self.plans:  # a worker added later, of a batch size and dtype not traced yet
            self._trace_plans([key])
        step, evaluation, eval_arguments, arguments = self.plans[key]
        return {"step": [step], "eval": [evaluation], "data": self.task.data.spec(), "arguments": arguments,
                "eval_arguments": eval_arguments, "dtype": str(key[1])}

    def _refused(self, rank, rnd, error):
        """A worker that refused the plan it was sent (damaged, or for other shapes): reported
        with its reason, stopped, and left out of every round from now on."""
        import ray
        text, mark = str(error), f"worker {rank}: refused"
        reason = text[text.index(mark):] if mark in text else text  # the worker's words, past Ray's wrapping
        self.report({"kind": "worker_refused", "rank": rank, "round": rnd, "error": reason.splitlines()[0][:2000]})
        try:
            ray.kill(self.workers.pop(rank)["actor"], no_restart=True)
        except Exception:
            pass

    def _inner_stand_in(self, rank):
        """An optimizer like worker `rank`'s (its step plan's, loaded here) for a checkpoint's
        inner state to load into, checked."""
        import ray
        import pcp
        from .plan_replica import PlanOptimizer
        step_ref = self.plans[self._plan_key(rank)][0]
        return PlanOptimizer(pcp.load_plan(ray.get(step_ref), device=str(self.device)))

    def _evaluate_task(self):
        """The driver's loss on the validation batches, eagerly (the driver has the code)."""
        import pcp
        batches = self.task.data.val_batches(self.cfg.batch_size, self.cfg.eval_iters, self.cfg.seed)
        self.model.eval()
        with pcp.no_grad():
            losses = [self.task.loss_fn(*[pcp.tensor(a, device=str(self.device) if a.dtype.kind == "f" else "cpu")
                                          for a in b]).item() for b in batches]
        self.model.train()
        return float(np.mean(losses))


def diloco(loss_fn, model, data, train=None, config=None, report=None, resume=False, overwrite=False):
    """Trains your own model with DiLoCo on Ray: the driver traces the inner step once (forward,
    backward, clipping to train.grad_clip, AdamW) and the evaluation, and sends the plans' bytes
    to the workers, which run them on their own device without your code (a worker's process
    never imports your script). Each round every worker takes H inner steps on batches it draws
    from `data`, and the averaged pseudo-gradients take one outer Nesterov step; options as
    ``pcp diloco``'s (fragments, overlap, compression, timeouts, weighting, GPU workers).

    Args:
        loss_fn: ``loss_fn(*batch)`` gives the loss (a 0-d tensor), reading `model`'s parameters:
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
        resume: continue the run checkpointed in train.out (default False): the global model,
            outer momentum and workers' inner states as saved, the same bits as a run that was
            not stopped.
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
    module = model if isinstance(model, pcp.nn.Module) else as_module(model)
    task = types.SimpleNamespace(loss_fn=loss_fn, model=module, data=data)
    shepherd = Shepherd(train or TrainConfig(out="out-diloco"), config or DiLoCoConfig(), report=report,
                        resume=resume, overwrite=overwrite, task=task)
    try:
        return shepherd.run()
    finally:
        shepherd.shutdown()
