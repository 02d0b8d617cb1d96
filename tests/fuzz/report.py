"""Counting results and the summary: per device the cases tried and the failures by status,
then each failure once per (op, input class, status) with a reproducer and how often it hit."""
import json
from collections import Counter, OrderedDict

FAILURES = ("CRASH", "HANG", "WRONG", "UNCLEAR", "HARNESS")


class Report:
    def __init__(self):
        self.counts = {}            # device -> Counter of statuses
        self.groups = OrderedDict()  # (device, status, op, class) -> first failure + count
        self.skips = Counter()       # why cases were skipped (their inputs could not be built)

    def add(self, case, result, repro):
        status = result["status"]
        self.counts.setdefault(case.device, Counter())[status] += 1
        if status == "SKIP":
            self.skips[f"{case.device}: {result.get('detail', '')[:100]}"] += 1
        if status not in FAILURES:
            return
        key = (case.device, status, case.op, case.cls)
        if key in self.groups:
            g = self.groups[key]
            g["count"] += 1
            if case.dtype == "float32" and g.get("dtype") != "float32":  # the most familiar example
                g.update(id=case.id, detail=result.get("detail", ""), repro=repro, dtype=case.dtype)
        else:
            self.groups[key] = {"device": case.device, "status": status, "op": case.op, "class": case.cls,
                                "id": case.id, "detail": result.get("detail", ""), "repro": repro, "count": 1,
                                "dtype": case.dtype}

    @property
    def failed(self):
        return any(c[s] for c in self.counts.values() for s in FAILURES)

    def failures(self, device=None):
        return [g for g in self.groups.values() if device is None or g["device"] == device]

    def summary(self, limit=None):
        lines = []
        for device, c in self.counts.items():
            tried = sum(c.values())
            parts = ", ".join(f"{s.lower()} {c[s]}" for s in FAILURES if s != "HARNESS" or c[s])
            lines.append(f"{device}: {tried} cases, ok {c['OK']}, skipped {c['SKIP']}, {parts}")
        groups = list(self.groups.values())
        order = {s: i for i, s in enumerate(FAILURES)}
        groups.sort(key=lambda g: (g["device"], order[g["status"]], g["op"], g["class"]))
        if groups:
            lines.append(f"\n{len(groups)} distinct failures (device, status, op, input class):")
        for g in groups[:limit]:
            lines.append(f"[{g['device']}] {g['status']} {g['op']} / {g['class']} (x{g['count']}, {g['id']}): "
                         f"{g['detail']}\n    {g['repro']}")
        if limit is not None and len(groups) > limit:
            lines.append(f"... and {len(groups) - limit} more (use --report for all)")
        return "\n".join(lines)

    def to_json(self, path, extra=None):
        data = {"counts": {d: dict(c) for d, c in self.counts.items()}, "failures": list(self.groups.values()),
                "skips": dict(self.skips.most_common())}
        data.update(extra or {})
        with open(path, "w") as f:
            json.dump(data, f, indent=1)
