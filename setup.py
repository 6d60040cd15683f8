"""The compiled part of ptsbench (the fio log parser); everything else is declared in pyproject.toml."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("ptsbench.fio._logparse", ["src/ptsbench/fio/_logparse.c"],
                             extra_compile_args=["-O3"])])
