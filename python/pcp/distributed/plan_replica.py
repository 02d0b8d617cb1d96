"""A model replica made of plans: what a DiLoCo worker trains when the shepherd sends it the
user's traced inner step instead of a model to build (pcp.distributed.diloco). It has the
surface of the built-in GPT and its AdamW that a Worker uses (a state dict of parameters, an
optimizer's step count, learning rate and state), over a pcp.LoadedPlan, so one Worker runs
either: the worker's process never imports the code that traced the plan."""
import time

import numpy as np


class PlanRefused(ValueError):
    """A plan a worker will not run (damaged, foreign, for other shapes): a ValueError naming the
    worker and why. Making one raises nothing."""


def load_checked(data, device, rank, example_args=None):
    """pcp.load_plan of the plan's bytes on `device`, timed: (plan, seconds). example_args,
    (shape, dtype) of each argument the worker will pass, are checked against what the plan was
    traced for, so a plan for other shapes is refused before a round runs it."""
    import pcp
    t = time.perf_counter()
    try:
        plan = pcp.load_plan(data, device=device)
    except ValueError as e:
        raise PlanRefused(f"worker {rank}: refused the plan it was sent: {e}") from None
    if example_args is not None:
        traced = [(tuple(s), d) for s, d, _ in plan_arguments(plan)]
        given = [(tuple(s), str(d)) for s, d in example_args]
        if traced != given:
            raise PlanRefused(f"worker {rank}: refused the plan it was sent: it was traced for arguments {traced}, "
                              f"but the data gives {given}")
    return plan, time.perf_counter() - t


def plan_arguments(plan):
    """(shape, dtype name, device) of each argument a LoadedPlan takes, in order."""
    from pcp import _core
    rec = _core.plan_record(plan.plan)
    return [rec["values"][i] for i in rec["args"]]


class PlanModel:
    """A plan's parameters (LoadedPlan.named) as a model's state dict, and its evaluation plan
    (the loss without the update) as its forward pass: model(*batch) gives (None, loss)."""

    def __init__(self, step_plan, eval_plan=None):
        self.step_plan, self.eval_plan = step_plan, eval_plan
        self.names = list(step_plan.named)
        if eval_plan is not None:  # both read the same parameters: the eval plan's are the step's
            for name in self.names:
                eval_plan.named[name][...] = step_plan.named[name]

    def named_parameters(self):
        return list(self.step_plan.named.items())

    def state_dict(self):
        return dict(self.step_plan.named)

    def load_state_dict(self, values, strict=True):
        import pcp
        missing, extra = set(self.names) - set(values), set(values) - set(self.names)
        if strict and (missing or extra):
            raise ValueError(f"load_state_dict: missing {sorted(missing)}, unexpected {sorted(extra)}")
        with pcp.no_grad():
            for name in self.names:
                if name not in values:
                    continue
                t, v = self.step_plan.named[name], np.asarray(values[name])
                if tuple(v.shape) != tuple(t.shape):
                    raise ValueError(f"load_state_dict: '{name}' has shape {tuple(v.shape)} where the plan's "
                                     f"parameter is {tuple(t.shape)}")
                t[...] = pcp.tensor(v, device=str(t.device)).astype(t.dtype)

    def train(self):
        return self

    def eval(self):
        if self.eval_plan is not None:  # it reads its own copy: bring it up to date
            for name in self.names:
                self.eval_plan.named[name][...] = self.step_plan.named[name]
        return self

    def __call__(self, *batch):
        if self.eval_plan is None:
            raise ValueError("evaluate: the plan was sent without an evaluation plan")
        return None, self.eval_plan(*batch)


class PlanOptimizer:
    """The inner optimizer inside a step plan, with an Optimizer's surface: param_groups (one per
    optimizer step of the plan: its parameters and lr, written into the plan's lr scalar before
    each step), step_count, and state_dict / load_state_dict in the format of pcp.optim's Adam,
    AdamW and SGD (per parameter exp_avg, exp_avg_sq and step, or momentum_buffer), so that
    checkpoints and a worker's exported state read as the built-in GPT's do."""

    _STATE = {"adam_step": ("exp_avg", "exp_avg_sq"), "adamw_step": ("exp_avg", "exp_avg_sq"),
              "sgd_step": ("momentum_buffer",)}

    def __init__(self, plan):
        from pcp import _core
        self.plan = plan
        rec = _core.plan_record(plan.plan)
        at = {vid: t for vid, t in rec["captured"]}
        self.param_groups, self._state, self._steps = [], [], []  # per parameter: {key: tensor}; per group
        for node in rec["nodes"]:
            keys = self._STATE.get(node["op"])
            if keys is None:
                continue
            ins = node["inputs"]
            k = len(ins) // (2 + len(keys)) if node["op"] != "sgd_step" or node["attrs"].get("momentum", 0) else len(ins) // 2
            keys = keys if len(ins) == k * (2 + len(keys)) else ()  # SGD without momentum keeps no state
            scalars = [rec["scalars"][i] for i in node["scalars"]]  # (step or first_step, lr)
            self.param_groups.append({"params": [at[v] for v in ins[:k]], "lr": scalars[-1].value, "_lr": scalars[-1]})
            self._steps.append(scalars[0] if node["op"] != "sgd_step" else None)
            for j in range(k):
                self._state.append({key: at[ins[(2 + n) * k + j]] for n, key in enumerate(keys)})

    @property
    def step_count(self):
        counts = [h.value for h in self._steps if h is not None]
        return int(counts[0]) if counts else 0

    def reset(self):
        """A fresh inner optimizer, as a new worker's: its moments zero, its step count 0 and
        SGD's first-step flag set (the plan was traced, and saved, one step in)."""
        import pcp
        with pcp.no_grad():
            for state in self._state:
                for t in state.values():
                    t[...] = 0.0
        for k, h in self.plan.scalars.items():
            how = self.plan._advance.get(k)
            if how == "count":
                h.value = 0.0
            elif how == "zero":
                h.value = 1.0

    def run(self, *batch):
        for g in self.param_groups:
            g["_lr"].value = g["lr"]
        return self.plan(*batch)

    def state_dict(self):
        """As an Optimizer's: step, param_groups (lr and parameter indices) and per-parameter
        state (the plan's own tensors: copy them to keep a snapshot)."""
        groups, at = [], 0
        for g in self.param_groups:
            groups.append({"lr": g["lr"], "params": list(range(at, at + len(g["params"])))})
            at += len(g["params"])
        state = {}
        for i, s in enumerate(self._state):
            if s:
                group = next(n for n, g in enumerate(groups) if i in g["params"])
                step = self._steps[group]
                state[i] = dict(s, **({"step": int(step.value)} if step is not None else {}))
        return {"step": self.step_count, "param_groups": groups, "state": state}

    def load_state_dict(self, sd):
        """Restores what state_dict returned, checked as Optimizer.load_state_dict checks (the
        groups' number and learning rates, the step count, the state's names and shapes): a
        ValueError naming the key, and nothing changes."""
        import pcp
        from pcp.optim.optimizer import _count, _number
        if len(sd["param_groups"]) != len(self.param_groups):
            raise ValueError(f"load_state_dict: {len(sd['param_groups'])} parameter groups, expected "
                             f"{len(self.param_groups)}")
        for n, saved in enumerate(sd["param_groups"]):
            if not _number(saved.get("lr")):
                raise ValueError(f"load_state_dict: parameter group {n}: 'lr' is {saved.get('lr')!r}, expected a "
                                 "number >= 0")
        if not _count(sd["step"]):
            raise ValueError(f"load_state_dict: 'step' is {sd['step']!r}, expected a whole number in [0, 2**53)")
        for i, s in sd["state"].items():
            if not str(i).isdigit() or int(i) >= len(self._state) or set(s) - {"step"} != set(self._state[int(i)]):
                raise ValueError(f"load_state_dict: state {sorted(s)} for parameter {i!r} does not fit the plan's")
            for key, v in s.items():
                want = self._state[int(i)].get(key)
                if want is not None and tuple(np.shape(v)) != tuple(want.shape):
                    raise ValueError(f"load_state_dict: state '{key}' of parameter {i} has shape {tuple(np.shape(v))}, "
                                     f"expected {tuple(want.shape)}")
        with pcp.no_grad():
            for i, s in sd["state"].items():
                for key, v in s.items():
                    if key == "step":
                        continue
                    t = self._state[int(i)][key]
                    t[...] = pcp.tensor(np.asarray(v), device=str(t.device)).astype(t.dtype)
        for g, saved in zip(self.param_groups, sd["param_groups"]):
            g["lr"] = saved["lr"]
        for h in self._steps:
            if h is not None:
                h.value = float(sd["step"])
