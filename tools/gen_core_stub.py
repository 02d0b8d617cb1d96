"""Writes python/pcp/_core.pyi, the type stubs of the native module, from the built module itself:
every function, class, method and property pybind11 bound, with the typed signature pybind11
records (the first line of each docstring) and the docstring that follows it, so editors show
the same text as help(). Run it after changing the bindings and installing the package:

    python tools/gen_core_stub.py           # rewrite python/pcp/_core.pyi
    python tools/gen_core_stub.py --check   # exit 1 if the file differs from what it would write

tests/test_stubs.py fails while the file is out of date with the built module.
"""
import argparse
import ast
import builtins
import difflib
import importlib
import pathlib
import re
import sys

STUB = pathlib.Path(__file__).resolve().parent.parent / "python" / "pcp" / "_core.pyi"
HEADER = """\
# Type stubs of pcp._core, generated from the built module by tools/gen_core_stub.py: do not edit.
# After changing the bindings, reinstall and rerun it (tests/test_stubs.py fails until then).
"""
# pybind11's spelling of a type -> the stub's.
TYPE_NAMES = [(re.compile(r"\bpcp\._core\."), ""), (re.compile(r"\bobject\b"), "typing.Any"),
              # bare generics (a py::tuple, py::dict, ...) take Any arguments, as mypy --strict asks
              (re.compile(r"(?<![\w.])tuple\b(?!\[)"), "tuple[typing.Any, ...]"),
              (re.compile(r"(?<![\w.])(dict)\b(?!\[)"), r"\1[typing.Any, typing.Any]"),
              (re.compile(r"(?<![\w.])(list|collections\.abc\.Sequence)\b(?!\[)"), r"\1[typing.Any]")]
# A pybind11 signature line: "name(params) -> return", the name absent for unnamed functions.
SIGNATURE = re.compile(r"^(?:\d+\. )?(?P<name>[A-Za-z_]\w*)?\((?P<params>.*)\) -> (?P<ret>.+)$")
SKIP = {"__doc__", "__module__", "__dict__", "__weakref__"}


def _type(text, shadowed):
    """A pybind11 type as the stub writes it; names a class attribute shadows get builtins."""
    for pattern, replacement in TYPE_NAMES:
        text = pattern.sub(replacement, text)
    for name in shadowed:
        text = re.sub(rf"(?<![\w.]){name}\b", f"builtins.{name}", text)
    return text.strip()


def _split_params(text):
    """The comma-separated parameters of a signature, commas inside brackets and quotes kept."""
    parts, depth, quote, start = [], 0, None, 0
    for i, c in enumerate(text):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c in "[(":
            depth += 1
        elif c in "])":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if text[start:].strip():
        parts.append(text[start:].strip())
    return parts


def _default(text):
    """A default value the stub can show (a Python literal), else '...'."""
    try:
        ast.literal_eval(text)
        return text
    except (ValueError, SyntaxError):
        return "..."


def _params(text, is_method, shadowed):
    out = []
    for i, p in enumerate(_split_params(text)):
        if p in ("*", "/"):
            out.append(p)
            continue
        name, _, rest = p.partition(":")
        annotation, _, default = rest.partition(" = ") if rest else ("", "", "")
        if not rest and " = " in name:
            name, _, default = name.partition(" = ")
        name = name.strip()
        if is_method and i == 0:  # self (pybind11 calls it arg0 in properties)
            out.append("self")
            continue
        if name.startswith("*"):
            out.append(f"{name}: {_type(annotation, shadowed) if annotation else 'typing.Any'}")
            continue
        piece = f"{name}: {_type(annotation, shadowed)}" if annotation else name
        out.append(piece + (f" = {_default(default.strip())}" if default else ""))
    return ", ".join(out)


def _overloads(doc):
    """[(signature line match, docstring)] of a pybind11 function's __doc__: its first line and the
    rest, or for an overloaded function ('Overloaded function.' on the second line) each numbered
    signature ("1. name(...) -> type") and the text under it."""
    lines = (doc or "").split("\n")
    if len(lines) < 2 or lines[1] != "Overloaded function.":
        m = SIGNATURE.match(lines[0])
        return [(m, "\n".join(lines[1:]).strip("\n"))] if m else []
    found = []
    for line in lines[3:]:
        m = SIGNATURE.match(line) if line.startswith(f"{len(found) + 1}. ") else None
        if m:
            found.append((m, []))
        elif found:
            found[-1][1].append(line)
    return [(m, "\n".join(body).strip("\n")) for m, body in found]


def _docstring(text, indent):
    text = text.strip("\n")
    if not text.strip():
        return f"{indent}...\n"
    body = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    body = "\n".join(f"{indent}{line}" if line.strip() else "" for line in body.split("\n"))
    return f'{indent}"""\n{body}\n{indent}"""\n'


def _function(name, obj, indent="", is_method=False, shadowed=()):
    overloads = _overloads(obj.__doc__)
    if not overloads:
        raise ValueError(f"{name}: no pybind11 signature in its docstring: {obj.__doc__!r}")
    out = ""
    for m, doc in overloads:
        if len(overloads) > 1:
            out += f"{indent}@typing.overload\n"
        ret = _type(m["ret"], shadowed)
        # Elementwise == and != return tensors where object's return bool, as NumPy's stubs note.
        ignore = "  # type: ignore[override]" if name in ("__eq__", "__ne__") and not ret.endswith("bool") else ""
        out += f"{indent}def {name}({_params(m['params'], is_method, shadowed)}) -> {ret}:{ignore}\n"
        out += _docstring(doc, indent + "    ")
    return out


def _property(name, prop, shadowed):
    (m, _), = _overloads(prop.fget.__doc__)
    out = f"    @property\n    def {name}(self) -> {_type(m['ret'], shadowed)}:\n"
    doc = prop.__doc__ or ""
    out += _docstring("" if SIGNATURE.match(doc.split("\n")[0]) else doc, "        ")
    if prop.fset is not None:
        (s, _), = _overloads(prop.fset.__doc__)
        value = _split_params(s["params"])[1].partition(":")[2]
        out += f"    @{name}.setter\n    def {name}(self, value: {_type(value, shadowed)}) -> None: ...\n"
    return out


def _value_type(value, cls):
    if isinstance(value, dict) and all(isinstance(v, cls) for v in value.values()):
        return f"dict[str, {cls.__name__}]"
    return type(value).__name__


def _class(cls):
    members = vars(cls)
    # Attributes named like builtin types (DType.bool) hide them inside the class body.
    shadowed = sorted(n for n, v in members.items() if isinstance(v, cls) and hasattr(builtins, n))
    out = f"class {cls.__name__}:\n" + _docstring(cls.__doc__ or "", "    ")
    for name in sorted(members):
        value = members[name]
        if isinstance(value, cls):  # an enum member
            out += f"    {name}: typing.ClassVar[{cls.__name__}]\n"
        elif type(value).__name__ == "pybind11_static_property" and name not in SKIP:
            out += f"    {name}: typing.ClassVar[{_value_type(getattr(cls, name), cls)}]\n"
        elif isinstance(value, (int, float, str)) and name not in SKIP:
            out += f"    {name}: typing.ClassVar[{type(value).__name__}]\n"
    for name in sorted(members):
        value = members[name]
        private = name.startswith("_pybind11") or (name.startswith("__") and not name.endswith("__"))
        if private or name in SKIP or type(value).__name__ == "pybind11_static_property":
            continue
        if isinstance(value, property):
            out += _property(name, value, shadowed)
        elif type(value).__name__ == "instancemethod":
            out += _function(name, value, "    ", is_method=True, shadowed=shadowed)
    return out


def generate(module):
    """The text of the stub file of a pybind11 module."""
    names = sorted(n for n in vars(module) if not (n.startswith("__") and n.endswith("__")))
    classes = [n for n in names if isinstance(getattr(module, n), type)]
    body = "\n\n".join(_class(getattr(module, n)) for n in classes)
    body += "\n"
    for n in names:
        if n not in classes:
            body += "\n" + _function(n, getattr(module, n))
    imports = ""
    for group in (("builtins", "collections.abc", "typing"), ("numpy", "typing_extensions")):  # stdlib, others
        used = "".join(f"import {m}\n" for m in group if re.search(rf"(?<![\w.]){re.escape(m)}\.", body))
        imports += used + "\n" if used else ""
    return HEADER + _docstring(module.__doc__ or "", "") + "from __future__ import annotations\n\n" + imports + "\n" + body


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the stub file is out of date")
    parser.add_argument("--out", default=str(STUB), help=f"the stub file (default {STUB})")
    args = parser.parse_args(argv)
    text = generate(importlib.import_module("pcp._core"))
    path = pathlib.Path(args.out)
    if args.check:
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        if old != text:
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), text.splitlines(True), str(path),
                                                       "generated"))
            return 1
        return 0
    path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
