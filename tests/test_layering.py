"""The house reads top-down: read every module's imports (ast, no import) and check the floors.

The floors follow the pipeline, bottom up (a package imports only packages on lower floors)::

    sparkdl                       the shared base: errors, options, the campaign folder's schema
                                  (sparkdl.campaign, sparkdl.runspec, sparkdl.status), the cost formula
    jobs, logparse                what runs on Spark, and what its logs say
    cluster                       Spark clusters and runtimes (starts the jobs' daemons: imports jobs)
    harness                       designs, jobs, submit, the campaign, ingest
    models                        the results table and its models (reads campaigns through sparkdl)
    optimize                      searches that run campaigns through harness and fit models
    report                        the campaign's HTML page, above everything it summarises

Every import counts: at module level, under ``if TYPE_CHECKING:`` and inside functions (a deferred
import still makes one module depend on the other). No import runs back up, and neither files nor packages
import each other in a cycle. One import is not a dependency: ``from COMMAND_MODULE import main`` in a
module-level ``if __name__ == "__main__":`` block, with which a module whose command line moved to a module of
its own still runs it as ``python -m MODULE``. The block runs only when the file is the program, never in the
module its importers get; the forwarded-to module must be that module's own command line (it imports it).
"""

from __future__ import annotations

import ast
import functools
import importlib.util
from pathlib import Path

import pytest

from sparkdl.commands import COMMANDS

ROOT = Path(__file__).resolve().parents[1]

FLOORS: tuple[tuple[str, ...], ...] = (
    ("sparkdl",),
    ("jobs", "logparse"),
    ("cluster",),
    ("harness",),
    ("models",),
    ("optimize",),
    ("report",),
)
FLOOR = {pkg: level for level, pkgs in enumerate(FLOORS) for pkg in pkgs}


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for pkg in FLOOR:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


MODULES = _modules()
COMMAND_MODULES = frozenset(c.module for c in COMMANDS)


def _resolve(name: str) -> str | None:
    """The module of ours a dotted name lives in (``a.b.C`` -> ``a.b``), or None for a third-party name."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _is_main_block(node: ast.stmt) -> bool:
    """``if __name__ == "__main__":``"""
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__")


def forwarding_imports(tree: ast.Module) -> list[ast.ImportFrom]:
    """The ``from COMMAND_MODULE import main`` of the file's module-level ``if __name__ == "__main__":`` blocks."""
    return [n for block in tree.body if _is_main_block(block) for n in ast.walk(block)
            if isinstance(n, ast.ImportFrom) and not n.level and n.module in COMMAND_MODULES
            and [a.name for a in n.names] == ["main"]]


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def imports_of(module: str, path: Path) -> set[str]:
    """Every module of ours that ``module`` imports, anywhere in its file but in a ``python -m`` forwarding block."""
    tree = _tree(path)
    forwarding = {id(n) for n in forwarding_imports(tree)}
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in forwarding:
            continue
        if isinstance(node, ast.Import):
            out.update(filter(None, (_resolve(a.name) for a in node.names)))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                if path.name != "__init__.py":
                    base = base[:-1]
                base = base[:len(base) - (node.level - 1)]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            out.update(filter(None, (_resolve(f"{name}.{a.name}") for a in node.names)))
    out.discard(module)
    return out


GRAPH = {m: imports_of(m, p) for m, p in MODULES.items()}
#: The command module each ``python -m`` forwarding block imports ``main`` from (left out of GRAPH).
FORWARDS = {m: {n.module for n in forwarding_imports(_tree(p))} for m, p in MODULES.items()}


def _top(module: str) -> str:
    return module.split(".")[0]


def test_every_package_is_on_a_floor_and_the_floors_exist() -> None:
    ours = {p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file() and p.name != "tests"}
    assert ours == set(FLOOR), f"packages without a floor (add them to FLOORS): {sorted(ours ^ set(FLOOR))}"


def test_no_package_imports_a_higher_or_sibling_floor() -> None:
    wrong = []
    for module, targets in GRAPH.items():
        for target in sorted(targets):
            if _top(target) == _top(module):
                continue
            if FLOOR[_top(target)] >= FLOOR[_top(module)]:
                wrong.append(f"{module} imports {target}")
    assert not wrong, "imports against the floors:\n" + "\n".join(wrong)


def test_the_base_and_the_stages_that_read_campaigns_import_no_harness() -> None:
    """sparkdl imports nothing of ours; logparse only sparkdl; models reads campaigns via sparkdl.campaign."""
    allowed = {"sparkdl": {"sparkdl"}, "logparse": {"logparse", "sparkdl"}, "jobs": {"jobs", "sparkdl"},
               "models": {"models", "logparse", "sparkdl"}}
    for module, targets in GRAPH.items():
        if _top(module) in allowed:
            assert {_top(t) for t in targets} <= allowed[_top(module)], (module, sorted(targets))


def test_no_stage_imports_harnesss_command_line() -> None:
    """harness's commands (the modules ``sparkdl submit``, ``ingest``, ... run) and every ``__main__`` are the top
    of their package: models, optimize and report use harness's library modules (the campaign, the runner), never
    its command line."""
    assert {c.module for c in COMMANDS} <= set(MODULES), "a sparkdl command names a module that does not exist"
    harness_cli = {c.module for c in COMMANDS if _top(c.module) == "harness"}
    mains = {m for m in MODULES if m.endswith(".__main__")}
    wrong = [f"{m} imports {t}" for m, ts in GRAPH.items() for t in sorted(ts)
             if _top(t) != _top(m)
             and (t in mains or (t in harness_cli and _top(m) in ("models", "optimize", "report")))]
    assert not wrong, wrong


def test_a_main_block_forwards_only_to_the_modules_own_command_line() -> None:
    """The import the graph leaves out is a module's own command line: a command module of the same package that
    imports it (the module is no command itself any more)."""
    wrong = [f"{m} forwards to {t}" for m, targets in FORWARDS.items() for t in sorted(targets)
             if m not in GRAPH[t] or _top(t) != _top(m) or m in COMMAND_MODULES]
    assert not wrong, wrong
    assert FORWARDS["optimize.pareto"] == {"optimize.cli.pareto"}  # the scan sees the blocks


def test_a_library_module_whose_command_line_moved_parses_no_options() -> None:
    """Its command line (parser, ``main``, printing) is the module it forwards to: it imports no argparse."""
    libraries = sorted(m for m, targets in FORWARDS.items() if targets)
    assert len(libraries) >= 10, libraries
    assert [m for m in libraries if "argparse" in _imported_names(MODULES[m])] == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_between_files() -> None:
    assert _cycles(GRAPH) == []


def _package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The modules' imports, collapsed to their top-level packages (harness, models, report, ...)."""
    out: dict[str, set[str]] = {}
    for module, targets in graph.items():
        out.setdefault(_top(module), set()).update(_top(t) for t in targets)
    return {name: targets - {name} for name, targets in out.items()}


def test_the_package_graph_finds_a_cycle_no_two_files_make() -> None:
    files = {"a": set(), "a.x": {"b.y"}, "b": set(), "b.y": set(), "b.z": {"a"}}
    assert _cycles(files) == []
    assert _cycles(_package_graph(files)) == [["a", "b"]]


def test_no_import_cycle_between_packages() -> None:
    """Nor between packages: ``a.x`` importing ``b.y`` while ``b.z`` imports ``a`` is a cycle even when no two files
    import each other (the old ``harness.report`` alias made one between harness and report)."""
    assert _cycles(_package_graph(GRAPH)) == []


@pytest.mark.parametrize("old", ["harness.schema", "harness.runspec", "models.cost", "harness.report"])
def test_the_old_import_paths_are_gone(old: str) -> None:
    """The campaign folder is sparkdl.campaign, a run sparkdl.runspec, the cost sparkdl.cost, the report report."""
    assert old not in MODULES and importlib.util.find_spec(old) is None
    used = [f"{path.relative_to(ROOT)}: {name}" for path in _project_files() for name in _imported_names(path)
            if name == old or name.startswith(old + ".")]
    assert not used, used


@functools.cache
def _project_files() -> list[Path]:
    """Every Python file of the project: the packages, tests, bench, examples, fabfile."""
    skip = {".git", ".venv", "node_modules", "build", "dist", ".cluster"}  # .cluster: clusters' state (a YARN's runtimes)
    return [p for p in sorted(ROOT.rglob("*.py")) if not skip & set(p.relative_to(ROOT).parts)]


@functools.cache
def _imported_names(path: Path) -> frozenset[str]:
    """The absolute module names a file imports (``from a.b import c`` gives ``a.b`` and ``a.b.c``)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return frozenset(names)


def test_the_import_scan_sees_tests_and_bench() -> None:
    names = set().union(*(_imported_names(p) for p in _project_files() if p.parts[-2] in ("tests", "bench")))
    assert {"sparkdl.campaign", "sparkdl.runspec", "sparkdl.cost"} <= names
