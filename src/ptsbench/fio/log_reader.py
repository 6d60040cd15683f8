"""Which parser reads fio logs in this process: the compiled C loop (_logparse.c) where it was built, else the numpy
parser (numpy_parser.py); PTSBENCH_LOG_READER=numpy forces numpy. Known without importing numpy (the compiled
module does not need it to load), so `show` and `info` say it at no cost."""

import os

try:
    from ptsbench.fio._logparse import parse_lines as compiled_parse_lines
except ImportError:  # installed without a C compiler (or a checkout never built): the numpy parser reads the same
    compiled_parse_lines = None  # type: ignore[assignment]

READER_ENV = "PTSBENCH_LOG_READER"  # "numpy": use the numpy parser even where the compiled one is built


def use_compiled() -> bool:
    """True when this process reads logs with the compiled parser."""
    return compiled_parse_lines is not None and os.environ.get(READER_ENV) != "numpy"


def reader_name() -> str:
    """Which parser reads fio logs in this process, for `ptsbench info` and reports."""
    if compiled_parse_lines is None:
        return "numpy (the compiled C parser was not built)"
    if os.environ.get(READER_ENV) == "numpy":
        return f"numpy ({READER_ENV}=numpy)"
    return "compiled C"
