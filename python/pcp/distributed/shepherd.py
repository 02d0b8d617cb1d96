"""The DiLoCo shepherd: the Ray driver that owns the global model and the outer optimizer."""
import concurrent.futures
import contextlib
import math
import os
import threading
import time

import numpy as np

from .checkpointing import CHECKPOINT, MARKERS, RUN_FILES, Checkpoints
from .cluster import Mailbox, init_ray, shutdown_ray
from .compression import base_compression, decode, encode, nbytes
from .fragments import split_fragments
from .gpus import check_own_gpus
from .health import LONG_GRACE, adapt_to_links, check_progress, drop_nonfinite, step_budget, trips, worker_compression
from .task import TracedModel
from .progress import Progress
from .worker import Worker, export_state, flat_copy, flat_upload, on_device


class Shepherd(Checkpoints, Progress, TracedModel):
    """The DiLoCo driver (``pcp diloco``): it owns the global model and the outer optimizer, and
    runs rounds over Worker actors on Ray (joining the cluster at diloco_cfg.address, or starting
    a local one). Each round it sends the global parameters, each worker runs H inner AdamW steps
    on its data, and the averaged pseudo-gradients take one outer Nesterov SGD step. A worker
    that fails or times out is left out of the round; Ray restarts it and it rejoins. After each
    round the state is checkpointed to cfg.out/diloco.safetensors (workers' states included, so
    resume is exact).

    Args:
        train_cfg: a TrainConfig (model, inner optimizer, data, out, device).
        diloco_cfg: a DiLoCoConfig.
        report: a function receiving every event, a dict with a 'kind' ('start', 'progress',
            'round', 'worker_lost', 'worker_joined', 'message', 'end'; see pcp.dashboard), or
            None (default) to ignore them.
        resume: continue from cfg.out's diloco.safetensors (True), or from a checkpoint file (its
            path), e.g. diloco.prev.safetensors (default False); no checkpoint: a new run.
        overwrite: start anew in a cfg.out that holds a DiLoCo run, whose files move to
            cfg.out/replaced-<time>/ (default False: such a folder is refused).
        task: what pcp.distributed.diloco trains instead of the TrainConfig's GPT (loss_fn,
            model: its global copy, and data: a Data), sent to the workers as plans (default None).

    Raises:
        ValueError: an invalid config.
        RunDirError: cfg.out holds a run and neither resume nor overwrite is given, or another
            run holds it (a ValueError).
        ConnectionError: a cluster address nothing answers at.
        ImportError: Ray is not installed (pip install "pcp[distributed]").

    Example:
        Not run here (needs a Ray cluster and minutes of training)::

            from pcp.distributed import DiLoCoConfig, Shepherd
            from pcp.train import preset

            shepherd = Shepherd(preset("shakespeare-char-cpu"), DiLoCoConfig(workers=4, rounds=10))
            try:
                history = shepherd.run()
            finally:
                shepherd.shutdown()
            print(history[-1]["val_loss"])
    """

    def __init__(self, train_cfg, diloco_cfg, report=None, resume=False, overwrite=False, task=None):
        # A local Ray cluster started here is stopped by shutdown(), also when this fails.
        self.cfg = train_cfg.validate()
        self.dcfg = diloco_cfg.validate()
        self.task = task
        self.report = report or (lambda event: None)
        self.workers = {}  # rank -> {"actor", "alive", "steps_done", "last_loss", "last_seen", "pid"}
        self._writer = self._saving = None  # the thread that writes checkpoints, and its last write
        self._threads = None  # that share the outer step's NumPy work (_each)
        self._owns_ray = False
        self._exit = contextlib.ExitStack()  # the folder's lock
        self._launches = threading.Condition()  # guards _ahead and _stepping (pipelined)
        self._launcher, self._stop_launching, self._launch_errors = None, threading.Event(), []
        self._asked, self._asked_at = {}, 0.0  # progress polls not answered yet (reference -> rank), sent at
        try:
            self._start(resume, overwrite)
        except BaseException:
            self.shutdown()
            raise

    def _start(self, resume, overwrite):
        import pcp
        from pcp.train import rundir
        from pcp.train.loop import compute_dtype

        self._exit.enter_context(rundir.locked(self.cfg.out))
        self._resume_from, more = rundir.resume_source(self.cfg.out, CHECKPOINT, resume) if resume else (None, [])
        for text in rundir.prepare(self.cfg.out, MARKERS, RUN_FILES, resume, overwrite) + more:
            self.report({"kind": "message", "text": text})
        any_gpu = any(self.dcfg.device_of(r) == "gpu" for r in range(self.dcfg.workers))
        gpus_here = len([d for d in pcp.devices() if d != "cpu"]) if any_gpu else None
        self._owns_ray = init_ray(self.dcfg.address, self.dcfg.workers, gpus_here)
        import ray
        self.gpus_per_worker = self._gpus_per_worker()
        pcp.random.seed(self.cfg.seed)
        self.device = pcp.device(self.cfg.device)  # where the global model and the outer step live
        payload = self._model_and_data()
        with on_device(self.device):
            self.outer = pcp.optim.SGD(self.model.parameters(), lr=self.dcfg.outer_lr,
                                       momentum=self.dcfg.outer_momentum, nesterov=self.dcfg.outer_momentum > 0)
        self.dtype = compute_dtype(self.cfg, str(self.device))  # of evaluate()'s products
        self.names = [n for n, _ in self.model.named_parameters()]
        self.params = dict(self.model.named_parameters())
        self.fragments = split_fragments({k: self.params[k].size for k in self.names}, self.dcfg.fragments)
        self.streaming = self.dcfg.fragments > 1 or self.dcfg.overlap > 0
        self._update = {}  # streaming: the last synchronised fragment's step, encoded for the workers
        self.stream_states = {}  # streaming: rank -> (round, the worker's own parameters and reference, its ref)
        self.tokens_ref = ray.put(payload)
        self.round = 0
        self.bytes_sent = self.bytes_received = 0
        self.history = []  # one record per round
        self.nonfinite_rounds = []  # (round, rank) of the worker rounds left out for a NaN loss
        self.last_results = []  # the workers' results of the last round (pseudo-gradients included)
        # Each worker's inner AdamW state after its last round, as the worker reported it: saved in the
        # checkpoint (resume is then exact) and handed to a worker that starts without one (resumed,
        # or restarted by Ray), which fetches it from the object store only then. Its bytes (twice the
        # model's) are not in bytes_received, which counts DiLoCo's own traffic: the pseudo-gradients.
        self.inner_states, self.inner_refs = {}, {}
        self._reset_inner = False  # after a rolled-back round: workers reload their states
        # Streaming with overlap: each worker starts its next round as soon as it finishes one,
        # and takes the outer step it merges from the mailbox when it gets there.
        self.pipelined = self.streaming and self.dcfg.overlap > 0 and self.dcfg.pipeline
        self._mailbox = ray.remote(num_cpus=0)(Mailbox).remote() if self.pipelined else None
        # Pipelined: a thread (_launch_ahead) starts each worker's next round as soon as its steps
        # are queued, while this one collects, steps and saves: no GPU waits for the shepherd.
        self._ahead = {}  # (rank, round) -> that round's result (a reference), started ahead
        self._stepping = {}  # a round's call (a reference) -> (rank, round): done when its steps are
        self._shared_reported = set()  # workers found sharing a GPU (_check_own_gpus)
        if self._resume_from:
            self._load()
        self._backup = self._snapshot()  # what a failed first round rolls back to
        self._state = self._backup[0]  # what it sends
        if self.tokenizer is not None:
            with open(os.path.join(self.cfg.out, "tokenizer.json"), "w") as f:
                f.write(self.tokenizer.to_json())
        for _ in range(self.dcfg.workers):
            self.add_worker()

    # -- workers -------------------------------------------------------------------------------
    def _gpus_per_worker(self):
        """Ray's num_gpus for each worker: none on CPUs; the configured share; or the cluster's
        GPUs shared evenly, so that the workers fit whole on them (one each when there are enough)."""
        import pcp
        import ray
        on_gpus = sum(self.dcfg.device_of(r) == "gpu" for r in range(self.dcfg.workers))
        if on_gpus == 0:
            return 0
        if self.dcfg.gpus_per_worker > 0:
            return self.dcfg.gpus_per_worker
        gpus = int(ray.cluster_resources().get("GPU", 0))
        if gpus == 0:
            raise ValueError(f"diloco: GPU workers but the Ray cluster has no GPU (this machine: {pcp.devices()})")
        return 1.0 / math.ceil(on_gpus / gpus)

    def add_worker(self):
        """Starts one more worker actor; it joins at the next round, with the global parameters
        then.

        Returns:
            The new worker's rank, an int.

        Raises:
            RayError: the cluster cannot place the actor.

        Example:
            Not run here (needs a Ray cluster and minutes of training)::

                rank = shepherd.add_worker()
        """
        import ray
        rank = max(self.workers, default=-1) + 1
        spec = {"train_config": self.cfg.to_dict(), "diloco_config": self.dcfg.to_dict(),
                "vocab_size": self.tokenizer.vocab_size if self.tokenizer else 0, "n_train": self.n_train,
                "rank": rank}
        if self.task is not None:
            spec["plan"] = self._plan_spec(rank)
        # Ray restarts a killed worker (same spec) and it rejoins at the next round; a round's task
        # is not retried: that round goes on without it.
        # One CPU each (and its share of a GPU), spread over the cluster's nodes.
        # Its rounds run one at a time; progress() and collect() answer beside them.
        # A pipelined round's result comes from collect(), in a group of its own: the worker encodes
        # it while the next round steps.
        actor = ray.remote(concurrency_groups={"progress": 1, "collect": 1})(Worker).options(
            max_restarts=-1, max_task_retries=0, num_cpus=1,
            num_gpus=self.gpus_per_worker * (self.dcfg.device_of(rank) == "gpu"),
            scheduling_strategy="SPREAD").remote(spec)
        self.workers[rank] = {"actor": actor, "alive": True, "steps_done": 0, "last_loss": None,
                              "last_seen": time.time(), "round": None}
        self.report({"kind": "worker_joined", "rank": rank, "round": self.round})
        return rank

    def worker_pid(self, rank, timeout=60):
        """The process id of a worker's actor.

        Args:
            rank: the worker's rank.
            timeout: seconds to wait for the answer (default 60).

        Returns:
            An int.

        Raises:
            KeyError: no worker of that rank.
            GetTimeoutError: no answer in time (a Ray error).

        Example:
            Not run here (needs a Ray cluster and minutes of training)::

                os.kill(shepherd.worker_pid(0), signal.SIGKILL)  # Ray restarts it
        """
        import ray
        return ray.get(self.workers[rank]["actor"].pid.remote(), timeout=timeout)

    # -- one round -----------------------------------------------------------------------------
    def global_state(self):
        """The global parameters, what a round sends to the workers. It raises nothing.

        Returns:
            A dict of name to float32 NumPy array (host copies, read from the device at once).

        Example:
            Not run here (needs a Ray cluster and minutes of training)::

                sizes = {name: a.shape for name, a in shepherd.global_state().items()}
        """
        sd = self.model.state_dict()
        return dict(zip(sd, flat_copy(list(sd.values()))()))

    def run_round(self):
        """Sends the global parameters (streaming: the last synchronised fragment's new values),
        lets each worker take H / fragments inner steps, waits for the workers' pseudo-gradients
        (streaming: of the round's fragment, fragments taking turns), averages those
        that came back (weighted by their tokens, or uniformly) and applies the outer step,
        evaluates the global model, checkpoints, and reports the round. Workers stop at
        round_timeout and send the steps they took; those that fail or stay silent are left out.
        It evaluates and checkpoints every eval_every and checkpoint_every rounds (and on the
        last). A round in which no worker took a step, or whose outer step makes a parameter
        non-finite, is rolled back: the global model, the outer momentum and the workers' inner
        states go back to where the round started, and the run goes on.

        Returns:
            The round's record, a dict: round, inner_steps (in all, per worker), val_loss
            (None on rounds not evaluated: DiLoCoConfig.eval_every), fragment (the one
            synchronised), round_bytes (sent and received in the round: what was in flight at
            once), peak_round_bytes (the most of any round so far), workers_in, workers_lost,
            worker_val, worker_train, bytes_sent, bytes_received, total_bytes, seconds, tokens,
            worker_tokens (by rank), state_bytes (of the inner states workers sent for the
            checkpoint: DiLoCoConfig.state_every), began (the round's start, as time.time()),
            arrivals (by rank: seconds from then to its result), rolled_back (why the round was
            undone, or None),
            worker_timings (by rank: the timings of Worker.run_round's result, its device and dtype) and
            shepherd_timings (seconds collecting the results; stepping and posting the step,
            and of that averaging the pseudo-gradients, applying the step and reading the
            model back, encoding and posting it; evaluating; saving on checkpoint rounds).

        Raises:
            OSError: the checkpoint cannot be written.

        Example:
            Not run here (needs a Ray cluster and minutes of training)::

                record = shepherd.run_round()
                print(record["round"], record["val_loss"], record["workers_lost"])
        """
        import ray

        t0, began = time.perf_counter(), time.time()
        rnd, H = self.round, self.dcfg.inner_steps // self.dcfg.fragments  # H / F steps between syncs
        fragment = self.fragments[rnd % self.dcfg.fragments]
        # The global model as this round finds it (as read after the last round's step, or from
        # the device), put once into the object store, whence workers read it without copies.
        state = self._state if self._state is not None else self.global_state()
        full_ref = ray.put(state)
        send_bytes = nbytes(self._update) if self.streaming else sum(v.nbytes for v in state.values())
        if self.pipelined:  # for a worker that begins anew in the round started ahead of this one's step
            self._mailbox.put.remote(rnd, [full_ref], "start")
        # Started ahead by _launch_ahead (pipelined), or now; workers added since start now.
        pending = self._take_ahead(rnd)
        if len(pending) < len(self.workers):
            launched = set(pending.values())
            reset, self._reset_inner = self._reset_inner, False
            pending.update({self._launch(rank, rnd, self._update, full_ref, True, reset): rank
                            for rank in self.workers if rank not in launched})
        for w in self.workers.values():
            w["live_step"] = 0

        arrivals = {}

        def finished(rank, result):
            if result is not None:  # when it came, and its trips: its next round's step budget (_launch)
                arrivals[rank], self.workers[rank]["trips"] = time.perf_counter() - t0, trips(self.workers[rank], result)
            if result is not None and "stream_state" in result:
                state = result.pop("stream_state")
                self.stream_states[rank] = (rnd, state, ray.put(state))
            if result is not None and "inner_state" in result:  # sent on checkpoint rounds
                self.inner_states[rank] = result.pop("inner_state")
                self.inner_refs[rank] = ray.put(self.inner_states[rank])

        results, lost = self._collect(rnd, pending, H, t0, finished)
        results = drop_nonfinite(self, rnd, results)
        t_collected = time.perf_counter()
        received = sum(r["bytes"] for r in results)
        sent = send_bytes * (len(results) + len(lost)) + sum(r["fetched_bytes"] for r in results)
        self.bytes_sent += sent
        results.sort(key=lambda r: r["rank"])  # a fixed order of the sum: the same bits on every run
        backup = self._backup
        for r in results:
            w = self.workers[r["rank"]]
            w.update(steps_done=w["steps_done"] + r["steps"], last_loss=r["last_loss"], lr=r["lr"], round=rnd,
                     device=r["device"], device_uuid=r["device_uuid"], plan_bytes=r.get("plan_bytes"),
                     plan_load_seconds=r.get("plan_load_seconds"))
        check_own_gpus(self, results)
        self._timings = {}  # _outer_step's marks: the pseudo-gradients averaged, the step applied and read
        failure, now = self._outer_step(results)
        if failure:  # the global model, its momentum and the workers' states as before the round
            self._restore(backup)
            self._update, now = {}, None
            self._drain(rnd)
            self.report({"kind": "message", "text": f"round {rnd + 1} rolled back: {failure}"})
        elif self.streaming:
            self._update = self._encode_step(fragment, backup[0], now)
        if self.pipelined and not failure:  # posted by reference: each worker reads the one copy
            self._mailbox.put.remote(rnd, [ray.put(self._update)])
        if self.streaming and not failure:  # after posting it: the workers wait for the step, not for this
            self._hold(fragment, now)
        t_posted = time.perf_counter()
        marks = [t_collected, self._timings.get("average", t_collected), self._timings.get("apply", t_collected), t_posted]
        self._backup = self._snapshot(now)  # what the next round rolls back to
        self._state = self._backup[0]  # and sends
        self._report_progress(time.perf_counter() - t0)
        self.bytes_received += received
        self.last_results = results
        self.round += 1
        t_evaluated = time.perf_counter()
        val = self.evaluate() if self._due(rnd, self.dcfg.eval_every) else None
        t_evaluated = time.perf_counter() - t_evaluated
        rec = {"round": self.round, "inner_steps": self.round * H, "val_loss": val,
               "fragment": rnd % self.dcfg.fragments, "round_bytes": sent + received,
               "peak_round_bytes": max([sent + received] + [r.get("round_bytes", 0) for r in self.history]),
               "workers_in": sorted(r["rank"] for r in results), "workers_lost": sorted(lost),
               "worker_val": {r["rank"]: r["val_loss"] for r in results},
               "worker_train": {r["rank"]: r["train_loss"] for r in results},
               "bytes_sent": sent, "bytes_received": received,
               "total_bytes": self.bytes_sent + self.bytes_received, "seconds": time.perf_counter() - t0,
               "tokens": sum(r["tokens"] for r in results), "worker_tokens": {r["rank"]: r["tokens"] for r in results},
               "state_bytes": sum(r.get("state_bytes", 0) for r in results), "arrivals": arrivals, "began": began,
               "rolled_back": failure or None, "worker_timings": {r["rank"]: dict(r["timings"], device=r["device"], dtype=r.get("dtype")) for r in results},
               "shepherd_timings": {"collect": t_collected - t0, "step": t_posted - t_collected,
                                    **{k: b - a for k, a, b in zip(("average", "apply", "post"), marks, marks[1:])},
                                    "evaluate": t_evaluated}}
        self.history.append(rec)
        if self._due(rnd, self.dcfg.checkpoint_every):
            t_saved = time.perf_counter()
            self.save(wait=False)  # written while the next round runs
            rec["shepherd_timings"]["save"] = time.perf_counter() - t_saved
        adapt_to_links(self, rec)
        self.report({"kind": "round", **rec})
        return rec

    def _outer_step(self, results):
        """The outer step on the workers' pseudo-gradients, weighted by their tokens (or
        uniformly), averaged in float32. Returns why the round failed (nothing came back, or the
        step made a parameter non-finite) or '', and the global model after it (global_state)."""
        weights = [float(r["tokens"]) if self.dcfg.weighting == "tokens" else 1.0 for r in results if r["tokens"] > 0]
        results = [r for r in results if r["tokens"] > 0]
        if not results:
            return "no worker finished a step", None
        total = sum(weights)
        grads = [decode(r["pseudo_grad"]) for r in results]

        def average(k):  # summed in the workers' order (sorted by rank): the same bits on every run
            a = np.float32(weights[0] / total) * grads[0][k]
            for g, weight in zip(grads[1:], weights[1:]):
                a += np.float32(weight / total) * g[k]
            return a
        avg = dict(zip(grads[0], self._each(average, list(grads[0]))))
        self._timings["average"] = time.perf_counter()
        self.apply_outer_step(avg)
        now = self.global_state()
        self._timings["apply"] = time.perf_counter()
        bad = [k for k in self.names if not np.isfinite(now[k]).all()]
        return f"the outer step made {len(bad)} parameters non-finite ({bad[0]}, ...)" if bad else "", now

    def _launch(self, rank, rnd, step, full_ref, full_is_current, reset):
        """Starts a worker's round and returns the reference to its result: classic DiLoCo sends
        the whole global model (full_ref); streaming sends the last fragment's outer step (step,
        or [a reference] to it), and the whole model only for a worker that has none of its own:
        full_is_current says whether the whole model already holds that step. Its own state of
        the round before goes along when the shepherd holds one (a worker restarted or resumed
        since goes on from it). Pipelined, the round's call returns once its steps are queued
        (self._stepping), and the worker's collect() gives the result once encoded."""
        stream = None
        if self.streaming:
            stream = {"send": self.fragments[rnd % self.dcfg.fragments], "full": [full_ref],
                      "full_is_current": full_is_current, "merge_at": self.dcfg.overlap,
                      "alpha": self.dcfg.merge_alpha if self.dcfg.overlap else 0.0,
                      "when_ready": self.dcfg.merge_when_ready}
            if self.stream_states.get(rank, (None,))[0] == rnd - 1:
                stream["own"] = [self.stream_states[rank][2]]
        H = self.dcfg.inner_steps // self.dcfg.fragments
        actor, self.workers[rank]["launched"] = self.workers[rank]["actor"], time.time()
        ref = actor.run_round.remote(
            rnd, step if self.streaming else full_ref, H, rnd * H, [self.tokens_ref],
            [self.inner_refs[rank]] if rank in self.inner_refs else None, step_budget(self, rank), reset, stream,
            self.dcfg.worker_eval and self._due(rnd, self.dcfg.eval_every), self._due(rnd, self.dcfg.state_every or self.dcfg.checkpoint_every),
            self.pipelined, compression=worker_compression(self, rank))
        if not self.pipelined:
            return ref
        with self._launches:
            self._stepping[ref] = (rank, rnd)
            self._launches.notify_all()
        if self._launcher is None:
            self._launcher = threading.Thread(target=self._launch_ahead, name="diloco-launcher", daemon=True)
            self._launcher.start()
        return actor.collect.options(concurrency_group="collect").remote(rnd, self.dcfg.round_timeout * 2 + 60)

    def _launch_ahead(self):
        """Pipelined, on a thread of its own: as soon as a worker's round has queued its steps
        (its call returned), starts the worker's next round, which merges this round's outer step
        (and, should the worker begin anew, starts from this round's model) from the mailbox once
        posted. The shepherd meanwhile collects, steps, evaluates and saves; a round it is late
        for still starts at once."""
        import ray
        last = self.dcfg.rounds * self.dcfg.fragments - 1
        while not self._stop_launching.is_set():
            with self._launches:
                if not self._stepping:
                    self._launches.wait(0.1)
                refs = list(self._stepping)
            if not refs:
                continue
            try:
                done, _ = ray.wait(refs, num_returns=1, timeout=0.05, fetch_local=False)  # the first done: at once
            except Exception:  # Ray is going down; run_round starts the rounds itself from now on
                return
            for ref in done:
                ok = self._succeeded(ref)
                with self._launches:
                    rank, rnd = self._stepping.pop(ref, (None, None))
                    try:  # not when dropped meanwhile (its round timed out or was rolled back)
                        if ok and rank in self.workers and rnd < last:
                            self._ahead[rank, rnd + 1] = self._launch(
                                rank, rnd + 1, [self._mailbox.get.remote(rnd)],
                                [self._mailbox.get.remote(rnd, "start")], False, False)
                    except Exception as e:  # run_round starts the round instead
                        self._launch_errors.append(f"worker {rank}: round {rnd + 2} not started ahead: {e}")
                    self._launches.notify_all()

    def _take_ahead(self, rnd):
        """The results (references, by rank) of the rounds rnd started ahead; first waits for
        _launch_ahead to handle every round before whose steps are done, so that no worker's
        round starts twice."""
        import ray
        with self._launches:
            before = [ref for ref, (_, r) in self._stepping.items() if r < rnd]
        if before:  # their calls returned before the results the last round collected (or failed)
            done, _ = ray.wait(before, num_returns=len(before), timeout=10, fetch_local=False)
            with self._launches:
                self._launches.wait_for(lambda: not self._launcher.is_alive() or
                                        not any(ref in self._stepping for ref in done), timeout=60)
                for ref in before:  # still stepping: that worker was left out of its round
                    self._stepping.pop(ref, None)
        with self._launches:
            pending = {self._ahead.pop(key): key[0] for key in [k for k in self._ahead if k[1] == rnd]}
            errors, self._launch_errors = self._launch_errors, []
        for text in errors:
            self.report({"kind": "message", "text": text})
        return pending

    def _due(self, rnd, every):
        """Whether round rnd (from 0) is one of every `every`, or the run's last."""
        return (rnd + 1) % every == 0 or rnd + 1 >= self.dcfg.rounds * self.dcfg.fragments

    def _collect(self, rnd, pending, H, t0, finished):
        """The round's results as they come ({ref: rank} pending), each handed to finished(rank,
        result) (None for a worker lost); workers stop at round_timeout and send what they have,
        and one silent past the grace (its last step, the trip back; LONG_GRACE more before its
        first result, for its start, and on rounds that carry states when not every round does)
        is left out."""
        import ray
        from ray.exceptions import RayError
        results, lost, every = [], [], self.dcfg.state_every or self.dcfg.checkpoint_every
        long = any("trips" not in self.workers[rank] for rank in pending.values()) or every > 1 and self._due(rnd, every)
        deadline = time.monotonic() + self.dcfg.round_timeout * 1.1 + 10 + LONG_GRACE * long
        while pending and time.monotonic() < deadline:
            done, _ = ray.wait(list(pending), num_returns=1, timeout=0.5)
            for ref in done:
                rank = pending.pop(ref)
                try:
                    results.append(ray.get(ref))
                    self.workers[rank].update(alive=True, last_seen=time.time(), live_step=H)
                except RayError as e:
                    lost.append(rank)
                    if "PlanRefused" in str(e):  # its plan arrived damaged: it never runs, nor comes back
                        self._refused(rank, rnd, e)
                    else:
                        self.workers[rank]["alive"] = False
                        self.report({"kind": "worker_lost", "rank": rank, "round": rnd,
                                     "error": f"{type(e).__name__}: {e}"[:2000]})
                finished(rank, results[-1] if rank not in lost else None)
            self._poll_progress(pending.values(), time.perf_counter() - t0)
        for ref, rank in list(pending.items()):  # past the deadline: left out of this round
            ray.cancel(ref, force=False)
            lost.append(rank)
            self.workers[rank]["alive"] = False
            self.report({"kind": "worker_lost", "rank": rank, "round": rnd, "error": "timeout"})
            finished(rank, None)
        return results, lost

    @staticmethod
    def _succeeded(ref):
        import ray
        from ray.exceptions import RayError
        try:
            ray.get(ref)
            return True
        except RayError:
            return False

    def _drain(self, rnd):
        """After a rolled-back round: the rounds started ahead on it are waited for and dropped
        (their workers started from what was undone); the next round starts anew from the
        restored state."""
        import ray
        with self._launches:  # none of them starts a round after it
            self._stepping.clear()
            ahead, self._ahead = list(self._ahead.values()), {}
        if ahead:
            self._mailbox.put.remote(rnd, {})  # they wait for this round's step: there is none
            ray.wait(ahead, num_returns=len(ahead), timeout=self.dcfg.round_timeout * 1.1 + 10)

    def _encode_step(self, fragment, before, now):
        """Streaming: the outer step of a fragment (now - before) as the workers get it,
        compressed as the pseudo-gradients are; the global model (and its host copy, now) takes
        the same decoded step (_hold), so that it holds what the workers will."""
        step = encode(dict(zip(fragment, self._each(lambda k: now[k] - before[k], fragment))),
                      base_compression(self.dcfg.compression))
        decoded = decode(step)
        now.update(zip(decoded, self._each(lambda k: before[k] + decoded[k], decoded)))
        return step

    def _hold(self, names, now):
        """The global model's parameters names set to their values in now (one upload)."""
        import pcp
        with pcp.no_grad():
            for k, value in zip(names, flat_upload([now[k] for k in names], self.device)):
                self.params[k][...] = value

    def _each(self, fn, names):
        """[fn(name) for name in names], on a few threads: NumPy lets go of the GIL on large arrays."""
        if self._threads is None:
            self._threads = concurrent.futures.ThreadPoolExecutor(4, thread_name_prefix="diloco-shepherd")
        return list(self._threads.map(fn, names))

    def _snapshot(self, state=None):
        """What a failed round restores: copies of the global model (state, when read already),
        the outer momentum and the workers' states, as the round found them."""
        return (state if state is not None else self.global_state(), export_state(self.outer),
                dict(self.inner_states), dict(self.stream_states))

    def _restore(self, backup):
        import ray
        params, outer, inner, streams = backup
        self.model.load_state_dict(params)
        with on_device(self.device):  # the momentum goes where the parameters are
            self.outer.load_state_dict(outer)
        self.inner_states, self.stream_states = inner, streams
        self.inner_refs = {r: ray.put(s) for r, s in inner.items()}
        self._reset_inner = True  # workers go back to these states at the next round

    def apply_outer_step(self, pseudo_grad):
        """One step of the outer optimizer (SGD with Nesterov momentum) with the averaged
        pseudo-gradient (global - local parameters) as the gradient.

        Args:
            pseudo_grad: a dict of parameter name to float32 NumPy array: every parameter, or a
                fragment's (the others stay as they are).

        Returns:
            None.

        Raises:
            KeyError: a name that is not a parameter.
            ValueError: an array whose shape differs from its parameter's.

        Example:
            Not run here (needs a Ray cluster and minutes of training)::

                zeros = {k: np.zeros_like(v) for k, v in shepherd.global_state().items()}
                shepherd.apply_outer_step(zeros)  # moves only by the momentum
        """
        names = list(pseudo_grad)
        unknown = [k for k in names if k not in self.params]
        if unknown:  # before anything changes
            raise KeyError(f"apply_outer_step: {unknown[0]!r} is not a parameter of the global model")
        for name, grad in zip(names, flat_upload([pseudo_grad[k] for k in names], self.device)):
            self.params[name].grad = grad
        self._state = None  # the next round reads the model anew
        self.outer.step()  # parameters without a gradient (other fragments) stay, with their momentum
        self.outer.zero_grad()

    # -- evaluation, checkpoints -----------------------------------------------------------------
    def evaluate(self):
        """The global model's mean loss on eval_iters validation batches, the same batches every
        round (so rounds compare). It raises nothing of its own.

        Returns:
            A float.

        Example:
            Not run here (needs a Ray cluster and minutes of training)::

                print(shepherd.evaluate())
        """
        import pcp
        from pcp.train.loop import autocast_for
        if self.task is not None and not getattr(self.task, "gpt", False):
            return self._evaluate_task()
        self.model.eval()
        rng = np.random.default_rng(self.cfg.seed)  # the same val batches every round
        val = self.data.splits["val"]
        total = 0.0
        with pcp.no_grad(), autocast_for(self.dtype):  # in the workers' dtype, as pcp train evaluates
            for _ in range(self.cfg.eval_iters):
                ix = rng.integers(0, len(val) - self.cfg.block_size, self.cfg.batch_size)
                block = np.asarray(val)[ix[:, None] + np.arange(self.cfg.block_size + 1)[None, :]].astype(np.int64)
                total += self.model(pcp.tensor(block[:, :-1]), pcp.tensor(block[:, 1:]))[1].item()
        self.model.train()
        return total / self.cfg.eval_iters

    # -- the whole run ---------------------------------------------------------------------------
    def run(self):
        """Runs rounds until dcfg.rounds, each of fragments synchronisations (evaluating the
        starting model first on a new run).

        Returns:
            The history: one record per round (see run_round), round 0 first.

        Raises:
            OSError: a checkpoint cannot be written.

        Example:
            Not run here (needs a Ray cluster and minutes of training)::

                history = shepherd.run()
        """
        import ray
        self.report({"kind": "start", "mode": "diloco", "round": self.round, "rounds": self.dcfg.rounds * self.dcfg.fragments,
                     "workers": len(self.workers), "inner_steps": self.dcfg.inner_steps // self.dcfg.fragments,
                     "fragments": self.dcfg.fragments,
                     "parameters": self.model.num_parameters(), "nodes": sum(n["Alive"] for n in ray.nodes())})
        if self.round == 0 and not self.history:
            self.history.append({"round": 0, "inner_steps": 0, "val_loss": self.evaluate(), "workers_in": [],
                                 "workers_lost": [], "worker_val": {}, "worker_train": {}, "bytes_sent": 0,
                                 "bytes_received": 0, "total_bytes": 0, "seconds": 0.0, "tokens": 0})
        while self.round < self.dcfg.rounds * self.dcfg.fragments:
            check_progress(self, self.run_round())
        self.wait_saved()
        self.report({"kind": "end"})
        return self.history

    def shutdown(self):
        """Stops the workers, and the local Ray cluster if this shepherd started it, and releases
        cfg.out. Call it when done (also after an error). It raises nothing of its own.

        Returns:
            None.

        Example:
            Not run here (needs a Ray cluster and minutes of training)::

                shepherd.shutdown()
        """
        import ray
        self._stop_launching.set()
        if self._launcher is not None:
            self._launcher.join(timeout=10)
        if self._threads is not None:
            self._threads.shutdown(wait=False)
        try:
            self.wait_saved()  # a checkpoint being written is finished, not cut off
        except Exception:
            pass  # run() raised it already, or the caller is on its way out of another error
        for actor in [w["actor"] for w in self.workers.values()] + [getattr(self, "_mailbox", None)]:
            try:
                if actor is not None:
                    ray.kill(actor, no_restart=True)
            except Exception:
                pass
        self.workers.clear()
        try:
            if self._owns_ray:
                self._owns_ray = False
                shutdown_ray()
        finally:
            self._exit.close()
