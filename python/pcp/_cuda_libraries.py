"""Where NVIDIA's pip wheels (``pip install "pcp[cuda]"``) keep their libraries.

PCP's C++ core loads cuBLASLt and cuDNN at run time, on its first use of an NVIDIA GPU, from the
folders of ``PCP_CUDA_LIBRARY_PATH`` before dlopen's own search. Unless the variable is set
already, importing PCP sets it to the ``nvidia/*/lib`` folders of the wheels on ``sys.path``.
"""
import os
import sys


def library_dirs():
    """The ``site-packages/nvidia/<package>/lib`` folders on ``sys.path``, in path order."""
    dirs = []
    for base in sys.path:
        root = os.path.join(base or os.curdir, "nvidia")
        if not os.path.isdir(root):
            continue
        for package in sorted(os.listdir(root)):
            lib = os.path.join(root, package, "lib")
            if os.path.isdir(lib) and lib not in dirs:
                dirs.append(lib)
    return dirs


def set_library_path():
    if "PCP_CUDA_LIBRARY_PATH" not in os.environ:
        dirs = library_dirs()
        if dirs:
            os.environ["PCP_CUDA_LIBRARY_PATH"] = os.pathsep.join(dirs)
