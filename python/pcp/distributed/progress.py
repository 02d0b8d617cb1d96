"""What the shepherd knows of its workers while a round runs: their answers to progress polls,
the dashboard's worker table, and the progress reports (a mixin: the state is the Shepherd's)."""
import time


class Progress:
    """Shepherd's progress polling and worker table."""

    def _poll_progress(self, ranks, seconds):
        """Takes the workers' answers to the last progress poll that have come, without waiting
        (the results the round waits for come first), and every half second asks the workers in
        ranks again and reports the progress."""
        import ray
        ranks = list(ranks)
        if self._asked:
            ready, _ = ray.wait(list(self._asked), num_returns=len(self._asked), timeout=0)
            for ref in ready:
                rank = self._asked.pop(ref)
                try:
                    p = ray.get(ref)
                except Exception:
                    continue
                if rank in ranks and p["round"] == self.round:  # not an answer older than the result since
                    w = self.workers[rank]
                    w.update(alive=True, last_seen=time.time(), live_step=p["step"],
                             last_loss=p["loss"] or w["last_loss"], lr=p["lr"], device=p["device"],
                             device_uuid=p["device_uuid"], plan_bytes=p.get("plan_bytes"),
                             plan_load_seconds=p.get("plan_load_seconds"))
        now = time.monotonic()
        if now - self._asked_at >= 0.5:
            ranks = [r for r in ranks if r not in self._asked.values()]  # not a stuck one again and again
            self._asked.update({self.workers[r]["actor"].progress.options(concurrency_group="progress").remote(): r
                                for r in ranks})
            self._asked_at = now
            self._report_progress(seconds)

    def _report_progress(self, seconds):
        steps = sum(w.get("live_step") or 0 for w in self.workers.values())
        self.report({"kind": "progress", "round": self.round, "workers": self.worker_table(),
                     "tokens_per_s": steps * self.cfg.batch_size * self.tokens_per_row / max(seconds, 1e-9)})

    def worker_table(self):
        """What is known of each worker, for the dashboard. It raises nothing.

        Returns:
            A dict of rank to a dict: alive, steps_done, live_step, last_loss, lr, last_seen,
            device (where the worker runs, once it has reported), device_uuid (its GPU's), and for
            a traced model's run plan_bytes and plan_load_seconds (the plan it was sent, and how
            long loading and placing it took; None otherwise).

        Example:
            Not run here (needs a Ray cluster and minutes of training)::

                alive = [rank for rank, w in shepherd.worker_table().items() if w["alive"]]
        """
        return {r: {k: w.get(k) for k in ("alive", "steps_done", "live_step", "last_loss", "lr", "last_seen", "device",
                                          "device_uuid", "plan_bytes", "plan_load_seconds")}
                for r, w in self.workers.items()}
