"""Architecture rules of nlid_core, checked statically (ast) and by importing the package.

* The core stays UI-free: no streamlit anywhere, plotly only in the modules of the ``figures/``
  package, and ``import nlid_core`` loads neither.
* The public API (``nlid_core.__all__``) exists and is documented: every public function and class has
  a docstring, and every parameter of a public function is named in its docstring.
* Only ``cli/__init__.py`` prints; no function has a mutable default argument.
* ``docs/architecture.md`` names every module file, so the page cannot silently fall behind the code.
* Package-internal imports form no cycle at any depth: between the top-level modules and packages
  (lazy imports included) and between the module files at import time.
* The page's dependency rows are the imports: every top-level node's module-level and lazy imports
  are the ones its row lists, and each points to a node listed above it.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import nlid_core

REPO_ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIR = REPO_ROOT / "nlid_core"
ARCHITECTURE_DOC = REPO_ROOT / "docs" / "architecture.md"

UI_PACKAGES = ("streamlit", "plotly")
#: The only package whose modules may import plotly (a directory directly under nlid_core/).
FIGURES_PACKAGE = "figures"
#: The only module allowed to call print() (the CLI package's entry point).
PRINTING_MODULE = "cli/__init__.py"

#: Public functions whose docstrings do not yet name every parameter of their signature.
#: Remove a name once its docstring is complete; ``test_known_undocumented_is_current`` fails
#: while a listed function is already fully documented, so this set can only shrink.
KNOWN_UNDOCUMENTED: frozenset[str] = frozenset()


# --------------------------------------------------------------------------- helpers


def _module_files() -> list[Path]:
    files = sorted(p for p in PACKAGE_DIR.rglob("*.py") if "__pycache__" not in p.parts)
    assert files, f"no modules found under {PACKAGE_DIR.name}/"
    return files


def _rel(path: Path) -> str:
    return path.relative_to(PACKAGE_DIR).as_posix()


def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _top(name: str) -> str:
    return name.split(".")[0]


def _imported_packages(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, top-level package) of every absolute import, including ``importlib.import_module("x")``
    and ``__import__("x")`` with a literal name."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, _top(alias.name)) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, _top(node.module)))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                found.append((node.lineno, _top(node.args[0].value)))
    return found


def _word_in(word: str, text: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text) is not None


def _public_functions() -> dict[str, object]:
    return {name: getattr(nlid_core, name) for name in nlid_core.__all__ if inspect.isfunction(getattr(nlid_core, name))}


def _undocumented_parameters(func: object) -> list[str]:
    doc = inspect.getdoc(func) or ""
    params = inspect.signature(func).parameters  # type: ignore[arg-type]
    return [name for name in params if name != "self" and not _word_in(name, doc)]


def _own_class_doc(cls: type) -> str:
    """The class's own docstring: not inherited, and not the signature a dataclass puts in place of none."""
    doc = cls.__dict__.get("__doc__") or ""
    if doc.startswith(f"{cls.__name__}(") and "\n" not in doc.strip():
        return ""  # dataclass-generated
    return doc.strip()


# --------------------------------------------------------------------------- UI-free core


def _may_import_plotly(rel: str) -> bool:
    """True for a module file inside the figures package (``rel`` relative to nlid_core/, posix)."""
    parts = rel.split("/")
    return len(parts) > 1 and parts[0] == FIGURES_PACKAGE


def _ui_import_problems(rel: str, tree: ast.Module) -> list[str]:
    bad = []
    for line, package in _imported_packages(tree):
        if package == "streamlit":
            bad.append(f"line {line}: imports streamlit (never allowed in nlid_core)")
        elif package == "plotly" and not _may_import_plotly(rel):
            bad.append(f"line {line}: imports plotly outside the {FIGURES_PACKAGE}/ package")
    return bad


@pytest.mark.parametrize("path", _module_files(), ids=_rel)
def test_no_ui_imports(path: Path) -> None:
    bad = _ui_import_problems(_rel(path), _parse(path))
    assert not bad, f"nlid_core/{_rel(path)}: " + "; ".join(bad)


def test_import_rule_detects_ui_imports() -> None:
    source = (
        "import streamlit as st\n"
        "from plotly import graph_objects\n"
        "import plotly.express\n"
        "from streamlit.components import v1\n"
        "import importlib\n"
        "importlib.import_module('plotly.io')\n"
        "import numpy\n"
        "from . import record\n"
    )
    packages = [p for _, p in _imported_packages(ast.parse(source))]
    assert packages.count("streamlit") == 2
    assert packages.count("plotly") == 3
    assert "numpy" in packages and "record" not in packages


def test_plotly_rule_allows_only_the_figures_package() -> None:
    plotly_only = ast.parse("import plotly.graph_objects as go\n")
    for rel in ("figures/fits.py", "figures/__init__.py", "figures/sub/deep.py"):
        assert _ui_import_problems(rel, plotly_only) == [], rel
    for rel in ("figures.py", "report.py", "signals/figures.py", "figures_extra/plot.py", "estimate/figures/x.py"):
        assert _ui_import_problems(rel, plotly_only) == ["line 1: imports plotly outside the figures/ package"], rel
    streamlit = ast.parse("import numpy\nfrom streamlit import session_state\n")
    assert _ui_import_problems("figures/fits.py", streamlit) == [
        "line 2: imports streamlit (never allowed in nlid_core)"
    ]


def test_importing_the_package_loads_no_ui_library() -> None:
    code = (
        "import json, sys\n"
        "import nlid_core\n"
        f"ui = {UI_PACKAGES!r}\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ui)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stderr
    loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    assert loaded == [], f"`import nlid_core` loads {loaded}"


# --------------------------------------------------------------------------- public API


def test_all_names_exist_and_are_unique() -> None:
    names = list(nlid_core.__all__)
    missing = [n for n in names if not hasattr(nlid_core, n)]
    assert not missing, f"names in nlid_core.__all__ that do not exist: {missing}"
    duplicated = sorted({n for n in names if names.count(n) > 1})
    assert not duplicated, f"names listed twice in nlid_core.__all__: {duplicated}"


def test_public_functions_and_classes_have_docstrings() -> None:
    bare = []
    for name in nlid_core.__all__:
        obj = getattr(nlid_core, name)
        if inspect.isclass(obj):
            if not _own_class_doc(obj):
                bare.append(name)
        elif inspect.isfunction(obj) and not (obj.__doc__ or "").strip():
            bare.append(name)
    assert not bare, f"public functions/classes without a docstring: {bare}"


def test_public_function_parameters_are_documented() -> None:
    problems = {}
    for name, func in _public_functions().items():
        if name in KNOWN_UNDOCUMENTED:
            continue
        missing = _undocumented_parameters(func)
        if missing:
            problems[name] = missing
    assert not problems, f"parameters not named in the docstring (function: parameters): {problems}"


def test_known_undocumented_is_current() -> None:
    functions = _public_functions()
    unknown = sorted(KNOWN_UNDOCUMENTED - set(functions))
    assert not unknown, f"KNOWN_UNDOCUMENTED names that are not public functions of nlid_core: {unknown}"
    fixed = sorted(n for n in KNOWN_UNDOCUMENTED if not _undocumented_parameters(functions[n]))
    assert not fixed, f"now fully documented, remove from KNOWN_UNDOCUMENTED: {fixed}"


# --------------------------------------------------------------------------- code rules


def _print_calls(tree: ast.AST) -> list[int]:
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"
    ]


@pytest.mark.parametrize("path", _module_files(), ids=_rel)
def test_only_the_cli_prints(path: Path) -> None:
    if _rel(path) == PRINTING_MODULE:
        return
    lines = _print_calls(_parse(path))
    assert not lines, f"nlid_core/{_rel(path)} calls print() at lines {lines}; return text or raise instead"


_MUTABLE_NODES = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)
_MUTABLE_CALLS = ("list", "dict", "set", "bytearray")


def _is_mutable_default(node: ast.expr | None) -> bool:
    if node is None:
        return False
    if isinstance(node, _MUTABLE_NODES):
        return True
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _MUTABLE_CALLS


def _mutable_defaults(tree: ast.AST) -> list[str]:
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            defaults = [*node.args.defaults, *node.args.kw_defaults]
            if any(_is_mutable_default(d) for d in defaults):
                bad.append(f"{getattr(node, 'name', '<lambda>')} (line {node.lineno})")
    return bad


@pytest.mark.parametrize("path", _module_files(), ids=_rel)
def test_no_mutable_default_arguments(path: Path) -> None:
    bad = _mutable_defaults(_parse(path))
    assert not bad, f"nlid_core/{_rel(path)}: mutable default arguments in {bad}; use None or a tuple"


def test_code_rules_detect_violations() -> None:
    source = (
        "def f(a, b=[], *, c={}):\n"
        "    print(a)\n"
        "class K:\n"
        "    def m(self, s={1}, t=(), u=None, v=dict()):\n"
        "        self.print(s)\n"
        "g = lambda x=[i for i in range(2)]: x\n"
        "def ok(a=(), b=None, c=frozenset()):\n"
        "    return a\n"
    )
    tree = ast.parse(source)
    assert _print_calls(tree) == [2]
    assert _mutable_defaults(tree) == ["f (line 1)", "m (line 4)", "<lambda> (line 6)"]


def _type_checking_block(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _internal_imports(path: Path) -> list[tuple[tuple[str, ...], bool]]:
    """Every nlid_core import of a module file: (the imported module's path in the package, at import time).

    ``from .pkg import name`` gives ``pkg.name`` (the name may be a submodule or an attribute; callers
    take the longest prefix that is a module). Imports inside functions are not at import time;
    imports under ``if TYPE_CHECKING`` are skipped.
    """
    parts = path.relative_to(PACKAGE_DIR).with_suffix("").parts
    package = parts[:-1]
    found: list[tuple[tuple[str, ...], bool]] = []

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if _type_checking_block(child):
                continue
            lazy = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package[: len(package) - child.level + 1]
                    module = tuple(child.module.split(".")) if child.module else ()
                elif child.module and _top(child.module) == "nlid_core":
                    base, module = (), tuple(child.module.split(".")[1:])
                else:
                    base, module = (), None  # type: ignore[assignment]
                if module is not None:
                    for alias in child.names:
                        found.append(((*base, *module, alias.name), not lazy))
            elif isinstance(child, ast.Import):
                for alias in child.names:
                    if _top(alias.name) == "nlid_core" and "." in alias.name:
                        found.append((tuple(alias.name.split(".")[1:]), not lazy))
            walk(child, lazy)

    walk(_parse(path), False)
    return found


def _module_names() -> dict[tuple[str, ...], Path]:
    names = {}
    for p in _module_files():
        parts = p.relative_to(PACKAGE_DIR).with_suffix("").parts
        names[parts[:-1] if parts[-1] == "__init__" else parts] = p
    return names


def _resolve(target: tuple[str, ...], names: dict[tuple[str, ...], Path]) -> tuple[str, ...] | None:
    for k in range(len(target), 0, -1):
        if target[:k] in names:
            return target[:k]
    return None


def _import_graph(*, lazy: bool) -> dict[tuple[str, ...], set[tuple[str, ...]]]:
    """Module → the modules it imports (at import time only, or also inside functions)."""
    names = _module_names()
    graph: dict[tuple[str, ...], set[tuple[str, ...]]] = {}
    for name, path in names.items():
        deps: set[tuple[str, ...]] = set()
        for target, at_import in _internal_imports(path):
            module = _resolve(target, names)
            if module is not None and module != name and (at_import or lazy):
                deps.add(module)
        graph[name] = deps
    return graph


def _cycle(graph: dict[str, set[str]] | dict[tuple[str, ...], set[tuple[str, ...]]]) -> list[str]:
    """One cycle of ``graph`` (its nodes in order), or []."""
    visiting: list[object] = []
    done: set[object] = set()

    def visit(node: object) -> list[object]:
        if node in done:
            return []
        if node in visiting:
            return [*visiting[visiting.index(node):], node]
        visiting.append(node)
        for dep in sorted(graph.get(node, ()), key=str):  # type: ignore[call-overload]
            found = visit(dep)
            if found:
                return found
        visiting.pop()
        done.add(node)
        return []

    for start in sorted(graph, key=str):
        found = visit(start)
        if found:
            return [".".join(n) if isinstance(n, tuple) else str(n) for n in found]
    return []


def test_cycle_finder_finds_cycles() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


def test_module_files_import_no_cycle_at_import_time() -> None:
    """A cycle among module files at import time (at any depth of the packages) makes import order matter."""
    graph = _import_graph(lazy=False)
    # a package's __init__ re-exporting its submodules is the one allowed back edge: drop package → child
    for name in graph:
        graph[name] = {d for d in graph[name] if d[: len(name)] != name or len(name) == 0 or name not in _module_names()
                       or _module_names()[name].name != "__init__.py"}
    graph.pop((), None)
    for deps in graph.values():
        deps.discard(())
    assert not _cycle(graph), "import cycle: " + " -> ".join(_cycle(graph))


def _node_graph() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Top-level modules and packages → the nodes they import at import time, and inside functions."""
    eager: dict[str, set[str]] = {}
    lazy: dict[str, set[str]] = {}
    names = _module_names()
    for name, path in names.items():
        if not name:
            continue
        node = name[0]
        eager.setdefault(node, set())
        lazy.setdefault(node, set())
        for target, at_import in _internal_imports(path):
            module = _resolve(target, names)
            if module is None or not module or module[0] == node:
                continue
            (eager if at_import else lazy)[node].add(module[0])
    for node in lazy:
        lazy[node] -= eager[node]
    return eager, lazy


def _documented_rows() -> list[tuple[list[str], set[str], set[str]]]:
    """The top-level rows of the page's *Module dependencies*: (nodes, module-level deps, lazy deps)."""
    text = ARCHITECTURE_DOC.read_text(encoding="utf-8")
    block = text.split("## Module dependencies", 1)[1].split("```", 2)[1]
    rows: list[str] = []
    for line in block.splitlines():
        if not line.strip():
            continue
        if line.startswith(" ") and rows:
            rows[-1] += " " + line.strip()
        else:
            rows.append(line.strip())
    parsed = []
    for row in rows:
        head, _, tail = row.partition("←")
        head = re.sub(r"\([^)]*\)", "", head)
        tail = re.sub(r"\([^)]*\)", "", tail)
        nodes = [n.strip() for n in head.split(",") if n.strip()]
        eager = {d.strip() for d in re.split(r"[,;]", tail) if d.strip() and not d.strip().startswith("~")}
        lazy = {d.strip()[1:] for d in re.split(r"[,;]", tail) if d.strip().startswith("~")}
        parsed.append((nodes, eager, lazy))
    return parsed


def test_dependency_rows_of_the_page_are_the_imports() -> None:
    eager, lazy = _node_graph()
    rows = _documented_rows()
    listed: list[str] = []
    problems: list[str] = []
    for nodes, doc_eager, doc_lazy in rows:
        for node in nodes:
            if node == "__init__":
                continue
            if node not in eager:
                problems.append(f"{node}: listed but no such module or package")
                continue
            if eager[node] != doc_eager:
                problems.append(f"{node}: imports {sorted(eager[node])} at module level, the page says {sorted(doc_eager)}")
            if lazy[node] != doc_lazy:
                problems.append(f"{node}: imports {sorted(lazy[node])} inside functions only, the page says {sorted(doc_lazy)}")
            later = (eager[node] | lazy[node]) - set(listed) - {"__init__"}
            if later:
                problems.append(f"{node}: imports {sorted(later)}, listed below it (a cycle or a wrong order)")
        listed.extend(nodes)
    missing = sorted(set(eager) - set(listed))
    if missing:
        problems.append(f"not on the page: {missing}")
    assert not problems, "docs/architecture.md, Module dependencies:\n" + "\n".join(problems)


# --------------------------------------------------------------------------- documentation


def _mentions_file(text: str, file_name: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(file_name)}(?!\w)", text) is not None


def test_doc_mention_rule_matches_whole_file_names() -> None:
    assert _mentions_file("see `io.py` and nlid_core/cli.py.", "io.py")
    assert _mentions_file("see `io.py` and nlid_core/cli.py.", "cli.py")
    assert not _mentions_file("see validatio.py or io.pyc", "io.py")


def test_architecture_doc_names_every_module() -> None:
    assert ARCHITECTURE_DOC.is_file(), "docs/architecture.md is missing"
    text = ARCHITECTURE_DOC.read_text(encoding="utf-8")
    missing = [_rel(p) for p in _module_files() if not _mentions_file(text, _rel(p))]
    assert not missing, f"docs/architecture.md does not mention module file(s) {missing}; describe them there"
