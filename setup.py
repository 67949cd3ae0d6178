"""The build's one dynamic part: compiling the modules pyproject.toml lists with mypyc.

Everything else about the package is in pyproject.toml. ``pip install .`` and ``pip install
-e .`` compile the modules of ``[tool.samedeal] compiled`` with mypyc (it ships in mypy's
wheel, a build requirement) into extension modules beside their sources. Where that cannot
happen — mypyc missing, no C compiler, a compile error — the install goes on with the same
modules as pure Python and says so; ``SAMEDEAL_PURE=1`` at build time skips the compile.
Which build a process loaded is chosen at import time: see engine/_build.py.
"""

from __future__ import annotations

import importlib.machinery
import os
import sys
import tomllib
from pathlib import Path
from typing import Any

from setuptools import setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent


def _say(text: str) -> None:
    print(f"samedeal build: {text}", file=sys.stderr, flush=True)


class OptionalBuildExt(build_ext):
    """``build_ext`` that falls back to the pure-Python modules when compiling fails."""

    def run(self) -> None:
        self._drop_old_outputs()
        try:
            super().run()
        except Exception as exc:  # no C compiler, or it failed: the sources stand alone
            _say(f"compiling failed, installing pure Python ({type(exc).__name__}: {exc})")
            for output in self.get_outputs():
                Path(output).unlink(missing_ok=True)
            self.extensions: list[Any] = []
            return
        # The build is as new as the sources it was made from, even where the C that mypyc
        # wrote again was the same and nothing was recompiled: engine/_build.py takes an
        # extension module older than its source for a stale build.
        for output in self.get_outputs():
            os.utime(output)

    def _drop_old_outputs(self) -> None:
        """Remove extension modules a build directory kept from an earlier module list: a
        wheel takes everything in it, and one of them would load without its compiled code."""
        current = {Path(output).resolve() for output in self.get_outputs()}
        suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
        for top in ("engine", "protocol", "server", "clients"):
            for path in Path(self.build_lib, top).rglob("*"):
                if path.name.endswith(suffixes) and path.resolve() not in current:
                    path.unlink()

    def copy_file(self, infile: str, outfile: str, *args: Any, **kwargs: Any) -> Any:
        # An in-place build replaces a loaded extension module by a new file rather than
        # writing into it: a process that has it mapped (a benchmark, a server) keeps
        # running on the old one instead of crashing.
        target = Path(outfile or ".")
        if target.is_dir():
            target = target / Path(infile).name
        if not target.name.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
            return super().copy_file(infile, outfile, *args, **kwargs)
        target.unlink(missing_ok=True)
        copied = super().copy_file(infile, str(target), *args, **kwargs)
        os.utime(target)  # (see ``run``)
        return copied

    def get_outputs(self) -> list[str]:
        return [] if not self.extensions else super().get_outputs()


def compiled_extensions() -> list[Any]:
    """The mypyc extension modules, or none (with the reason said) where they cannot be made."""
    if os.environ.get("SAMEDEAL_PURE", "").strip() not in ("", "0"):
        _say("SAMEDEAL_PURE is set: installing pure Python")
        return []
    config = tomllib.loads((HERE / "pyproject.toml").read_text(encoding="utf-8"))
    modules: list[str] = config["tool"]["samedeal"]["compiled"]
    try:
        from mypyc.build import mypycify
    except ImportError:
        _say("mypyc is not installed: installing pure Python")
        return []
    try:
        return list(mypycify(modules, opt_level="3", group_name="samedeal"))
    except (Exception, SystemExit) as exc:  # mypy's errors end in SystemExit
        _say(f"mypyc refused the modules, installing pure Python ({exc!r})")
        return []


setup(ext_modules=compiled_extensions(), cmdclass={"build_ext": OptionalBuildExt})
