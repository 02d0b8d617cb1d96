"""loss.png of a DiLoCo run."""


def plot_rounds(history, path):
    """Global val loss per round next to each worker's (its local model at the round's end)."""
    from pcp.train.loop import save_plot

    def draw(ax):
        evaluated = [r for r in history if r["val_loss"] is not None]  # eval_every skips some rounds
        ax.plot([r["round"] for r in evaluated], [r["val_loss"] for r in evaluated], "k-o", label="global model", lw=2)
        for rank in sorted({int(k) for r in history for k in r["worker_val"]}):
            pts = [(r["round"], v) for r in history for k, v in r["worker_val"].items() if int(k) == rank and v is not None]
            if pts:
                ax.plot(*zip(*pts), ".--", alpha=0.7, label=f"worker {rank}")
    return save_plot(path, "round", "val loss", draw)
