"""The compiled parts of ptsbench (the fio log parser, and the launcher that starts fio bound to ptsbench's life);
everything else is declared in pyproject.toml.

Both are optional: where they cannot be built (no C compiler, no Python headers) the install goes on, fio logs are
read by the numpy parser (src/ptsbench/fio/numpy_parser.py), which gives the same results more slowly, and fio is
started with a fork and a preexec_fn (src/ptsbench/fio/lifetime.py), which costs more CPU.
"""

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

LAUNCHER = "src/ptsbench/fio/_bound_exec.c"
LAUNCHER_NOT_BUILT = ("ptsbench: the launcher of fio (C) was not built ({reason}); fio is started with a fork instead, "
                      "which costs ptsbench more CPU per fio process.")
NOT_BUILT = ("ptsbench: the fast fio log parser (C) was not built ({reason}); fio logs will be read by the slower "
             "numpy parser. For the fast one install a C compiler and Python's headers (gcc, python3-dev), then "
             "install ptsbench again.")


class OptionalBuildExt(build_ext):
    """build_ext that reports a failed build of the log parser in one line instead of failing the install, and builds
    the launcher of fio (LAUNCHER) beside it."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as error:  # no compiler at all is found before any extension is tried
            print(NOT_BUILT.format(reason=_reason(error)), file=sys.stderr)
            print(LAUNCHER_NOT_BUILT.format(reason=_reason(error)), file=sys.stderr)
            return
        try:
            self.build_launcher()
        except Exception as error:  # no compiler: fio/lifetime.py then binds children with a preexec_fn
            print(LAUNCHER_NOT_BUILT.format(reason=_reason(error)), file=sys.stderr)

    def build_launcher(self) -> None:
        """An executable, not an extension: it runs between vfork and exec in place of Python."""
        folder = os.path.dirname(self.get_ext_fullpath("ptsbench.fio._logparse"))
        objects = self.compiler.compile([LAUNCHER], output_dir=self.build_temp, extra_postargs=["-O2"])
        self.compiler.link_executable(objects, "_bound_exec", output_dir=folder)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as error:  # the compiler failed: missing headers, CC=/bin/false, ...
            print(NOT_BUILT.format(reason=_reason(error)), file=sys.stderr)


def _reason(error: Exception) -> str:
    text = str(error).strip().splitlines()
    return text[-1] if text else type(error).__name__


setup(ext_modules=[Extension("ptsbench.fio._logparse", ["src/ptsbench/fio/_logparse.c"], extra_compile_args=["-O3"])],
      cmdclass={"build_ext": OptionalBuildExt})
