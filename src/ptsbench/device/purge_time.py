"""How long a purge method takes on a target, for the plan's worst case: the drive's own estimate where it gives
one (an NVMe sanitize log's estimated times), the capacity at the plan's rate for a method that rewrites every
block (an overwrite, a SCSI FORMAT UNIT or an ATA secure erase of a hard disk), else a stated assumption."""

from ptsbench.device.purge import AtaSecureErase, Blkdiscard, NvmeFormat, NvmeSanitize, PurgeMethod, ScsiFormat
from ptsbench.device.target import Target

# an NVMe format with user-data erase, a block or crypto erase, or a discard of an SSD takes seconds to minutes
ASSUMED_ERASE_S = 60.0
ERASE_ASSUMPTION = "assumed: an SSD erases its blocks or keys, or discards, in seconds to a few minutes"


def purge_time_s(method: PurgeMethod, target: Target, facts: dict[str, object],
                 rate_bytes_per_s: float) -> tuple[float, str]:
    """(seconds one purge of `target` with `method` is estimated to take, how that was reached)."""
    size_bytes = target.size_bytes or 0
    rewrite = (size_bytes / rate_bytes_per_s, f"{size_bytes:,} bytes rewritten at the preconditioning rate below")
    if isinstance(method, NvmeSanitize):
        return _sanitize_time_s(method, target, facts, rewrite)
    if isinstance(method, NvmeFormat | Blkdiscard):
        return ASSUMED_ERASE_S, ERASE_ASSUMPTION
    if isinstance(method, ScsiFormat):
        return rewrite[0], f"FORMAT UNIT: {rewrite[1]}"
    if isinstance(method, AtaSecureErase):
        return rewrite[0], f"a hard disk's secure erase: {rewrite[1]} (an SSD takes seconds)"
    return 0.0, "no purge"


def _sanitize_time_s(method: NvmeSanitize, target: Target, facts: dict[str, object],
                     rewrite: tuple[float, str]) -> tuple[float, str]:
    action, estimate_s = method.drive_estimate(target, facts)
    if estimate_s is not None:
        return float(estimate_s), f"the drive's own estimate for a sanitize {action} (sanitize log)"
    if action == "overwrite":
        return rewrite[0], f"sanitize overwrite: {rewrite[1]}"
    return ASSUMED_ERASE_S, f"sanitize {action or 'block erase'}, the drive gives no estimate; {ERASE_ASSUMPTION}"
