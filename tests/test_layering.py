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
import still makes one module depend on the other). The one allowed exception is named below.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

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
#: ``python -m harness.report`` kept working: a two-file alias package that imports report (a higher floor).
ALLOWED_UP = {"harness.report": {"report"}, "harness.report.__main__": {"report.cli"}}


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


def _resolve(name: str) -> str | None:
    """The module of ours a dotted name lives in (``a.b.C`` -> ``a.b``), or None for a third-party name."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str, path: Path) -> set[str]:
    """Every module of ours that ``module`` imports, anywhere in its file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
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


def _top(module: str) -> str:
    return module.split(".")[0]


def test_every_package_is_on_a_floor_and_the_floors_exist() -> None:
    ours = {p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file() and p.name != "tests"}
    assert ours == set(FLOOR), f"packages without a floor (add them to FLOORS): {sorted(ours ^ set(FLOOR))}"


def test_no_package_imports_a_higher_or_sibling_floor() -> None:
    wrong = []
    for module, targets in GRAPH.items():
        for target in sorted(targets):
            if _top(target) == _top(module) or target in ALLOWED_UP.get(module, ()):
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
    its command line. The harness.report alias is the one exception."""
    from sparkdl.commands import COMMANDS

    assert {c.module for c in COMMANDS} <= set(MODULES), "a sparkdl command names a module that does not exist"
    harness_cli = {c.module for c in COMMANDS if _top(c.module) == "harness"}
    mains = {m for m in MODULES if m.endswith(".__main__")}
    wrong = [f"{m} imports {t}" for m, ts in GRAPH.items() for t in sorted(ts)
             if _top(t) != _top(m) and t not in ALLOWED_UP.get(m, ())
             and (t in mains or (t in harness_cli and _top(m) in ("models", "optimize", "report")))]
    assert not wrong, wrong


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


@pytest.mark.parametrize("old, new", [("harness.schema", "sparkdl.campaign"), ("harness.runspec", "sparkdl.runspec"),
                                      ("models.cost", "sparkdl.cost"), ("harness.report", "report")])
def test_old_import_paths_still_work(old: str, new: str) -> None:
    import importlib

    before, after = importlib.import_module(old), importlib.import_module(new)
    public = [n for n in getattr(after, "__all__", dir(after)) if not n.startswith("_") and n[0].isupper()]
    assert public and all(getattr(before, n) is getattr(after, n) for n in public if hasattr(before, n))
    assert all(hasattr(before, n) for n in public if not isinstance(getattr(after, n), type(ast)))
