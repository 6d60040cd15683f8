"""What is tested: files and block devices, their facts and the safety around them (the write guard, the claim,
purge, write cache, telemetry)."""

from ptsbench.device.target import Target, resolve_target

__all__ = ["Target", "resolve_target"]
