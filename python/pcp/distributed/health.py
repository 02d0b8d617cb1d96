"""A DiLoCo run's health: workers whose inner loss went NaN or infinite (left out, not averaged),
rounds that no worker came back from, and workers behind slow links."""
import time

import numpy as np

from .compression import AUTO_LEVELS

PROBE_EVERY = 10  # rounds a worker stays at a compression level of 'auto' before it tries the one below


def drop_nonfinite(shepherd, rnd, results):
    """The round's results without those of workers whose inner losses were not finite. Each is
    reported (a worker_nonfinite event) and its worker restarted by Ray, so it rejoins from the
    global model. Past TrainConfig.skip_nonfinite such worker rounds in the run, it stops with
    NonFiniteLoss before the round is applied or saved: the last checkpoint stays good."""
    import ray
    from pcp.train.guard import NonFiniteLoss
    good = []
    for r in results:
        if r["steps"] == 0 or r.get("nonfinite_step") is None and np.isfinite(r["train_loss"]):
            good.append(r)
            continue
        step = r.get("nonfinite_step")
        shepherd.nonfinite_rounds.append((rnd, r["rank"]))
        shepherd.report({"kind": "worker_nonfinite", "rank": r["rank"], "round": rnd, "step": step,
                         "count": len(shepherd.nonfinite_rounds), "allowed": shepherd.cfg.skip_nonfinite})
        where = f"worker {r['rank']}'s inner loss is not finite at step {step} of round {rnd + 1}"
        if len(shepherd.nonfinite_rounds) > shepherd.cfg.skip_nonfinite:
            raise NonFiniteLoss(f"diloco: {where}: stopped before the round was applied; {shepherd.cfg.out} keeps the "
                                f"last good checkpoint (round {shepherd.round}). Lower the inner learning rate, resume "
                                f"with --resume, or leave such worker rounds out with --skip-nonfinite N", rnd)
        shepherd.report({"kind": "message", "text": f"{where}: left out of the round and restarted "
                                                    f"({len(shepherd.nonfinite_rounds)} of --skip-nonfinite "
                                                    f"{shepherd.cfg.skip_nonfinite})"})
        for states in (shepherd.inner_states, shepherd.inner_refs, shepherd.stream_states):
            states.pop(r["rank"], None)  # what it sent this round is not finite: it starts anew
        try:
            ray.kill(shepherd.workers[r["rank"]]["actor"], no_restart=False)  # Ray restarts it
        except Exception:
            pass
    return good


STALLED_ROUNDS = 3  # rounds in a row that no worker came back from, before a run stops
LONG_GRACE = 120.0  # seconds more a round waits for a worker's start, or for states sent now and then


def check_progress(shepherd, record):
    """Stops the run (RuntimeError) once STALLED_ROUNDS rounds in a row had no worker come back
    with a step (not counting workers left out for non-finite losses, which skip_nonfinite
    bounds): every round then rolls back, and a run that went on would only report rounds that
    trained nothing. The last checkpoint stays; `--resume` continues from it."""
    last, dropped = shepherd.history[-STALLED_ROUNDS:], {rnd + 1 for rnd, _ in shepherd.nonfinite_rounds}
    if len(last) < STALLED_ROUNDS or any(r["tokens"] or not r.get("rolled_back") or r["round"] in dropped
                                         for r in last):  # non-finite rounds left out have skip_nonfinite
        return
    lost = sorted({rank for r in last for rank in r["workers_lost"]})
    lost = f"workers {lost} lost, see above" if lost else "every worker stopped at the timeout before a step"
    raise RuntimeError(
        f"diloco: no worker came back with a step in rounds {last[0]['round']} to {record['round']} ({lost}): "
        f"either they cannot reach the shepherd's objects (on a machine of several Ray nodes, set "
        f"PCP_RAY_NODE_IP to the shepherd's node's address) or their rounds outlast round_timeout "
        f"({shepherd.dcfg.round_timeout:g} s). Nothing of these rounds was applied; {shepherd.cfg.out} keeps "
        f"the last checkpoint: go on from it with --resume")


def trips(worker, result):
    """Seconds a worker's round spent on the way: the call there, with the model (not at an
    actor's first round, idle None: that is its start) and the result back."""
    t = result["timings"]
    came = t.get("arrived") or t["began"]  # the call may come before the last round's last steps end
    there = 0.0 if t["idle"] is None else came - worker.get("launched", came)
    return max(there, 0.0) + max(time.time() - t["ended"], 0.0)


def step_budget(shepherd, rank):
    """The seconds worker `rank` may step in its next round: round_timeout less its last round's
    trips (the call and model there, the result back; at least a quarter of it), so that a worker
    behind a slow link stops in time for what it sends to arrive by the timeout; by its tokens, it
    counts for less."""
    timeout = shepherd.dcfg.round_timeout
    return max(timeout - shepherd.workers[rank].get("trips", 0.0), timeout / 4)


def worker_compression(shepherd, rank):
    """The compression of worker `rank`'s next pseudo-gradient: None (DiLoCoConfig.compression)
    unless that is 'auto', whose level adapt_to_links raises for a worker behind a slow link."""
    if shepherd.dcfg.compression != "auto":
        return None
    return AUTO_LEVELS[shepherd.workers[rank].get("level", 0)]


def adapt_to_links(shepherd, record):
    """After a round: names a worker whose result came well after the others' (by more than 2 s
    and half their median; once per worker in 10 rounds): a slow or lossy link. With compression
    'auto', a worker whose trips took more than twice the others' median and a second goes one
    level up AUTO_LEVELS for the rounds after; PROBE_EVERY rounds later, its trips then within
    that bound, it tries the level below again (its trips at one level do not tell what another
    would cost), and a probe that goes back up doubles the wait for the next (a link that stays
    slow costs ever fewer slow rounds). A worker's first round is late by its start, and is left
    out of both."""
    timings, reported = record["worker_timings"], shepherd.__dict__.setdefault("_slow_reported", {})
    arrivals = {r: t for r, t in record["arrivals"].items() if r in timings}  # not those left out (NaN)
    ranks = [r for r in arrivals if timings[r]["idle"] is not None]
    for rank in ranks if len(arrivals) > 1 else ():
        worker, late = shepherd.workers[rank], arrivals[rank] - _median([v for r, v in arrivals.items() if r != rank])
        if late > max(2.0, (arrivals[rank] - late) / 2) and record["round"] - reported.get(rank, -10) >= 10:
            reported[rank] = record["round"]
            shepherd.report({"kind": "message", "text": (
                f"worker {rank}'s result came {late:.1f} s after the others' in round {record['round']} (its trips "
                f"took {worker.get('trips', 0.0):.1f} s): a slow link? --round-timeout bounds the wait (it then "
                f"steps less, to arrive in time, and counts by its tokens); --compression auto compresses its "
                f"pseudo-gradients alone")})
        others = [shepherd.workers[r].get("trips", 0.0) for r in ranks if r != rank]
        rnd, level = record["round"], worker.get("level", 0)
        if shepherd.dcfg.compression != "auto" or not others or rnd >= shepherd.dcfg.rounds * shepherd.dcfg.fragments:
            continue  # the last round has no round after it to change
        usual = _median(others)
        slow = worker.get("trips", 0.0) > 2 * usual + 1.0
        if slow and level + 1 < len(AUTO_LEVELS):
            if rnd - worker.get("probed", -10) <= 1:  # the probe below failed: wait twice as long next time
                worker["probe_every"] = 2 * worker.get("probe_every", PROBE_EVERY)
            worker.update(level=level + 1, changed=rnd)
            shepherd.report({"kind": "message", "text": (
                f"worker {rank}'s trips took {worker['trips']:.1f} s against the others' {usual:.1f} s: "
                f"its pseudo-gradients go as {AUTO_LEVELS[level + 1]} from round {rnd + 1}")})
        elif not slow and level > 0 and rnd - worker["changed"] >= worker.get("probe_every", PROBE_EVERY):
            worker.update(level=level - 1, changed=rnd, probed=rnd)
            shepherd.report({"kind": "message", "text": (
                f"worker {rank}'s trips took {worker['trips']:.1f} s against the others' {usual:.1f} s: "
                f"its pseudo-gradients try {AUTO_LEVELS[level - 1]} again from round {rnd + 1}")})


def _median(values):
    return sorted(values)[len(values) // 2]
