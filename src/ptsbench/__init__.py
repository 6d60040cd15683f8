"""ptsbench: SNIA PTS storage benchmark, fio case runner and fio data viewer."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("ptsbench")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0"


def __getattr__(name: str) -> object:
    """Lazy public API, so `import ptsbench` stays light: ptsbench.steady_state(values, rounds=None)."""
    if name == "steady_state":
        from ptsbench.pts.steady import steady_state

        return steady_state
    raise AttributeError(f"module 'ptsbench' has no attribute {name!r}")
