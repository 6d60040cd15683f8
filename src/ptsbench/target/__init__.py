"""What is tested: files and block devices, their facts, the write guard, purge and write cache."""

from ptsbench.target.target import Target, resolve_target

__all__ = ["Target", "resolve_target"]
