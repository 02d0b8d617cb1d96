"""Where the tiny-Shakespeare text comes from: a local copy, or a download into a cache."""
import os
import sys
import urllib.error
import urllib.request

SHAKESPEARE_URL = "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt"


def _cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "pcp")


def shakespeare(path=None, progress=True):
    """Path of tinyshakespeare.txt: `path` or $PCP_DATA (a file, or a folder holding it) when given,
    else the cached download, else a fresh download (with a progress bar). Offline, a clear error."""
    for candidate in (path, os.environ.get("PCP_DATA")):
        if not candidate:
            continue
        if os.path.isdir(candidate):
            for name in ("tinyshakespeare.txt", "input.txt"):
                if os.path.isfile(os.path.join(candidate, name)):
                    return os.path.join(candidate, name)
            raise FileNotFoundError(f"shakespeare: no tinyshakespeare.txt or input.txt in {candidate}")
        if os.path.isfile(candidate):
            return candidate
        raise FileNotFoundError(f"shakespeare: {candidate} does not exist")
    target = os.path.join(_cache_dir(), "tinyshakespeare.txt")
    if os.path.isfile(target):
        return target
    os.makedirs(os.path.dirname(target), exist_ok=True)
    tmp = target + f".part{os.getpid()}"
    try:
        with urllib.request.urlopen(SHAKESPEARE_URL, timeout=30) as r, open(tmp, "wb") as f:
            total = int(r.headers.get("Content-Length") or 0)
            done = 0
            while chunk := r.read(1 << 16):
                f.write(chunk)
                done += len(chunk)
                if progress and total:
                    bar = "#" * int(30 * done / total)
                    print(f"\rdownloading tiny Shakespeare [{bar:30s}] {done / 1e6:.1f}/{total / 1e6:.1f} MB",
                          end="", file=sys.stderr, flush=True)
        if progress and total:
            print(file=sys.stderr)
        os.replace(tmp, target)
    except (urllib.error.URLError, OSError) as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise RuntimeError(
            f"shakespeare: could not download {SHAKESPEARE_URL} ({e}). You appear to be offline: "
            "pass --data PATH (or set PCP_DATA) to a local copy of tinyshakespeare.txt") from None
    return target
