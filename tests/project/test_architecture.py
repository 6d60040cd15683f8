"""The shape of the code: imports go one way (no cycle among ptsbench's modules), no source file grows past 600
lines, and the tree in docs/architecture.md names every module. Imports are read from the source with `ast`, so
every import counts: module level, inside functions, under TYPE_CHECKING, absolute and relative."""

import ast
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "ptsbench"
MAX_LINES = 600


def module_name(path: Path, root: Path = PACKAGE) -> str:
    """ptsbench.pts.plan for src/ptsbench/pts/plan.py; a package's __init__.py is the package itself."""
    parts = [root.name, *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(path: Path, module: str) -> Iterator[str]:
    """Every module name an import statement in `path` names, relative imports made absolute. `from A import B`
    names A.B as well as A: B may be a module (which the caller tells apart)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            yield source
            yield from (f"{source}.{alias.name}" for alias in node.names)


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the modules of the package it imports (itself left out)."""
    files = {module_name(path, root): path for path in sorted(root.rglob("*.py"))}
    return {module: {name for name in imported_names(path, module) if name in files and name != module}
            for module, path in files.items()}


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected group of modules (Tarjan), each as a path that returns to its start."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_cycle_in(graph, group) for group in groups]


def _cycle_in(graph: Mapping[str, set[str]], group: set[str]) -> list[str]:
    """A shortest path from the group's first module back to itself through the group (breadth first)."""
    start = min(group)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for other in sorted(graph[node] & group):
                if other == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if other not in came_from:
                    came_from[other] = node
                    following.append(other)
        frontier = following
    raise AssertionError(f"no cycle through {start} in {sorted(group)}")


def test_no_import_cycle() -> None:
    found = cycles(import_graph())
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(cycle) for cycle in found)


def long_files(root: Path = PACKAGE, limit: int = MAX_LINES) -> list[str]:
    """Source files over `limit` lines, with their length."""
    lengths = {path: len(path.read_text().splitlines()) for path in sorted(root.rglob("*.py"))}
    return [f"{path.relative_to(root.parent)}: {count} lines" for path, count in lengths.items() if count > limit]


def test_no_source_file_over_600_lines() -> None:
    found = long_files()
    assert not found, f"over {MAX_LINES} lines (split by role):\n" + "\n".join(found)


def architecture_tree(page: str) -> dict[str, str]:
    """The architecture page's first tree: path under src/ptsbench -> its role, from the indentation (two spaces a
    level; a name ending in / is a folder)."""
    lines = page.split("```")[1].strip("\n").splitlines()
    assert lines[0] == "src/ptsbench/", lines[0]
    folders: list[str] = []
    tree = {}
    for line in lines[1:]:
        depth = (len(line) - len(line.lstrip(" "))) // 2
        name, _, role = line.strip().partition(" ")
        assert 1 <= depth <= len(folders) + 1 and role.strip(), f"not a tree line: {line!r}"
        folders = folders[: depth - 1]
        path = "/".join([*folders, name.rstrip("/")])
        tree[path] = role.strip()
        if name.endswith("/"):
            folders.append(name.rstrip("/"))
    return tree


def test_architecture_page_names_every_module_and_nothing_else() -> None:
    tree = architecture_tree((ROOT / "docs" / "architecture.md").read_text())
    named_files = {path for path in tree if path.endswith((".py", ".c"))}
    folders = {path for path in tree if not path.endswith((".py", ".c"))}
    files = {str(path.relative_to(PACKAGE)) for pattern in ("*.py", "*.c") for path in PACKAGE.rglob(pattern)}
    packages = {str(path.parent.relative_to(PACKAGE)) for path in PACKAGE.rglob("__init__.py")} - {"."}
    unnamed = sorted(path for path in files - named_files if not path.endswith("__init__.py"))
    assert not unnamed, f"modules missing from docs/architecture.md's tree: {unnamed}"
    assert not named_files - files, f"docs/architecture.md names missing files: {sorted(named_files - files)}"
    assert folders == packages, f"docs/architecture.md folders {sorted(folders)} != packages {sorted(packages)}"


def test_cycle_finder_names_a_cycle_and_passes_a_one_way_graph(tmp_path: Path) -> None:
    """The checks above can fail: a cycle through a function-level relative import is caught and named, a file over
    the limit is named."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.sub import b\n")
    (package / "sub" / "b.py").write_text("def f():\n    from .c import g\n")
    (package / "sub" / "c.py").write_text("import os\n\nfrom .. import a\n")
    graph = import_graph(package)
    assert graph["pkg.a"] == {"pkg.sub", "pkg.sub.b"}
    assert cycles(graph) == [["pkg.a", "pkg.sub.b", "pkg.sub.c", "pkg.a"]]
    (package / "sub" / "c.py").write_text("import os\n")
    assert cycles(import_graph(package)) == []
    assert long_files(package, limit=1) == ["pkg/sub/b.py: 2 lines"]
    assert long_files(package, limit=2) == []


def test_architecture_tree_is_read_by_indentation() -> None:
    page = "# Architecture\n\ntext\n```\nsrc/ptsbench/\n  a.py   one\n  sub/   two\n    b.py three\n" \
           "  c.py   four\n```\n## Next\n"
    assert architecture_tree(page) == {"a.py": "one", "sub": "two", "sub/b.py": "three", "c.py": "four"}


# Folder names that build tools, editors and code-structure views skip by habit (Maven's, Cargo's and sbt's output
# is target/; Python's build/ and dist/): a package under such a name disappears from those views.
SKIPPED_FOLDER_NAMES = {"target", "build", "dist", "out", "bin", "node_modules", "venv"}


def test_no_package_hides_under_a_build_output_name() -> None:
    packages = {path.parent.relative_to(PACKAGE) for path in PACKAGE.rglob("__init__.py")}
    hidden = sorted(str(package) for package in packages if set(package.parts) & SKIPPED_FOLDER_NAMES)
    assert not hidden, f"packages named like build output (rename them to say what they hold): {hidden}"


TESTS = ROOT / "tests"
# Test folders that are no package of ptsbench: the case runner and the other modules at src/ptsbench's top, the
# repository as a whole (this file, the docs, the suite's own clean-up), the device lab's guest checks.
FOLDERS_BESIDE_PACKAGES = {"cases", "core", "project", "device_lab"}


def test_tests_are_laid_out_by_the_package_they_test() -> None:
    """tests/ maps the code: a test module lives in the folder of the package it tests (one level down); the shared
    helpers stay in tests/ itself; pytest's pythonpath names every test folder, so helpers and fixtures import by
    module name whatever the order of collection."""
    loose = sorted(path.name for path in TESTS.glob("test_*.py"))
    assert not loose, f"test modules outside a package folder of tests/: {loose}"
    deep = sorted(str(path.relative_to(TESTS)) for path in TESTS.glob("*/*/**/test_*.py"))
    assert not deep, f"test modules more than one folder down: {deep}"
    folders = {path.parent.name for path in TESTS.glob("*/test_*.py")}
    packages = {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
    unknown = sorted(folders - packages - FOLDERS_BESIDE_PACKAGES)
    assert not unknown, f"test folders named after no package of src/ptsbench: {unknown}"
    pytest_options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert sorted(pytest_options["pythonpath"]) == sorted({"tests"} | {f"tests/{folder}" for folder in folders})
