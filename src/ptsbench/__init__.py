"""ptsbench: SNIA PTS storage benchmark, fio case runner and fio data viewer."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("ptsbench")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0"
