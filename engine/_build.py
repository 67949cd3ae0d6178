"""Which build of samedeal's modules runs: compiled with mypyc, or pure Python.

``pip install`` compiles the modules listed in pyproject.toml (``[tool.samedeal] compiled``)
with mypyc where a C compiler exists (``setup.py``). Each compiled module is an extension
module beside its source (``engine/game.cpython-311-x86_64-linux-gnu.so`` next to
``engine/game.py``), and Python's path finder tries extension modules before sources, so the
compiled form is taken whenever it is there. Two things turn that round, both decided once,
when the first package imports this module (it is never compiled itself):

* ``SAMEDEAL_PURE=1`` in the environment (inherited by the processes the server and the
  benchmarks start), to run the same source as pure Python, for tests and for debugging;
* a *stale* build: an extension module older than its source (a source edited, or checked
  out, after the last build), which would otherwise run the old code in silence.

In both cases a finder put first on ``sys.meta_path`` loads the ``.py`` source of every
submodule of samedeal's packages (:data:`PACKAGES`). A package's own ``__init__`` is never
compiled: each package that has compiled modules imports this one first, so that the finder
is in place before any of its submodules is imported. :func:`compiled_modules` and
``engine.COMPILED`` tell which build was loaded.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType
from typing import Final

__all__ = [
    "PACKAGES",
    "PURE_ENV",
    "PureFinder",
    "compiled_modules",
    "install",
    "pure_reason",
    "stale",
]

#: the environment variable that forces the pure-Python modules
PURE_ENV: Final = "SAMEDEAL_PURE"
#: samedeal's top-level packages (installed side by side)
PACKAGES: Final = ("engine", "protocol", "server", "clients")
#: the name mypyc gives the library of the compiled code (setup.py's ``group_name``)
GROUP: Final = "samedeal"
#: how much older than its source an extension module may be before it is stale: a wheel
#: unpacks the two within the same second or so, an edit comes later
_STALE_AFTER: Final = 2.0


class PureFinder(importlib.abc.MetaPathFinder):
    """Finds the ``.py`` source of every submodule of :data:`PACKAGES`, so that the
    interpreter runs it even where a compiled extension module lies beside it."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        """The spec of ``fullname``'s source file, or None for a module not ours (or a
        top-level package, which is never compiled)."""
        top, dot, _ = fullname.partition(".")
        if not dot or top not in PACKAGES or path is None:
            return None
        name = fullname.rpartition(".")[2]
        for entry in path:
            source = Path(entry, name + ".py")
            if source.is_file():
                return importlib.util.spec_from_file_location(fullname, source)
            init = Path(entry, name, "__init__.py")
            if init.is_file():
                return importlib.util.spec_from_file_location(
                    fullname, init, submodule_search_locations=[str(init.parent)]
                )
        return None


def _extensions(root: Path) -> list[tuple[Path, Path]]:
    """Each compiled module under the packages beside ``root``'s parent, with its source."""
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    out: list[tuple[Path, Path]] = []
    for package in PACKAGES:
        for folder, dirs, files in os.walk(root.parent / package):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for file in files:
                if file.endswith(suffixes):
                    source = Path(folder, file.partition(".")[0] + ".py")
                    if source.is_file():
                        out.append((Path(folder, file), source))
    return out


def pure_reason() -> str | None:
    """Why the pure-Python modules must be loaded (``SAMEDEAL_PURE``, or a stale build),
    or None when the compiled ones, where built, may be."""
    value = os.environ.get(PURE_ENV, "").strip().lower()
    if value not in ("", "0", "false", "no"):
        return f"{PURE_ENV}={value}"
    return stale(Path(__file__).resolve().parent)


def stale(root: Path) -> str | None:
    """Why the compiled build beside the engine package at ``root`` is stale (a module's
    source is newer than it), or None."""
    # (mypyc puts the compiled code of every module in one library beside the packages, and
    # a small extension module per module that loads it, left alone when it is unchanged:
    # the build's time is the library's)
    built = max((f.stat().st_mtime for f in root.parent.glob(GROUP + "__mypyc.*")), default=0.0)
    for extension, source in _extensions(root):
        if source.stat().st_mtime > max(built, extension.stat().st_mtime) + _STALE_AFTER:
            return f"stale build: {source.name} is newer than the compiled build"
    return None


def install() -> str | None:
    """Put :class:`PureFinder` first on ``sys.meta_path`` when :func:`pure_reason` says so
    (once); return the reason, or None."""
    reason = pure_reason()
    if reason is not None and not any(isinstance(f, PureFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, PureFinder())
    return reason


def compiled_modules() -> list[str]:
    """The names of samedeal's loaded modules that are compiled (extension modules)."""
    loaded = []
    for name, module in list(sys.modules.items()):
        if name.partition(".")[0] in PACKAGES and isinstance(
            getattr(module, "__loader__", None), importlib.machinery.ExtensionFileLoader
        ):
            loaded.append(name)
    return sorted(loaded)


#: why the pure modules are loaded (None: the compiled ones where built)
REASON: Final = install()
