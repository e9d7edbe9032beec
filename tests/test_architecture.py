"""The rules of docs/architecture.md, checked on the source (AST, nothing imported).

- Layers point one way: ``deployments -> actors -> rayfleet``; shared simulators in ``sims/``
  sit beside ``actors`` (components and tests import them; they import only the platform).
- A component never imports another component's internals, in either folder.
- No import cycle between modules (imports inside functions and under ``if TYPE_CHECKING:`` count:
  a module that needs another's type to work with it depends on it).
- No product function over 80 lines.
- One way per concern: error handlers only through ``rayfleet.errors``, actor calls in
  ``deployments/`` only through ``rayfleet.state.call``/``submit``, no test doubles in product packages.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("rayfleet", "actors", "deployments", "sims")
# what each top-level package may import (besides itself and third-party code)
MAY_IMPORT = {
    "rayfleet": set(),
    "sims": {"rayfleet"},
    "actors": {"rayfleet"},
    "deployments": {"actors", "rayfleet", "sims"},
}
MAX_FUNCTION_LINES = 80


@dataclass
class Module:
    name: str
    path: Path
    tree: ast.Module
    imports: set[str] = field(default_factory=set)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(module: Module, known: set[str]) -> set[str]:
    """Every first-party module this one imports (``from a import b`` counts ``a.b`` when it is a module)."""
    package = module.name if module.path.name == "__init__.py" else module.name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names if f"{target}.{alias.name}" in known)
    return {name for name in found if name.split(".")[0] in PRODUCT}


@cache
def modules() -> dict[str, Module]:
    found = {}
    for top in PRODUCT:
        for path in sorted((ROOT / top).rglob("*.py")):
            found[_module_name(path)] = Module(_module_name(path), path, ast.parse(path.read_text(), str(path)))
    for module in found.values():
        module.imports = _imports(module, set(found))
    return found


def _component(name: str, known: dict[str, Module]) -> str | None:
    """``deployments.asn.app`` -> ``asn``; a top-level shared module (``actors.rate_limit``) has none."""
    parts = name.split(".")
    if parts[0] not in ("actors", "deployments") or len(parts) < 2:
        return None
    if len(parts) == 2 and name in known and known[name].path.name != "__init__.py":
        return None
    return parts[1]


def import_breaches(known: dict[str, Module]) -> list[str]:
    """Every import that runs against the layer rule or reaches into another component."""
    breaches = []
    for module in known.values():
        layer = module.name.split(".")[0]
        for target in sorted(module.imports):
            top = target.split(".")[0]
            if top != layer and top not in MAY_IMPORT[layer]:
                breaches.append(f"{module.name} -> {target} ({layer} may not import {top})")
                continue
            mine, theirs = _component(module.name, known), _component(target, known)
            if theirs is not None and mine != theirs:
                breaches.append(f"{module.name} -> {target} (another component's internals)")
    return breaches


def test_the_import_rules_hold_for_every_product_module():
    assert import_breaches(modules()) == []


def test_the_import_rules_catch_each_kind_of_breach():
    def module(name: str, *imports: str, init: bool = False) -> Module:
        path = ROOT / Path(*name.split(".")) / "__init__.py" if init else ROOT / f"{name.replace('.', '/')}.py"
        return Module(name, path, ast.Module(body=[], type_ignores=[]), set(imports))

    known = {
        m.name: m
        for m in (
            module("rayfleet.cli", "deployments.asn.app"),
            module("actors.asn.cache", "deployments.asn.app", "actors.rate_limit"),
            module("actors.rate_limit"),
            module("deployments.asn.app", "actors.asn.cache", "actors.rate_limit", "sims.pve", "rayfleet.cli"),
            module("deployments.autoscale.demo", "deployments.lxc.sim", "actors.lxc.locks", "sims.pve"),
            module("sims.pve", "actors.rate_limit", init=True),
        )
    }
    assert import_breaches(known) == [
        "rayfleet.cli -> deployments.asn.app (rayfleet may not import deployments)",
        "actors.asn.cache -> deployments.asn.app (actors may not import deployments)",
        "deployments.autoscale.demo -> actors.lxc.locks (another component's internals)",
        "deployments.autoscale.demo -> deployments.lxc.sim (another component's internals)",
        "sims.pve -> actors.rate_limit (sims may not import actors)",
    ]


def _cycles(graph: dict[str, set[str]]) -> Iterator[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
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
                        yield sorted(component)


def test_no_module_imports_itself_back_through_others():
    known = modules()
    graph = {name: {t for t in m.imports if t in known and t != name} for name, m in known.items()}
    # a package's __init__ importing its own submodules is how re-exports work, not a cycle
    for name, targets in graph.items():
        if known[name].path.name == "__init__.py":
            targets.difference_update({t for t in targets if t.startswith(name + ".")})
    assert list(_cycles(graph)) == []


def test_the_cycle_finder_finds_cycles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert list(_cycles(graph)) == [["a", "b", "c"]]


def test_no_product_function_is_over_80_lines():
    long = []
    for module in modules().values():
        for node in ast.walk(module.tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{module.path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines} lines)")
    assert long == []


def test_error_handlers_are_installed_one_way():
    """Only rayfleet.errors registers exception handlers; components give it their shapes."""
    others = []
    for module in modules().values():
        if module.name == "rayfleet.errors":
            continue
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Attribute) and node.attr in ("exception_handler", "add_exception_handler"):
                others.append(f"{module.path.relative_to(ROOT)}:{node.lineno}")
    assert others == []


def test_components_call_actors_through_the_typed_helper():
    """``handle.method.remote(...)`` is unchecked; ``call(handle, Cls.method, ...)`` is checked by mypy."""
    raw = []
    for module in modules().values():
        if not module.name.startswith("deployments."):
            continue
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "remote":
                raw.append(f"{module.path.relative_to(ROOT)}:{node.lineno}")
    assert raw == []


def test_no_test_doubles_ship_in_product_packages():
    shipped = [
        name
        for name in modules()
        if {"testing", "doubles", "fakes"} & set(name.split(".")) or name.rpartition(".")[2].endswith("_double")
    ]
    assert shipped == []
