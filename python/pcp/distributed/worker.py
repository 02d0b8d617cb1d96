"""A DiLoCo worker: a model replica, its inner AdamW and a data shard. Ray runs it as an actor."""
import concurrent.futures
import contextlib
import math
import os
import threading
import time
import zlib

import numpy as np

from .batches import TokenWindows, batches_of, shard_bounds
from .compression import base_compression, decode, encode, nbytes
from .gpus import gpu_index


def round_seed(seed, rank, rnd):
    """The seed of a worker's round: the same after a restart, different across workers and rounds."""
    return zlib.crc32(f"{seed}/{rank}/{rnd}".encode()) & 0x7FFFFFFF


def state_digest(state):
    """A checksum of a {name: array} state (which parameters a round started from): per array its
    name, shape, and the sum and the xor of its 32-bit words, at memory speed (a CRC of the bytes
    took a few percent of a short round)."""
    crc = 0
    for k in sorted(state):
        a = np.ascontiguousarray(state[k])
        words = a.reshape(-1).view(np.uint32) if a.nbytes % 4 == 0 else a.reshape(-1).view(np.uint8)
        folded = (int(words.sum(dtype=np.uint64)), int(np.bitwise_xor.reduce(words)) if words.size else 0, a.shape)
        crc = zlib.crc32(repr(folded).encode(), zlib.crc32(k.encode(), crc))
    return crc


def worker_device(kind):
    """The pcp device a worker runs on, and how it was found: the CPU ('cpu'), or for 'gpu' the
    GPU Ray assigned to this actor, matched by UUID ('uuid'), or taken by Ray's id as an index
    into PCP's GPUs where UUIDs are not to be had ('index'), else the first GPU ('first')."""
    import pcp
    if kind == "cpu":
        return pcp.device("cpu"), "cpu"
    gpus = [d.split(" ")[0] for d in pcp.devices() if d != "cpu"]
    if not gpus:
        raise RuntimeError(f"diloco worker: worker_device 'gpu' but this process sees no GPU ({pcp.devices()})")
    try:
        import ray
        ids = ray.get_gpu_ids() if ray.is_initialized() else []
    except ImportError:
        ids = []
    if not ids:
        return pcp.device("gpu:0"), "first"
    index, how = gpu_index(ids[0], [pcp.gpu_info(g)["uuid"] for g in gpus])
    return pcp.device(f"gpu:{index}"), how


def _fetched(value):
    """value, or what the Ray object reference in a one-element list refers to (followed on
    while that is such a list too: the mailbox answers with one)."""
    while isinstance(value, list):
        import ray
        value = ray.get(value[0])
    return value


@contextlib.contextmanager
def on_device(device):
    """pcp's default device set to device inside the block (tensors the block makes live there)."""
    import pcp
    previous = pcp.get_default_device()
    pcp.set_default_device(device)
    try:
        yield
    finally:
        pcp.set_default_device(previous)


def flat_copy(tensors):
    """Tensors of one device copied now, as float32, into one vector on it; returns a function
    that downloads that vector and gives each tensor's values as a NumPy array of its shape
    (float32 views of one array). One download for all: each waits for the device, and one per
    tensor would wait once per tensor. The tensors may change meanwhile (a next step)."""
    import pcp
    shapes = [tuple(t.shape) for t in tensors]
    with pcp.no_grad():
        flat = pcp.concatenate([t.astype(pcp.float32).reshape(-1) for t in tensors]) if tensors else None

    def download():
        values = flat.numpy() if flat is not None else None  # on the CPU a view that keeps flat alive
        out, at = [], 0
        for shape in shapes:
            n = int(np.prod(shape, dtype=np.int64))
            out.append(values[at:at + n].reshape(shape))
            at += n
        return out
    return download


def flat_upload(arrays, device, scale=1.0):
    """NumPy arrays (times scale) uploaded to device in one float32 vector: one transfer, where
    one per array would each wait for the device. Returns the vector's views, one per array,
    in its shape."""
    import pcp
    sizes = [int(np.size(a)) for a in arrays]
    flat, at = np.empty(sum(sizes), np.float32), 0
    for a, n in zip(arrays, sizes):
        np.multiply(np.asarray(a).reshape(-1), np.float32(scale), out=flat[at:at + n])
        at += n
    uploaded, views, at = pcp.tensor(flat, device=device), [], 0
    for a, n in zip(arrays, sizes):
        views.append(uploaded[at:at + n].reshape(np.shape(a)))
        at += n
    return views


def array_bytes(value):
    """The bytes of the NumPy arrays in value (nested dicts, lists and tuples)."""
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, dict):
        value = list(value.values())
    return sum(array_bytes(v) for v in value) if isinstance(value, (list, tuple)) else 0


def export_state(optimizer, later=False):
    """An optimizer's state_dict with NumPy arrays for tensors: what travels through Ray (its
    tensors are copied now; with later, a function returning it once downloaded)."""
    sd = optimizer.state_dict()
    keys = [(i, k) for i, s in sd["state"].items() for k, v in s.items() if hasattr(v, "numpy")]
    download = flat_copy([sd["state"][i][k] for i, k in keys])

    def export():
        arrays = dict(zip(keys, download()))
        return dict(sd, state={i: {k: arrays.get((i, k), v) for k, v in s.items()} for i, s in sd["state"].items()})
    return export if later else export()


class Worker:
    """A DiLoCo worker: a model replica with its own inner AdamW and data shard. The Shepherd runs
    each as a Ray actor (``ray.remote(Worker)``); as a plain object it runs in this process. The
    tokens come with each round (see run_round): a restarted actor then needs nothing but its
    spec. Making one sets this process's CPU thread count to threads_per_worker.

    Args:
        spec: a dict: train_config and diloco_config (their to_dict()), vocab_size, n_train (the
            number of train tokens, which come first in the token array) and rank (from 0); and
            for a traced model (pcp.distributed.diloco) plan: step and eval (the plans' bytes,
            or [their Ray references]), data (the batches' spec, Data.spec()), and arguments and
            eval_arguments (the (shape, dtype) each plan must take).

    Raises:
        ValueError: the worker's shard holds no more than block_size tokens.
        PlanRefused: a plan that is damaged, not a plan, or traced for other arguments.
        KeyError: a spec without one of those keys.

    Example:
        >>> import numpy as np
        >>> from pcp.distributed import DiLoCoConfig, Worker
        >>> from pcp.train import TrainConfig
        >>> cfg = TrainConfig(n_layer=1, n_head=2, n_embd=8, block_size=8, batch_size=2, eval_iters=1)
        >>> worker = Worker({"train_config": cfg.to_dict(), "diloco_config": DiLoCoConfig().to_dict(),
        ...                  "vocab_size": 10, "n_train": 180, "rank": 0})
        >>> params = {k: v.numpy() for k, v in worker.model.state_dict().items()}
        >>> result = worker.run_round(0, params, inner_steps=2, first_step=0, tokens=np.arange(200) % 10)
        >>> result["steps"], sorted(result["pseudo_grad"]) == sorted(params)
        (2, True)
        >>> pcp.set_num_threads(0)  # the worker set 1 thread for this process: restore the default
    """

    def __init__(self, spec):
        import pcp
        from pcp.train import TrainConfig
        from pcp.train.loop import build_model, build_optimizer, compute_dtype, training_step
        from .config import DiLoCoConfig

        self.rank = spec["rank"]
        self.cfg = TrainConfig.from_dict(spec["train_config"])
        self.dcfg = DiLoCoConfig.from_dict(spec["diloco_config"])
        pcp.set_num_threads(self.dcfg.threads_per_worker)
        self.n_train = spec["n_train"]
        sizes = self.dcfg.batch_sizes
        self.batch_size = sizes[self.rank % len(sizes)] if sizes else self.cfg.batch_size
        self.shard = shard_bounds(self.n_train, self.dcfg.split, self.rank, self.dcfg.workers)
        plan = spec.get("plan")
        self.data = batches_of(plan["data"]) if plan else TokenWindows(self.cfg.block_size)
        if plan is None and self.shard[1] - self.shard[0] <= self.cfg.block_size:
            raise ValueError(f"worker {self.rank}: its shard has {self.shard[1] - self.shard[0]} tokens, fewer than "
                             f"block_size + 1 = {self.cfg.block_size + 1}")
        self.train_tokens = self.val_tokens = None
        self.reference = None  # the global values its pseudo-gradients are taken against
        pcp.random.seed(self.cfg.seed)  # every replica starts from the same weights; round 0 overwrites them
        self.device, self.device_by = worker_device(self.dcfg.device_of(self.rank))
        self.plan_bytes = self.plan_load_seconds = None
        if plan is None:
            with on_device(self.device):
                self.model = build_model(self.cfg, spec["vocab_size"])
                self.opt = build_optimizer(self.cfg, self.model)
            # One inner step as pcp train takes it (autocast to the run's dtype, forward, backward,
            # clipping, AdamW), a plan with --compile.
            self.dtype = compute_dtype(self.cfg, str(self.device), self.dcfg.dtype_of(self.rank, self.cfg.dtype))
            scaler = pcp.amp.GradScaler(enabled=self.dtype == pcp.float16)
            self.step = training_step(self.model, self.opt, scaler, self.cfg, self.dtype)
        else:  # the driver's traced step: its code never reaches this process
            self.model, self.opt = self._load_plans(plan)
            self.dtype = pcp.DType(plan.get("dtype", "float32"))  # of the products the plan was traced with
            self.step = self.opt.run
        self.names = [n for n, _ in self.model.named_parameters()]
        gpu = pcp.gpu_info(str(self.device)) if self.device != pcp.device("cpu") else None
        self._progress = {"rank": self.rank, "round": -1, "step": 0, "steps_done": 0, "loss": None, "lr": None,
                          "time": time.time(), "pid": os.getpid(), "dtype": str(self.dtype),
                          "plan_bytes": self.plan_bytes, "plan_load_seconds": self.plan_load_seconds,
                          "device": next(d for d in pcp.devices() if d.split(" ")[0] == str(self.device)),
                          "device_uuid": gpu["uuid"] if gpu else ""}
        self._lock = threading.Lock()
        # Rounds run with finish_later: round -> the Future of its result, which collect() hands out.
        self._finishing, self._finished_cv = {}, threading.Condition()
        # Threads that finish a round and prepare a merge while a round steps: two, since a merge
        # being prepared waits for the outer step of the round before, which the shepherd posts
        # only once that round's finish (the other thread) is done.
        self._helpers = concurrent.futures.ThreadPoolExecutor(2, thread_name_prefix="diloco-worker")
        self._returned = self._idle = None  # when the last round's call returned; the gap to this one
        # A pipelined CPU round returns a few steps early, as many as the next call's trip takes,
        # and runs those on this thread meanwhile: the next round then starts when they end.
        self._stepper = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="diloco-tail")
        self._tail = None  # the Future of the last round's last steps (its finish function)
        self._trip = self._step_s = self._steps_ended = None  # the last call's trip; a step's time
        self._arrived = None  # when this round's call came (time.time()), maybe before the last steps end

    def _load_plans(self, plan):
        """The step plan (and the evaluation plan, when sent) placed on this worker's device,
        checked (a damaged or foreign plan raises PlanRefused), as a model and its optimizer."""
        from .plan_replica import PlanModel, PlanOptimizer, load_checked
        data = _fetched(plan["step"])
        example = plan.get("arguments")  # [(shape, dtype)] of the batches the data spec gives
        step, seconds = load_checked(data, self.device, self.rank, example)
        evaluation = (load_checked(_fetched(plan["eval"]), self.device, self.rank, plan.get("eval_arguments", example))[0]
                      if plan.get("eval") else None)
        self.plan_bytes, self.plan_load_seconds = len(data), seconds
        optimizer = PlanOptimizer(step)
        optimizer.reset()  # a new worker's inner optimizer starts fresh (its state comes with a round)
        return PlanModel(step, evaluation), optimizer

    def pid(self):
        """The process id of the worker (of the actor's process under Ray). It raises nothing.

        Returns:
            An int.

        Example:
            Not run here (needs a Ray cluster); the shepherd asks an actor::

                pid = ray.get(actor.pid.remote())
        """
        return os.getpid()

    def progress(self):
        """Where the current round is: callable while run_round runs (in a concurrency group of its own),
        for the dashboard's live view. It raises nothing.

        Returns:
            A dict: rank, round, step (inner steps done this round), steps_done (in all), loss and
            lr (the last step's), time, pid, device (e.g. "cpu" or "vulkan:0 (NVIDIA H200)"),
            device_uuid (the GPU's UUID, as nvidia-smi gives it; '' on the CPU) and dtype (of the
            inner steps' products).

        Example:
            Not run here (needs a Ray cluster); the shepherd polls an actor::

                p = ray.get(actor.progress.remote())
                print(p["round"], p["step"], p["loss"])
        """
        with self._lock:
            return dict(self._progress, time=time.time())

    def _batch(self, rng, part, batch_size):
        return self.data.sample(rng, part, batch_size, self.device)

    def _load_tokens(self, tokens):
        if self.train_tokens is None:
            tokens = _fetched(tokens)  # [ObjectRef]: fetched here, read-only, without a copy on this node
            lo, hi = self.shard
            self.train_tokens, self.val_tokens = self.data.split(tokens, lo, hi, self.n_train)
            if not self.data.fits(self.train_tokens):
                raise ValueError(f"worker {self.rank}: its shard [{lo}, {hi}) holds too little data for a batch")

    def run_round(self, rnd, params, inner_steps, first_step, tokens, inner_state=None, seconds=None,
                  reset_inner=False, stream=None, evaluate=True, keep_state=True, finish_later=False,
                  compression=None):
        """Loads the global params ({name: array}), runs inner_steps AdamW steps (fewer when
        `seconds` run out first) and returns the encoded pseudo-gradient (global - local) with the
        round's losses and timings, and its AdamW state (export_state). tokens: the 1-D train +
        val token array, or a one-element list holding its Ray object reference. inner_state: this
        worker's state after its last round (or a list holding its reference), for a worker that
        starts without one (resumed, or restarted), or that must go back to it (reset_inner).

        Args:
            rnd: the round's number (it seeds the round's batches and dropout).
            params: the global parameters, a dict of name to float32 NumPy array.
            inner_steps: H, the AdamW steps to run.
            first_step: the global inner step this round starts at (for the learning-rate
                schedule).
            tokens: the token array, or [its Ray object reference].
            inner_state: this worker's AdamW state, or [its reference], or None (default).
            seconds: the round's time: no step starts after it (None, default: no limit).
            reset_inner: load inner_state even over the worker's own (a rolled-back round).
            stream: None (default: params are the whole global model), or for Streaming DiLoCo
                a dict: send (the names of the fragment whose pseudo-gradient to return),
                full ([reference] to the whole global model, fetched only by a worker that has
                none of its own yet, or after reset_inner), full_is_current (whether that
                model already holds params' step), merge_at (the step at which params, the
                outer step of the last fragment synchronised, encoded as the pseudo-gradients
                are, or [a reference] to it, is merged), alpha (the share of its own values the merge
                keeps), optionally when_ready (True: merge at the first step from merge_at on at
                which a referenced step has arrived, rather than wait for it at merge_at) and
                optionally own (its stream_state of the round before, or [its reference], which a
                worker without one takes: a resumed run).
            evaluate: score the local model on eval_iters val batches (default True; False: its
                val_loss is None, and the round spends no time on it).
            keep_state: return inner_state (and stream_state) (default True; False on rounds
                that do not end at a checkpoint, to spare the copies).
            finish_later: return as soon as the steps are queued (on a CPU, before its last
                steps: timings' tail), with only rank, round and steps (None while some still
                run); threads of this worker then step and download and encode the result
                while the next round starts, and collect(rnd) returns it (default False).
            compression: of this round's pseudo-gradient (None, default: DiLoCoConfig.compression,
                whose 'auto' means float32 until the shepherd says otherwise).

        Returns:
            A dict: rank, round, pseudo_grad (encoded per DiLoCoConfig.compression), bytes,
            start_digest, train_loss, last_loss, nonfinite_step (the first inner step whose loss is
            NaN or infinite, or None), lr, val_loss, steps (done; fewer than
            inner_steps when time ran out), seconds, timings (seconds starting, stepping,
            waiting for the outer step to merge and finishing on the round's thread, the seconds
            of the finishing thread (background; with finish_later they overlap the next round),
            idle, the seconds from the last round's return (or its last steps, when later) to
            this round's start (None at first), tail, the steps run after the call returned
            (finish_later on a CPU: as many as the next call's trip takes, so that it is there
            when they end), merged_at, the step at which the outer step was merged, or None, and
            arrived, began and ended, when the call came, the round's start and the time its
            result was ready, as time.time()), tokens
            (processed), inner_state, device (where it ran, e.g. "vulkan:0 (NVIDIA H200)") and
            device_uuid, fetched_bytes (of a whole model it fetched, streaming), plan_bytes and
            plan_load_seconds (of the plan it trains from; None for the built-in GPT),
            state_bytes (of inner_state and stream_state, 0 on rounds without them), and when
            streaming stream_state (its own parameters and the global values it knows: local,
            reference).

        Raises:
            ValueError: params that do not fit the model (missing, extra or misshapen).

        Example:
            Not run here (needs a Ray cluster); the shepherd starts a round on an actor::

                ref = actor.run_round.remote(rnd, state_ref, H, rnd * H, [tokens_ref])
                result = ray.get(ref)
        """
        arrived, self._arrived = time.perf_counter(), time.time()
        self._trip = None if self._returned is None else arrived - self._returned
        try:
            self._await_tail(rnd)
            last = max(filter(None, (self._returned, self._steps_ended)), default=None)
            self._idle = None if last is None else time.perf_counter() - last
            tail = self._tail_steps(inner_steps) if finish_later else 0
            with on_device(self.device):  # the optimizer state it loads goes where the model is
                steps, finish = self._run_round(rnd, params, inner_steps, first_step, tokens, inner_state, seconds,
                                                reset_inner, stream, evaluate, keep_state, compression, tail)
            if not finish_later:
                return finish()
            if isinstance(finish, concurrent.futures.Future):  # its last steps still run: then it finishes
                self._tail, result = finish, concurrent.futures.Future()
                finish.add_done_callback(lambda f: self._finish_after(f, result))
                self._post(rnd, result)
            else:
                self._post(rnd, self._helpers.submit(finish))
            return {"rank": self.rank, "round": rnd, "steps": steps}
        except BaseException as e:
            if finish_later:  # collect(rnd) raises it too, rather than wait for a result that never comes
                future = concurrent.futures.Future()
                future.set_exception(e)
                self._post(rnd, future)
            raise
        finally:
            self._returned = time.perf_counter()

    def _await_tail(self, rnd):
        """Waits for the last round's last steps (run after its call returned); raises when
        they failed, since this round would start from what they left."""
        tail, self._tail = self._tail, None
        if tail is not None and tail.exception() is not None:  # exception() waits for it
            raise RuntimeError(f"worker {self.rank}: round {rnd} cannot start: the last round's steps failed: "
                               f"{tail.exception()}") from tail.exception()

    def _tail_steps(self, inner_steps):
        """How many of a pipelined round's last steps run after its call returns: as many as the
        last call's trip (the next call's arrival) took, and one more; none on a GPU, whose steps
        are queued anyway, and none before there is a trip to go by."""
        if str(self.device) != "cpu" or self._trip is None or not self._step_s:
            return 0
        return min(inner_steps // 2, math.ceil(self._trip / self._step_s) + 1)

    def _finish_after(self, tail, result):
        """Once a round's last steps are done (tail: the Future of its finish function), its
        finish runs on a helper thread, its outcome result's."""
        if tail.exception() is not None:
            result.set_exception(tail.exception())
            return

        def settle(done):
            if done.exception() is not None:
                result.set_exception(done.exception())
            else:
                result.set_result(done.result())
        self._helpers.submit(tail.result()).add_done_callback(settle)

    def _post(self, rnd, future):
        with self._finished_cv:
            for old in [k for k in self._finishing if k < rnd - 2]:  # never collected: the shepherd moved on
                del self._finishing[old]
            self._finishing[rnd] = future
            self._finished_cv.notify_all()

    def collect(self, rnd, timeout=None):
        """The result of round rnd, run with finish_later (as run_round returns it without),
        once it is downloaded and encoded; the round's error if it failed. Call it in a
        concurrency group of its own: it waits beside the next round.

        Args:
            rnd: the round.
            timeout: seconds to wait for the round to start and finish (None, default: no limit).

        Returns:
            The dict run_round returns.

        Raises:
            TimeoutError: no result in time.
            Whatever the round raised.

        Example:
            Not run here (needs a Ray cluster); the shepherd asks an actor::

                actor.run_round.remote(rnd, ..., finish_later=True)
                result = ray.get(actor.collect.options(concurrency_group="collect").remote(rnd))
        """
        with self._finished_cv:
            if not self._finished_cv.wait_for(lambda: rnd in self._finishing, timeout):
                raise TimeoutError(f"worker {self.rank}: round {rnd} did not start in {timeout} s")
            future = self._finishing.pop(rnd)
        return future.result(timeout)

    def _start_from(self, params, stream, reset):
        """Takes the round's global values: the names whose pseudo-gradient it returns, and the
        values still to merge (at stream's merge_at) with the bytes fetched for them."""
        if stream is None:
            self.model.load_state_dict(params, strict=True)
            self.reference = params
            return self.names, None, 0
        own = stream.get("own")
        if self.reference is None and own is not None and not reset:  # a resumed run: its own state back
            own = _fetched(own)
            self.model.load_state_dict(own["local"], strict=True)
            self.reference = {k: np.array(v, np.float32) for k, v in own["reference"].items()}
            return stream["send"], params, 0
        if self.reference is None or reset:  # a new (or restarted) worker, or a rolled-back round
            full = _fetched(stream["full"])
            self.model.load_state_dict(full, strict=True)
            self.reference = {k: np.array(full[k], np.float32) for k in self.names}
            pending = None if stream.get("full_is_current", True) else params  # a step the whole model lacks
            return stream["send"], pending, sum(v.nbytes for v in full.values())
        return stream["send"], params, 0

    def _prepare_merge(self, step, alpha):
        """The host side of Streaming DiLoCo's merge, on a helper thread while the round steps:
        waits for the step (encoded, or [a reference] the shepherd posts it at), applies it to
        the global values this worker knows, and uploads (1 - alpha) times them in one vector.
        Returns (the new global values, {name: its view of the vector on the device}), or None
        for an empty step."""
        step = _fetched(step)
        if not step:
            return None
        merged = {k: self.reference[k] + d for k, d in decode(step).items()}
        return merged, dict(zip(merged, flat_upload(list(merged.values()), self.device, 1 - alpha)))

    def _merge(self, prepared, alpha):
        """Streaming DiLoCo's merge (prepared by _prepare_merge, waited for here): a fragment's
        outer step moves the global values this worker knows, and its own values move to
        alpha * own + (1 - alpha) * global, on the model's device."""
        import pcp
        t = time.perf_counter()
        prepared = prepared.result()
        self._waited += time.perf_counter() - t
        if prepared is None:
            return
        merged, scaled = prepared
        params = self.model.state_dict()
        with pcp.no_grad():
            for k, v in scaled.items():
                params[k][...] = params[k] * alpha + v
        self.reference.update(merged)  # new arrays: a round still finishing keeps the ones it took

    def _run_round(self, rnd, params, inner_steps, first_step, tokens, inner_state, seconds, reset_inner, stream,
                   evaluate, keep_state, compression, tail=0):
        """Runs the round's steps and queues what its result needs on the device; returns the
        steps taken and the function that downloads and encodes the result (on this thread or
        another). With tail > 0 the last `tail` steps run on the stepper thread: then it returns
        (None, the Future of that function)."""
        import pcp
        from pcp.optim import warmup_cosine

        t0, began, arrived = time.perf_counter(), time.time(), self._arrived
        self._load_tokens(tokens)
        if inner_state is not None and (self.opt.step_count == 0 or reset_inner):
            self.opt.load_state_dict(_fetched(inner_state))
        send, pending, fetched = self._start_from(params, stream, reset_inner)
        start_reference = dict(self.reference)  # its digest is taken when the round finishes
        merge_at, alpha = (stream["merge_at"], stream["alpha"]) if stream else (0, 0.0)
        when_ready = bool(stream and stream.get("when_ready"))
        seed = round_seed(self.cfg.seed, self.rank, rnd)
        rng = np.random.default_rng(seed)
        pcp.random.seed(seed)  # dropout masks
        horizon = self.dcfg.rounds * self.dcfg.inner_steps
        lr_at = warmup_cosine(self.cfg.learning_rate, self.cfg.min_lr, self.cfg.warmup_iters,
                              max(horizon, self.cfg.warmup_iters + 1))
        self.model.train()
        losses = []  # the steps' loss tensors, read together at the end: no step waits for the GPU
        with self._lock:
            self._progress.update(round=rnd, step=0, loss=None)
        if pending is not None:  # its host side runs beside the steps
            pending = self._helpers.submit(self._prepare_merge, pending, alpha)
        t_steps, self._waited, merged_at, closed = time.perf_counter(), 0.0, None, False

        def run_steps(stop):  # from the next step up to stop
            nonlocal pending, merged_at, closed
            for i in range(len(losses), stop):
                if pending is not None and i >= merge_at and (not when_ready or pending.done()):
                    self._merge(pending, alpha)
                    pending, merged_at = None, i
                if closed or seconds is not None and time.perf_counter() - t0 >= seconds:
                    closed = True
                    return  # the round closes: what was done so far counts, by its tokens
                lr = lr_at(first_step + i)
                for g in self.opt.param_groups:
                    g["lr"] = lr
                x, y = self._batch(rng, self.train_tokens, self.batch_size)
                losses.append(self.step(x, y).detach())  # detached: a loss keeps its whole graph alive
                shown = losses[-1].item() if (i + 1) % self.cfg.log_interval == 0 else None  # for progress()
                with self._lock:
                    self._progress.update(step=i + 1, steps_done=self._progress["steps_done"] + 1, lr=lr,
                                          loss=shown if shown is not None else self._progress["loss"])

        def end_round():  # the merge still pending, the evaluation, the result's copies queued
            nonlocal merged_at
            if pending is not None:  # not merged yet: the round ended first
                self._merge(pending, alpha)
                merged_at = len(losses)
            t_finish = self._steps_ended = time.perf_counter()
            steps = len(losses)
            if steps:
                self._step_s = (t_finish - t_steps - self._waited) / steps
            val_losses = self._val_losses(rng) if evaluate else []
            names = self.names if keep_state and stream else send  # streaming checkpoints keep all its own values
            unpack = self._outputs(losses + val_losses, names, keep_state)
            reference, encoding = dict(self.reference), compression or base_compression(self.dcfg.compression)
            timings = {"start": t_steps - t0, "steps": t_finish - t_steps - self._waited, "waited": self._waited,
                       "idle": self._idle, "merged_at": merged_at, "began": began, "arrived": arrived,
                       "tail": len(losses) - ahead}
            record = {"rank": self.rank, "round": rnd, "steps": steps, "lr": lr_at(first_step + max(steps, 1) - 1),
                      "tokens": steps * self.batch_size * self.data.tokens_per_row, "device": self._progress["device"],
                      "dtype": str(self.dtype), "device_uuid": self._progress["device_uuid"],
                      "device_by": self.device_by, "fetched_bytes": fetched,
                      "plan_bytes": self.plan_bytes, "plan_load_seconds": self.plan_load_seconds}
            timings["finish"] = time.perf_counter() - t_finish  # on this thread; the rest may overlap the next round

            def finish():
                t = time.perf_counter()
                read, local, opt_state = unpack()
                train, val = read[:steps], read[steps:]
                encoded = encode({k: reference[k] - local[k] for k in send}, encoding)  # global - local
                kept = {"state_bytes": 0}
                if keep_state:
                    kept["inner_state"] = opt_state
                    if stream:
                        kept["stream_state"] = {"local": local, "reference": reference}
                    kept["state_bytes"] = array_bytes([opt_state, kept.get("stream_state")])
                return {**record, "pseudo_grad": encoded, "start_digest": state_digest(start_reference),
                        "bytes": nbytes(encoded), "train_loss": float(np.mean(train)) if steps else float("nan"),
                        "last_loss": float(train[-1]) if steps else float("nan"),
                        "nonfinite_step": next((i for i, v in enumerate(train) if not np.isfinite(v)), None),
                        "val_loss": float(np.mean(val, dtype=np.float64)) if len(val) else None,
                        "seconds": time.perf_counter() - t0,
                        "timings": dict(timings, background=time.perf_counter() - t, ended=time.time()), **kept}
            return steps, finish

        if pending is not None:  # merged before the call returns, which so waits for the shepherd's
            tail = min(tail, max(inner_steps - merge_at - 1, 0))  # step: it starts one round ahead at most
        run_steps(inner_steps - tail)
        ahead = len(losses)  # the steps done when the call returns
        if tail and not closed and pending is None:
            def last_steps():
                with on_device(self.device):
                    run_steps(inner_steps)
                    return end_round()[1]
            return None, self._stepper.submit(last_steps)
        return end_round()

    def _outputs(self, losses, names, keep_state):
        """What a round's result is made of, copied on the device now (flat_copy): the losses,
        the parameters named, and with keep_state the optimizer's state. The next round may then
        change the model while another thread downloads it. Returns the function that downloads
        it and gives (losses, {name: parameter}, the optimizer's state as export_state gives it
        or None)."""
        import pcp
        params = self.model.state_dict()
        download = flat_copy([pcp.stack(losses) if losses else pcp.zeros(0)] + [params[k] for k in names])
        state = export_state(self.opt, later=True) if keep_state else (lambda: None)

        def unpack():
            read, *values = download()
            return read, dict(zip(names, values)), state()
        return unpack

    def _val_losses(self, rng):
        """The local model's losses (tensors, not read yet) on eval_iters val batches, in
        evaluation mode and the inner steps' dtype (as pcp train evaluates)."""
        import pcp
        from pcp.train.loop import autocast_for
        self.model.eval()
        with pcp.no_grad(), autocast_for(self.dtype):
            losses = [self.model(*self._batch(rng, self.val_tokens, self.cfg.batch_size))[1]
                      for _ in range(self.cfg.eval_iters)]
        self.model.train()
        return losses

    def evaluate(self, rng):
        """The local model's mean loss on eval_iters validation batches, in evaluation mode.

        Args:
            rng: a numpy.random.Generator that draws the batches.

        Returns:
            A float.

        Raises:
            TypeError: the tokens have not arrived yet (no round ran).

        Example:
            Not run here (it needs the tokens of a round first)::

                val = worker.evaluate(np.random.default_rng(0))
        """
        import pcp
        with on_device(self.device):
            return float(np.mean(pcp.stack(self._val_losses(rng)).numpy(), dtype=np.float64))
