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
    """The inner optimizer inside a step plan: its learning rate (param_groups[i]['lr'], written
    into the plan's lr scalars before each step), step count and state (the captured tensors
    that are not parameters, and the host scalars)."""

    def __init__(self, plan):
        self.plan = plan
        self.param_groups = [{"lr": self._lr()}]
        from pcp import _core
        self._named_ids = {i for i, t in enumerate(plan.captured)
                           if any(_core._same_tensor(t, n) for n in plan.named.values())}

    def reset(self):
        """A fresh inner optimizer, as a new worker's: its moments (the state inputs of the plan's
        optimizer steps) zero, its step count 0 and SGD's first-step flag set. The plan was
        traced, and saved, one step in."""
        import pcp
        from pcp import _core
        rec = _core.plan_record(self.plan.plan)
        at = {vid: i for i, (vid, _) in enumerate(rec["captured"])}
        for node in rec["nodes"]:
            n = len(node["inputs"])
            if node["op"] in ("adam_step", "adamw_step"):
                state = node["inputs"][n // 2:]  # parameters, gradients, first moments, second moments
            elif node["op"] == "sgd_step":
                state = node["inputs"][2 * n // 3:] if node["attrs"].get("momentum", 0) else []
            else:
                continue
            with pcp.no_grad():
                for vid in state:
                    if vid in at:
                        self.plan.captured[at[vid]][...] = 0.0
        for k, h in self.plan.scalars.items():
            how = self.plan._advance.get(k)
            if how == "count":
                h.value = 0.0
            elif how == "zero":
                h.value = 1.0

    def _lr_scalars(self):
        # "adamw_step.lr", and "adamw_step.lr.<i>" for a second parameter group's step
        return [h for k, h in self.plan.scalars.items() if k.split(".")[1:2] == ["lr"]]

    def _lr(self):
        lrs = [h.value for h in self._lr_scalars()]
        return lrs[0] if lrs else 0.0

    @property
    def step_count(self):
        counts = [h.value for k, h in self.plan.scalars.items() if self.plan._advance.get(k) == "count"]
        return int(counts[0]) if counts else 0

    def run(self, *batch):
        for h in self._lr_scalars():
            h.value = self.param_groups[0]["lr"]
        return self.plan(*batch)

    def state_dict(self):
        """As an Optimizer's (what checkpoints and export_state take): one state entry holding
        the captured tensors that are not parameters (captured.<i>) and the host scalars (by
        name), the step count and the learning rate."""
        state = {f"captured.{i}": t for i, t in enumerate(self.plan.captured) if i not in self._named_ids}
        state.update({k: h.value for k, h in self.plan.scalars.items()})
        return {"state": {0: state}, "step": self.step_count, "param_groups": [dict(self.param_groups[0])]}

    def load_state_dict(self, sd):
        import pcp
        state = sd["state"].get(0, sd["state"].get("0", {}))
        with pcp.no_grad():
            for k, v in state.items():
                if k.startswith("captured."):
                    t = self.plan.captured[int(k.split(".")[1])]
                    t[...] = pcp.tensor(np.asarray(v), device=str(t.device)).astype(t.dtype)
                elif k in self.plan.scalars:
                    self.plan.scalars[k].value = float(v)
        self.param_groups[0]["lr"] = self._lr()
