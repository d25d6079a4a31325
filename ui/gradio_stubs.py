"""Importing this before gradio keeps gradio from rewriting its own type stubs on every import.

Gradio 6's `ComponentMeta` calls `create_or_modify_pyi` for each component class it defines: it reads
and ast-parses the component's source file and rewrites the `.pyi` stub next to it. That is a
development aid for gradio's editors (the stubs ship in the wheel), and it is more than half of
`import gradio`: 7.6 s of CPU, 3.3 s without it, on a 2-core EPYC. Every app start and every test
worker paid it.

The hook replaces that one function in `gradio.component_meta` as the module loads, so no class is
made with it; a gradio without the function is left as it is. Imported after gradio it patches the
loaded module (component classes made later skip it, those already made keep their stubs).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

MODULE = "gradio.component_meta"


def _no_stub(*args: Any, **kwargs: Any) -> None:
    """The stubs are gradio's own and ship in its wheel: nothing to write at run time."""


def _patch(module: ModuleType) -> None:
    if hasattr(module, "create_or_modify_pyi"):
        module.create_or_modify_pyi = _no_stub  # type: ignore[attr-defined]


class _StubSkipper(importlib.abc.MetaPathFinder):
    """Finds `gradio.component_meta` as the path finder does, and patches it right after it executes."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None,
                  ) -> importlib.machinery.ModuleSpec | None:
        if fullname != MODULE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        loader = spec.loader if spec is not None else None
        if spec is None or not isinstance(loader, importlib.abc.Loader):
            return spec
        execute = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            execute(module)
            _patch(module)
            if self in sys.meta_path:  # once: the module loads once per process (not removed mid-lookup)
                sys.meta_path.remove(self)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def install() -> None:
    """Skip the stub rewriting from now on in this process (idempotent)."""
    loaded = sys.modules.get(MODULE)
    if loaded is not None:
        _patch(loaded)
    elif not any(isinstance(finder, _StubSkipper) for finder in sys.meta_path):
        sys.meta_path.insert(0, _StubSkipper())


install()
