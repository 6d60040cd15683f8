"""The compiled part of ptsbench (the fio log parser); everything else is declared in pyproject.toml.

The extension is optional: where it cannot be built (no C compiler, no Python headers) the install goes on and fio
logs are read by the numpy parser (src/ptsbench/fio/numpy_parser.py), which gives the same results more slowly.
"""

import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

NOT_BUILT = ("ptsbench: the fast fio log parser (C) was not built ({reason}); fio logs will be read by the slower "
             "numpy parser. For the fast one install a C compiler and Python's headers (gcc, python3-dev), then "
             "install ptsbench again.")


class OptionalBuildExt(build_ext):
    """build_ext that reports a failed build of the log parser in one line instead of failing the install."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as error:  # no compiler at all is found before any extension is tried
            print(NOT_BUILT.format(reason=_reason(error)), file=sys.stderr)

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
