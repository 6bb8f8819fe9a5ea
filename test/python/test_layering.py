"""The package's layers import only downward, and no module imports itself through others (README, Layout).

Every ``import`` of ``relax_mlir`` (also inside functions) is read with ``ast``; a module may import from
its own layer or the layers before it in ``LAYERS``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "relax_mlir"

# In pipeline order, base first: (layer, the paths under relax_mlir/ it holds). The longest matching path
# decides, so "dialects/ops" (op classes, which lower through the kernel library) sits above "dialects".
LAYERS = [
    ("base", ["errors.py", "diagnostics.py", "shape_infer"]),
    ("dialect", ["dialects"]),
    ("lowering", ["lowering"]),
    ("ops", ["dialects/ops", "dialects/relax.py", "dialects/op_examples.py", "context.py"]),
    ("transforms", ["transforms"]),
    ("pipelines", ["pipelines"]),
    ("runtime", ["runtime"]),
    ("targets", ["targets"]),
    ("frontends and tools", ["frontend", "llm", "builder.py", "examples", "demo.py", "relax_opt.py",
                             "relax_compile.py", "__init__.py"]),
]  # fmt: skip


def layer_of(module: Path) -> int:
    rel = module.relative_to(PACKAGE).as_posix()
    matches = [
        (len(p), i)
        for i, (_, paths) in enumerate(LAYERS)
        for p in paths
        if rel == p or rel.startswith(p + "/")
    ]
    assert matches, f"relax_mlir/{rel} belongs to no layer: add it to LAYERS"
    return max(matches)[1]


def resolve(name: str) -> Path | None:
    """The file of module ``relax_mlir.a.b`` (a package's ``__init__.py``), or None when it is not one (a
    name inside a module, or a namespace package)."""
    path = PACKAGE.parent / name.replace(".", "/")
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.exists():
            return candidate
    return None


def _is_module(name: str) -> bool:
    """Whether ``name`` is a module or a package (a namespace package included), not a name in one."""
    return resolve(name) is not None or (PACKAGE.parent / name.replace(".", "/")).is_dir()


def imports(module: Path) -> list[tuple[Path, int]]:
    """(imported module file, line) for every relax_mlir import in ``module``."""
    found = []
    for node in ast.walk(ast.parse(module.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # ``from pkg import sub`` imports the submodule; ``from mod import name`` the module
            names = [
                f"{node.module}.{a.name}" if _is_module(f"{node.module}.{a.name}") else node.module
                for a in node.names
            ]
        else:
            continue
        for name in names:
            target = resolve(name) if name.startswith("relax_mlir") else None
            if target is not None and target != module and name != "relax_mlir":
                found.append((target, node.lineno))
    return found


MODULES = sorted(PACKAGE.rglob("*.py"))
GRAPH = {m: imports(m) for m in MODULES}


def test_every_module_has_a_layer() -> None:
    for m in MODULES:
        layer_of(m)


def test_imports_point_down() -> None:
    upward = [
        f"relax_mlir/{m.relative_to(PACKAGE)}:{line} ({LAYERS[layer_of(m)][0]}) imports "
        f"relax_mlir/{t.relative_to(PACKAGE)} ({LAYERS[layer_of(t)][0]})"
        for m, edges in GRAPH.items()
        for t, line in edges
        if layer_of(t) > layer_of(m)
    ]
    assert not upward, "imports that point up:\n" + "\n".join(upward)


def test_no_import_cycles() -> None:
    """Tarjan's strongly connected components of the import graph: each must be one module."""
    index: dict[Path, int] = {}
    low: dict[Path, int] = {}
    stack: list[Path] = []
    cycles: list[list[Path]] = []

    def visit(m: Path) -> None:
        index[m] = low[m] = len(index)
        stack.append(m)
        for t, _ in GRAPH[m]:
            if t not in index:
                visit(t)
                low[m] = min(low[m], low[t])
            elif t in stack:
                low[m] = min(low[m], index[t])
        if low[m] == index[m]:
            component = []
            while True:
                t = stack.pop()
                component.append(t)
                if t == m:
                    break
            if len(component) > 1:
                cycles.append(component)

    for m in MODULES:
        if m not in index:
            visit(m)
    assert not cycles, "import cycles:\n" + "\n".join(
        " <-> ".join(f"relax_mlir/{p.relative_to(PACKAGE)}" for p in c) for c in cycles
    )


def test_the_checks_catch_what_they_forbid(tmp_path: Path) -> None:
    """An upward import is seen (a pass importing the runtime), and resolve() finds submodules."""
    assert layer_of(PACKAGE / "transforms" / "legalize.py") < layer_of(PACKAGE / "runtime" / "cache.py")
    probe = PACKAGE / "transforms" / "legalize.py"
    assert all(layer_of(t) <= layer_of(probe) for t, _ in GRAPH[probe])
    fake = tmp_path / "m.py"
    fake.write_text("from relax_mlir.runtime import cache\nimport relax_mlir.targets.cpu\n")
    assert [t.relative_to(PACKAGE).as_posix() for t, _ in imports(fake)] == [
        "runtime/cache.py",
        "targets/cpu.py",
    ]


OPTIONAL = {"torch": "frontend/torch"}  # optional dependency -> the only part of the package that imports it


def _third_party(module: Path) -> list[tuple[str, int]]:
    found = []
    for node in ast.walk(ast.parse(module.read_text())):
        if isinstance(node, ast.Import):
            found += [(a.name.split(".")[0], node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module.split(".")[0], node.lineno))
    return found


def test_optional_dependencies_stay_in_their_frontend() -> None:
    """``import torch`` (pip install -e .[torch]) appears only under relax_mlir/frontend/torch, and importing
    the package (its frontends' ``__init__``s included) does not import torch."""
    stray = [
        f"relax_mlir/{m.relative_to(PACKAGE)}:{line} imports {name}"
        for m in MODULES
        for name, line in _third_party(m)
        if name in OPTIONAL and not m.relative_to(PACKAGE).as_posix().startswith(OPTIONAL[name] + "/")
    ]
    assert not stray, "\n".join(stray)
    code = (
        "import sys, relax_mlir, relax_mlir.frontend, relax_mlir.frontend.onnx, relax_mlir.llm\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'torch'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
