"""The repository keeps its shape (docs/architecture.md): includes go down the layers, and no
library file grows past what a reader takes in at once."""
import os
import re

import pytest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
# The layers of cpp/pcp/ from the bottom: a file includes its own layer and those below. autograd
# and plan stand side by side above the primitives, and include neither each other.
LAYERS = {"core": 0, "backend": 1, "ops": 2, "autograd": 3, "plan": 3}
LIBRARY = ["cpp/pcp", "cpp/bindings", "python/pcp", "metal", "tools"]
SOURCE = (".h", ".cpp", ".py", ".comp", ".glsl")
MAX_LINES = 700

pytestmark = pytest.mark.cpu_only


def _files(top, endings, root=ROOT):
    for folder, _, names in os.walk(os.path.join(root, top)):
        for name in names:
            if name.endswith(endings):
                yield os.path.join(folder, name)


def upward_includes(root=ROOT):
    """Each include in root/cpp/pcp of a layer at or above the including file's own (another one)."""
    wrong = []
    for path in _files("cpp/pcp", (".h", ".cpp"), root):
        layer = os.path.relpath(path, os.path.join(root, "cpp/pcp")).split(os.sep)[0]
        with open(path, encoding="utf-8") as f:
            for target in re.findall(r'^#include "pcp/([a-z_]+)/', f.read(), re.M):
                if target != layer and LAYERS.get(target, 99) >= LAYERS.get(layer, 99):
                    wrong.append(f"{os.path.relpath(path, root)} includes pcp/{target}/")
    return wrong


def test_includes_go_down_the_layers():
    wrong = upward_includes()
    assert not wrong, "\n".join(wrong)


def test_the_layer_check_finds_an_include_upwards(tmp_path):
    # Planted: a backend file reaching into ops/, autograd into plan/, core into the backends.
    for layer, target in (("backend/cpu", "ops"), ("autograd", "plan"), ("core", "backend")):
        folder = tmp_path / "cpp" / "pcp" / layer
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "planted.cpp").write_text(f'#include "pcp/{target}/x.h"\n#include "pcp/core/tensor.h"\n')
    found = upward_includes(str(tmp_path))
    assert sorted(found) == sorted([os.path.join("cpp", "pcp", "backend", "cpu", "planted.cpp") + " includes pcp/ops/",
                                    os.path.join("cpp", "pcp", "autograd", "planted.cpp") + " includes pcp/plan/",
                                    os.path.join("cpp", "pcp", "core", "planted.cpp") + " includes pcp/backend/"]), found


def test_no_library_file_is_over_700_lines():
    long = []
    for top in LIBRARY:
        for path in _files(top, SOURCE):
            if os.sep + "spirv" + os.sep in path or os.sep + "__pycache__" + os.sep in path:
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                n = sum(1 for _ in f)
            if n > MAX_LINES:
                long.append(f"{os.path.relpath(path, ROOT)}: {n} lines")
    assert not long, "\n".join(long)
