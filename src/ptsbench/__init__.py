"""ptsbench: SNIA PTS storage benchmark, fio case runner and fio data viewer."""

__version__ = "0.1.0"  # the package's version (pyproject.toml reads it from here): no importlib.metadata at start-up


def __getattr__(name: str) -> object:
    """Lazy public API, so `import ptsbench` stays light: ptsbench.steady_state(values, rounds=None)."""
    if name == "steady_state":
        from ptsbench.pts.steady import steady_state

        return steady_state
    raise AttributeError(f"module 'ptsbench' has no attribute {name!r}")
