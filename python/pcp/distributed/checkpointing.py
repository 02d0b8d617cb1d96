"""The shepherd's checkpoints (OUT/diloco.safetensors): written from copies by a thread while the
run goes on, atomically, and read back with every part checked."""
import concurrent.futures
import os

import numpy as np

from .compression import decode, encode
from .worker import export_state, on_device

CHECKPOINT = "diloco.safetensors"
MARKERS = (CHECKPOINT, "diloco.prev.safetensors")  # a run's checkpoints: OUT holds a run when one is there
RUN_FILES = ("diloco.json", "diloco.prev.json", "loss.png", "tokenizer.json")


class _Saved:
    """A state_dict standing in for a module or optimizer in save_checkpoint: a checkpoint
    written from copies while the run goes on (a module's host arrays become CPU tensors)."""

    def __init__(self, state, module):
        self.state, self.module = state, module

    def state_dict(self):
        import pcp
        return {k: pcp.tensor(v, device="cpu") for k, v in self.state.items()} if self.module else self.state


class Checkpoints:
    """Shepherd's save(), wait_saved() and the loading of a checkpoint on --resume (a mixin: the
    state it reads and writes is the Shepherd's)."""

    def save(self, wait=True):
        """Checkpoints the run to cfg.out/diloco.safetensors: the global model, the outer
        optimizer, each worker's last inner state, and the history (run_round calls it). What
        is saved is copied now and written by a thread, atomically (the file is replaced whole
        or not at all), one checkpoint after the other.

        Args:
            wait: return once the file is written (default True); False returns at once, and
                the next save(), run()'s end or wait_saved() raise a failed write's error.

        Returns:
            None.

        Raises:
            OSError: the file (or, with wait=False, the one before) cannot be written.

        Example:
            Not run here (needs a Ray cluster and minutes of training)::

                shepherd.save()
        """
        import json
        from pcp.train.checkpoint import save_checkpoint
        self.wait_saved()
        extra = json.loads(json.dumps(  # a copy: the history goes on growing while the file is written
            {"diloco": self.dcfg.to_dict(), "history": self.history, "bytes_sent": self.bytes_sent,
             "bytes_received": self.bytes_received, "stream_rounds": {r: n for r, (n, _, _) in self.stream_states.items()}}))
        # Streaming: each worker's own parameters and the global values it knows, and the step
        # it has still to merge (decoded: merging it again gives the same values).
        arrays = {f"stream.{r}.{part}": st[part] for r, (_, st, _) in self.stream_states.items() for part in st}
        if self._update:
            arrays["stream.update"] = decode(self._update)
        model, outer = _Saved(self.global_state(), True), _Saved(export_state(self.outer), False)
        optimizers = {f"worker.{r}": sd for r, sd in self.inner_states.items()}
        args = (os.path.join(self.cfg.out, CHECKPOINT), model, outer, self.round, self.cfg.to_dict(), extra)
        if self._writer is None:
            self._writer = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="diloco-save")
        self._saving = self._writer.submit(save_checkpoint, *args, optimizers=optimizers, arrays=arrays,
                                           keep_previous=True)
        if wait:
            self.wait_saved()

    def wait_saved(self):
        """Waits until the last checkpoint save() began is written.

        Returns:
            None.

        Raises:
            OSError: it could not be written.

        Example:
            Not run here (needs a Ray cluster and minutes of training)::

                shepherd.save(wait=False)
                shepherd.wait_saved()
        """
        saving, self._saving = self._saving, None
        if saving is not None:
            saving.result()

    def _load(self):
        import ray
        from pcp.train.checkpoint import load_checkpoint
        from pcp.train.loop import build_optimizer
        # The workers' states are checked by loading them into optimizers like theirs (same groups):
        # the GPT's AdamW, or a traced model's plan.
        inner = {r: build_optimizer(self.cfg, self.model) if self.task is None else self._inner_stand_in(r)
                 for r in range(self.dcfg.workers)}
        from pcp.serialization import SafetensorsError, read_metadata
        from pcp.train import rundir
        from pcp.train.checkpoint import parse_metadata
        from pcp.train.config import resume_changes
        path, latest = self._resume_from, os.path.join(self.cfg.out, CHECKPOINT)
        with on_device(self.device):  # the outer momentum goes where the parameters are
            try:
                changes = resume_changes(path, parse_metadata(path, read_metadata(path))["config"], self.cfg.to_dict())
                meta = load_checkpoint(path, self.model, self.outer,
                                       optimizers={f"worker.{r}": opt for r, opt in inner.items()})
            except SafetensorsError as e:
                rundir.offer_previous(e, path, latest, self.cfg.to_dict())
        messages = ["resumed with settings changed from the checkpoint's: " + ", ".join(changes)] if changes else []
        rundir.set_aside_newest(self.cfg.out, path, latest, messages)
        for text in messages:
            self.report({"kind": "message", "text": text})
        for r, opt in inner.items():
            if f"worker.{r}" in meta.get("optimizers", {}):
                self.inner_states[r] = export_state(opt)
                self.inner_refs[r] = ray.put(self.inner_states[r])
        self.round = meta["step"]
        self.history = meta.get("history", [])
        self.bytes_sent, self.bytes_received = meta.get("bytes_sent", 0), meta.get("bytes_received", 0)
        self._load_streams(meta)
        if not (isinstance(self.history, list) and all(isinstance(r, dict) for r in self.history)
                and all(isinstance(b, int) for b in (self.bytes_sent, self.bytes_received))):
            raise SafetensorsError(path, "checkpoint metadata: expected "
                                   "'history': a list of rounds and integer 'bytes_sent', 'bytes_received'")

    def _load_streams(self, meta):
        import ray
        from pcp.serialization import SafetensorsError
        path, arrays = self._resume_from, meta["arrays"]
        shapes = {k: v.shape for k, v in self.global_state().items()}
        for prefix, named in arrays.items():
            for k, v in named.items():
                if k not in shapes or v.shape != shapes[k] or v.dtype != np.float32:
                    raise SafetensorsError(path, f"not a float32 {shapes.get(k, 'parameter')} of the model", f"{prefix}.{k}")
        self._update = encode(arrays["stream.update"], "none") if "stream.update" in arrays else {}
        rounds = meta.get("stream_rounds", {})
        for r in range(self.dcfg.workers):
            parts = {part: arrays.get(f"stream.{r}.{part}") for part in ("local", "reference")}
            if str(r) in rounds and all(v is not None for v in parts.values()):
                self.stream_states[r] = (rounds[str(r)], parts, ray.put(parts))
