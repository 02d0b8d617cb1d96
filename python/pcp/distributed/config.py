"""DiLoCo's own settings; the model, inner optimizer and data come from a TrainConfig."""
from dataclasses import dataclass, field

from pcp._config import DictConfig

from .compression import COMPRESSIONS

SPLITS = ("iid", "contiguous")
WORKER_DEVICES = ("cpu", "gpu")
WORKER_DTYPES = ("auto", "float32", "bfloat16", "float16")
WEIGHTINGS = ("tokens", "uniform")


@dataclass
class DiLoCoConfig(DictConfig):
    """DiLoCo's own settings (``pcp diloco``); the model, inner optimizer and data come from a
    TrainConfig.

    Args:
        workers: worker actors, each a model replica (default 4).
        inner_steps: H, the inner AdamW steps per worker per round (default 50).
        rounds: outer rounds in all (default 10).
        outer_lr: the outer Nesterov SGD's learning rate (default 0.7, the paper's).
        outer_momentum: its momentum, in [0, 1) (default 0.9).
        compression: of the pseudo-gradients on their way back: 'none', 'float16', or 'int8',
            'int4' or 'fp4' in blocks with a scale each (pcp.distributed.compression); or
            'auto': float32, and int8 then int4 for a worker whose round trips, measured each
            round, take more than twice the others' median and a second (10 rounds later, fast
            again, it tries the level below; a try that fails doubles the wait for the next).
        split: 'iid' (every worker samples the whole train split) or 'contiguous' (a slice
            each).
        round_timeout: seconds a round lasts: a worker still stepping then stops and sends the
            progress it has (counted by its tokens), stopping earlier by the time its last
            round's call and result took on the way (a slow link), down to a quarter of it;
            one silent for longer (by a grace of 10 s and a tenth) is left out of the round.
        fragments: F, Streaming DiLoCo's fragments: the parameters split into F groups (strided
            by layer) that synchronise in turn, one every H / F inner steps, so that each
            exchange carries about 1 / F of the model (default 1: all at once, every H steps).
        overlap: tau, inner steps a fragment's new global values take to arrive: a worker
            merges them tau steps into the next H / F, so the exchange can overlap those steps
            (default 0: before the next step).
        merge_alpha: with overlap, the merge keeps this share of the worker's own values:
            local = alpha * local + (1 - alpha) * global (default 0.5, the paper's).
        pipeline: with overlap, each worker starts its next round as soon as its steps are
            done, while a thread of its own downloads and encodes the round's pseudo-gradient and
            the shepherd averages, steps, evaluates and checkpoints (default True); False waits
            for all that first. Both give the same bits.
        merge_when_ready: with overlap and pipeline, a worker merges the outer step at the
            first step from tau on at which it has arrived (at the latest when the round ends),
            instead of waiting for it at step tau (default False). No worker then waits for a
            shepherd whose step takes less than a round, but the step a merge happens at
            depends on timing, so reruns are not bit for bit the same.
        weighting: how the outer average weighs each worker's pseudo-gradient: 'tokens' (by the
            tokens its inner steps processed, default) or 'uniform'.
        batch_sizes: each worker's batch size, by rank (repeated when there are more workers);
            empty (default) gives every worker the TrainConfig's.
        threads_per_worker: CPU threads each worker's kernels use (default 1).
        worker_device: where each worker's model and inner steps run: 'cpu' or 'gpu' (a GPU
            through Ray's GPU resources; the inner steps in the TrainConfig's dtype, compiled
            with its compile setting, as ``pcp train`` runs them).
        worker_devices: each worker's device by rank ('cpu' or 'gpu', repeated when there are
            more workers), for a run of CPU and GPU workers; empty (default): worker_device for
            all. Every worker runs the same plan (pcp.distributed.diloco), placed on its device.
        worker_dtypes: each worker's products' dtype by rank ('auto', 'float32', 'bfloat16' or
            'float16', repeated when there are more workers), e.g. float32 on CPU workers and
            bfloat16 on GPU ones; empty (default): the TrainConfig's dtype for all. Parameters,
            inner optimizer states and pseudo-gradients stay float32 whatever the dtype.
        gpus_per_worker: Ray's num_gpus per worker with worker_device 'gpu': a fraction lets
            several workers share a GPU; 0 (default) spreads the workers evenly over the
            cluster's GPUs (one each when there are enough).
        address: a Ray cluster's HOST:PORT to join ('' starts a local one).
        eval_every: rounds between evaluations of the global model and the workers' own
            (default 1; the first and last rounds are always evaluated, the others report a
            val_loss of None).
        worker_eval: on those rounds the workers also score their own models on eval_iters
            val batches (default True: the dashboard's worker curves). That time delays each
            worker's result (about 6 inner steps' worth for shakespeare-char-cpu); False spares
            it, and the rounds report worker_val None.
        checkpoint_every: rounds between checkpoints (default 1; the last round always
            checkpoints). The workers send their AdamW states, which a checkpoint holds, only
            on those rounds, so a restarted or rolled-back worker goes on from the last ones sent.
        state_every: rounds between the workers sending their AdamW states (and a streaming
            worker its own values) for the checkpoint, which are twice to four times the model
            each: 0 (default) on every checkpoint round; N > 0 on every Nth round (and the
            last), the checkpoints between holding the last ones sent. Across slow links these
            transfers, not the pseudo-gradients, can set a round's pace (the round line shows
            their bytes); a resumed run then goes on from older inner states, so it is no
            longer bit for bit the uninterrupted one.

    Raises:
        TypeError: an unknown field.

    Example:
        >>> from pcp.distributed import DiLoCoConfig
        >>> DiLoCoConfig(workers=8, compression="int8").validate().workers
        8
    """

    workers: int = 4
    inner_steps: int = 50       # H: inner AdamW steps per worker per round
    rounds: int = 10
    outer_lr: float = 0.7       # the paper's outer Nesterov SGD
    outer_momentum: float = 0.9
    compression: str = "none"   # of pseudo-gradients: none, float16, int8, int4 or fp4
    split: str = "iid"          # iid: every worker samples the whole train split; contiguous: a slice each
    round_timeout: float = 600.0  # seconds a round lasts: then workers send what they have
    fragments: int = 1          # Streaming DiLoCo: parameter groups synchronised in turn
    overlap: int = 0            # tau: inner steps before a fragment's new global values are merged
    merge_alpha: float = 0.5    # with overlap: local = alpha * local + (1 - alpha) * global
    pipeline: bool = True       # with overlap: start the next round before the shepherd's step
    merge_when_ready: bool = False  # with overlap: merge when the step arrives (from step tau on)
    weighting: str = "tokens"   # of pseudo-gradients in the outer average: tokens or uniform
    batch_sizes: list = field(default_factory=list)  # per worker (by rank); empty: the TrainConfig's
    threads_per_worker: int = 1
    worker_device: str = "cpu"  # cpu or gpu
    worker_devices: list = field(default_factory=list)  # per worker (by rank); empty: worker_device
    worker_dtypes: list = field(default_factory=list)  # per worker (by rank); empty: the TrainConfig's
    gpus_per_worker: float = 0.0  # Ray num_gpus per GPU worker; 0: the GPUs shared evenly
    address: str = ""           # a Ray cluster HOST:PORT to join; empty: start a local one
    eval_every: int = 1         # rounds between evaluations (first and last always)
    worker_eval: bool = True    # on those rounds the workers score their own models too
    checkpoint_every: int = 1   # rounds between checkpoints (last always)
    state_every: int = 0        # rounds between workers sending their inner states; 0: every checkpoint

    def device_of(self, rank):
        """'cpu' or 'gpu': where worker `rank` runs (worker_devices, else worker_device). It
        raises nothing.

        Args:
            rank: the worker's rank.

        Returns:
            A str.

        Example:
            >>> from pcp.distributed import DiLoCoConfig
            >>> [DiLoCoConfig(workers=3, worker_devices=["cpu", "gpu"]).device_of(r) for r in range(3)]
            ['cpu', 'gpu', 'cpu']
        """
        devices = self.worker_devices
        return devices[rank % len(devices)] if devices else self.worker_device

    def dtype_of(self, rank, default):
        """The dtype name worker `rank`'s products take: worker_dtypes' entry, else `default`
        (the TrainConfig's dtype). It raises nothing.

        Args:
            rank: the worker's rank, from 0.
            default: the name to give when worker_dtypes is empty.

        Returns:
            'auto', 'float32', 'bfloat16' or 'float16' ('auto' is resolved on the worker's
            device, as pcp train resolves it).

        Example:
            >>> from pcp.distributed import DiLoCoConfig
            >>> [DiLoCoConfig(worker_dtypes=["float32", "bfloat16"]).dtype_of(r, "auto") for r in range(3)]
            ['float32', 'bfloat16', 'float32']
        """
        dtypes = self.worker_dtypes
        return dtypes[rank % len(dtypes)] if dtypes else default

    def validate(self):
        """Checks the settings together, as a run does before it starts.

        Returns:
            This config.

        Raises:
            ValueError: a count below its minimum, an outer_lr that is not positive, a momentum
                outside [0, 1), fragments that do not divide inner_steps, an overlap past H /
                fragments, an eval_every or checkpoint_every below 1 (state_every below 0), an unknown
                compression, split, weighting, worker device or dtype, a batch size below 1, a gpus_per_worker
                that is neither a fraction nor whole, or an address not HOST:PORT.

        Example:
            >>> from pcp.distributed import DiLoCoConfig
            >>> DiLoCoConfig(address="10.0.0.1:6379").validate().address
            '10.0.0.1:6379'
        """
        if self.workers < 1:
            raise ValueError(f"diloco: workers must be at least 1, got {self.workers}")
        if self.inner_steps < 1:
            raise ValueError(f"diloco: inner_steps (H) must be at least 1, got {self.inner_steps}")
        if self.rounds < 0:
            raise ValueError(f"diloco: rounds must be >= 0, got {self.rounds}")
        if self.outer_lr <= 0 or not 0 <= self.outer_momentum < 1:
            raise ValueError(f"diloco: outer_lr must be > 0 and outer_momentum in [0, 1), got {self.outer_lr}, "
                             f"{self.outer_momentum}")
        if self.compression not in COMPRESSIONS + ("auto",):
            raise ValueError(f"diloco: compression must be one of {', '.join(COMPRESSIONS)} or auto, got "
                             f"{self.compression!r}")
        if self.split not in SPLITS:
            raise ValueError(f"diloco: split must be one of {', '.join(SPLITS)}, got {self.split!r}")
        if self.round_timeout <= 0 or self.threads_per_worker < 1:
            raise ValueError("diloco: round_timeout must be > 0 and threads_per_worker >= 1")
        if self.eval_every < 1 or self.checkpoint_every < 1 or self.state_every < 0:
            raise ValueError(f"diloco: eval_every and checkpoint_every must be at least 1 round and state_every at "
                             f"least 0, got {self.eval_every}, {self.checkpoint_every}, {self.state_every}")
        if self.fragments < 1 or self.inner_steps % self.fragments:
            raise ValueError(f"diloco: fragments must be >= 1 and divide inner_steps (H = {self.inner_steps}), got "
                             f"{self.fragments}")
        if not 0 <= self.overlap <= self.inner_steps // self.fragments or not 0 <= self.merge_alpha < 1:
            raise ValueError(f"diloco: overlap must be in [0, H / fragments = {self.inner_steps // self.fragments}] and "
                             f"merge_alpha in [0, 1), got {self.overlap}, {self.merge_alpha}")
        if self.weighting not in WEIGHTINGS:
            raise ValueError(f"diloco: weighting must be 'tokens' or 'uniform', got {self.weighting!r}")
        if not all(isinstance(b, int) and b >= 1 for b in self.batch_sizes):
            raise ValueError(f"diloco: batch_sizes must be whole numbers >= 1, got {self.batch_sizes!r}")
        if self.worker_device not in WORKER_DEVICES or any(d not in WORKER_DEVICES for d in self.worker_devices):
            raise ValueError(f"diloco: worker_device(s) must be 'cpu' or 'gpu', got {self.worker_device!r}, "
                             f"{self.worker_devices!r}")
        if any(d not in WORKER_DTYPES for d in self.worker_dtypes):
            raise ValueError(f"diloco: worker_dtypes must each be one of {', '.join(WORKER_DTYPES)}, got "
                             f"{self.worker_dtypes!r}")
        g = self.gpus_per_worker
        if g < 0 or (g > 1 and g != int(g)):  # Ray's rule for num_gpus
            raise ValueError(f"diloco: gpus_per_worker must be a fraction in [0, 1] or a whole number, got "
                             f"{self.gpus_per_worker}")
        if self.address:
            host, _, port = self.address.rpartition(":")
            if not host or not port.isdigit():
                raise ValueError(f"diloco: address must be HOST:PORT, got {self.address!r}")
        return self
