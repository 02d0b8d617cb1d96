"""Where training text comes from: a user's UTF-8 text (a file, or a folder of .txt files), or
the tiny-Shakespeare text that ships inside the package, so the main job needs no network."""
import os
import sys
import urllib.error
import urllib.request

SHAKESPEARE_URL = "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt"
# The tiny-Shakespeare corpus (Karpathy's char-rnn, 1.1 MB of public-domain Shakespeare), shipped
# as package data.
PACKAGED_SHAKESPEARE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tinyshakespeare.txt")


def _cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "pcp")


def text_files(path):
    """The UTF-8 text files a training run reads from `path`: the file itself, or every .txt file
    below a folder (recursively, in sorted path order). FileNotFoundError when there is none."""
    if os.path.isfile(path):
        return [path]
    if not os.path.isdir(path):
        raise FileNotFoundError(f"text: {path} does not exist (expected a UTF-8 text file or a folder of .txt files)")
    found = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        found += [os.path.join(root, f) for f in sorted(files) if f.endswith(".txt")]
    if not found:
        raise FileNotFoundError(f"text: the folder {path} holds no .txt files")
    return found


def read_text(path):
    """The text of `path`: a file, or a folder's .txt files (recursively) joined in sorted path
    order, a newline between files that do not end with one; decoded as UTF-8.

    Args:
        path: a UTF-8 text file, or a folder of .txt files.

    Returns:
        A str.

    Raises:
        FileNotFoundError: path does not exist, or is a folder without .txt files.
        ValueError: a file that is not UTF-8 (naming the file and the byte), or no text at all
            (an empty file, or a folder of empty files).

    Example:
        >>> import os, tempfile
        >>> from pcp.data import read_text
        >>> folder = tempfile.mkdtemp()
        >>> for name, text in [("a.txt", "first"), ("b.txt", "second\\n")]:
        ...     with open(os.path.join(folder, name), "w") as f:
        ...         _ = f.write(text)
        >>> read_text(folder)
        'first\\nsecond\\n'
    """
    parts = []
    for name in text_files(path):
        with open(name, "rb") as f:
            raw = f.read()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"text: {name} is not UTF-8 text ({e.reason} at byte {e.start})") from None
        if parts and not parts[-1].endswith("\n"):
            parts.append("\n")
        parts.append(text)
    if not any(parts):
        raise ValueError(f"text: {path} is empty (expected UTF-8 text to train on)")
    return "".join(parts)


def training_text(path=None):
    """The text a run trains on: `path` or $PCP_DATA when given (read_text), else the
    tiny-Shakespeare text shipped with PCP (downloaded only where that copy was removed).

    Args:
        path: a text file or a folder of .txt files, or None (default).

    Returns:
        A str.

    Raises:
        FileNotFoundError: a given path that does not exist or holds no text.
        ValueError: a file that is not UTF-8.
        RuntimeError: the shipped text was removed and cannot be downloaded (offline).

    Example:
        >>> import os, tempfile
        >>> from pcp.data import training_text
        >>> path = os.path.join(tempfile.mkdtemp(), "mine.txt")
        >>> with open(path, "w") as f:
        ...     _ = f.write("my own corpus")
        >>> training_text(path)
        'my own corpus'
    """
    for candidate in (path, os.environ.get("PCP_DATA")):
        if candidate:
            return read_text(candidate)
    return read_text(shakespeare())


def shakespeare(path=None, progress=True):
    """The path of tinyshakespeare.txt (1.1 MB): `path` or $PCP_DATA (a file, or a folder holding
    it) when given, else the copy shipped in the package, else a cached download (with a
    progress bar; offline, a clear error), for installs that left the package data out.

    Args:
        path: a file, or a folder holding tinyshakespeare.txt or input.txt (default None).
        progress: show the download's progress bar on stderr (default True).

    Returns:
        A path (str).

    Raises:
        FileNotFoundError: a given path that does not exist, or a folder without the file.
        RuntimeError: the download failed (offline: the message says to pass --data).

    Example:
        >>> import os
        >>> from pcp.data import shakespeare
        >>> path = shakespeare()  # the shipped copy, unless $PCP_DATA names another
        >>> os.path.getsize(path) > 0
        True
    """
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
    if os.path.isfile(PACKAGED_SHAKESPEARE):
        return PACKAGED_SHAKESPEARE
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
