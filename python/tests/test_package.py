"""The package itself: the version (declared once, in the C header), the names the issue
promises, the stub of the extension, py.typed."""

from __future__ import annotations

import ast
import importlib.metadata
import inspect
import re
from pathlib import Path

import pytest

import streampipe as sp
from streampipe import _streampipe


def test_version_is_the_librarys() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", sp.__version__)
    assert sp.__version__ == _streampipe.version()
    header = Path(__file__).resolve().parents[2] / "include" / "streampipe_version.h"
    if header.exists():
        text = header.read_text()
        parts = [re.search(rf"#define SP_VERSION_{k} (\d+)", text).group(1)  # type: ignore[union-attr]
                 for k in ("MAJOR", "MINOR", "PATCH")]
        assert sp.__version__ == ".".join(parts)
    try:
        installed = importlib.metadata.version("streampipe")
    except importlib.metadata.PackageNotFoundError:
        return  # run from the build tree
    if Path(sp.__file__).resolve().parent.parent.name in ("site-packages", "dist-packages"):
        assert installed == sp.__version__


def test_public_names() -> None:
    for name in sp.__all__:
        assert hasattr(sp, name), name
    assert issubclass(sp.StageError, sp.Error) and issubclass(sp.InvalidArgument, ValueError)


def test_namespace_is_the_api() -> None:
    """dir(streampipe) holds the API (__all__), its submodules and private or dunder names
    only: nothing a module imported for itself, such as ``annotations`` from
    ``from __future__ import annotations``."""
    package = Path(sp.__file__).resolve().parent
    submodules = {p.stem for p in package.glob("*.py")} - {"__init__"}
    stray = [
        n for n in dir(sp)
        if not n.startswith("_") and n not in sp.__all__ and n not in submodules
    ]
    assert not stray, f"not API: {stray}"
    assert "annotations" not in dir(sp)


def _public_attributes() -> list[tuple[str, str, object]]:
    """(class, attribute, descriptor) for every public attribute defined by the package's
    public classes and the package classes they derive from."""
    found = []
    for name in sp.__all__:
        cls = getattr(sp, name)
        if not inspect.isclass(cls):
            continue
        for klass in cls.__mro__:
            if not klass.__module__.startswith("streampipe"):
                continue
            for attr, value in vars(klass).items():
                if not attr.startswith("_"):
                    found.append((name, attr, value))
    return found


def test_public_api_has_docstrings() -> None:
    missing = []
    for name in sp.__all__:
        obj = getattr(sp, name)
        if callable(obj) and not inspect.getdoc(obj):
            missing.append(name)
    for cls, attr, value in _public_attributes():
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        # What help() shows: a slot's docstring is its value in a dict __slots__.
        if not (inspect.getdoc(value) or "").strip():
            missing.append(f"{cls}.{attr}")
    assert not missing, f"no docstring: {missing}"
    assert sp.Context.device.__doc__


def test_stub_matches_the_extension() -> None:
    package = Path(sp.__file__).resolve().parent
    assert (package / "py.typed").exists()
    stub = package / "_streampipe.pyi"
    tree = ast.parse(stub.read_text())
    declared = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            declared.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            declared.add(node.target.id)
    actual = {n for n in dir(_streampipe) if not n.startswith("__")}
    assert declared == actual, (
        f"in the stub only: {sorted(declared - actual)}; "
        f"in the module only: {sorted(actual - declared)}"
    )
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    for name, node in classes.items():
        members = {m.name for m in node.body if isinstance(m, ast.FunctionDef)}
        for member in members:
            assert hasattr(getattr(_streampipe, name), member), f"{name}.{member}"


def test_backend_names() -> None:
    ctx = sp.Context("host")
    assert ctx.backend == "host" and repr(ctx) == "Context(backend='host', device=0)"
    assert sp.Context("auto").backend in ("host", "cuda")
    with pytest.raises(TypeError):
        sp.Context(backend="host", gpu=1)  # type: ignore[call-arg]
