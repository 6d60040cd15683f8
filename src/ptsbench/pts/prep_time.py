"""How long the purges and the preconditioning of a plan take, beside its rounds: the drive's sequential rate is
unknown before it runs, so it is either assumed (and said so) or measured by a short read; each test that purges
purges once, at the chosen method's estimate."""

from dataclasses import asdict, dataclass
from typing import Any

from ptsbench.pts.plan import Plan
from ptsbench.units import format_bytes, spoken_duration

# a SATA SSD's sequential rate, or a fast hard disk's: an NVMe drive is faster, a drive in write saturation slower
ASSUMED_RATE_BYTES_PER_S = 500 * 1000**2
ASSUMED_RATE_SOURCE = "assumed (--measure-rate measures it with a few seconds of reads of the device)"


@dataclass(frozen=True)
class PrepTiming:
    """The rate preconditioning (and an overwriting purge) is estimated at and where it comes from, and one purge's
    estimated time, method and basis."""

    rate_bytes_per_s: float
    rate_source: str  # "assumed (...)" or "measured: 3 s of sequential 1 MiB reads of /dev/sdb, read-only"
    purge_method: str  # "" when not known (a plan read back from an older run)
    purge_s: float
    purge_basis: str  # how purge_s was reached, e.g. "assumed: an NVMe format erases in seconds to minutes"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, record: dict[str, Any]) -> "PrepTiming":
        return cls(**record)


def stored_timing(manifest: dict[str, Any]) -> "PrepTiming | None":
    """The estimate a run was created with (None for runs made before it was stored)."""
    record = manifest.get("prep_timing")
    return PrepTiming.from_dict(record) if isinstance(record, dict) else None


def assumed_timing(purge_method: str = "none", purge_s: float = 0.0, purge_basis: str = "") -> PrepTiming:
    """The assumed rate, with a purge estimate (none by default: a file cannot be purged)."""
    return PrepTiming(ASSUMED_RATE_BYTES_PER_S, ASSUMED_RATE_SOURCE, purge_method, purge_s, purge_basis)


def purge_count(plan: Plan) -> int:
    """How many purges the plan runs: one per test phase that starts with a purge."""
    return sum(1 for phase in plan.phases if phase.phase.purge)


def precondition_s(precondition_bytes: int, timing: PrepTiming) -> float:
    return precondition_bytes / timing.rate_bytes_per_s


def prep_s(plan: Plan, timing: PrepTiming) -> float:
    """All purges and all preconditioning of the plan, in seconds."""
    written = sum(phase.precondition_bytes for phase in plan.phases)
    return purge_count(plan) * timing.purge_s + precondition_s(written, timing)


def prep_lines(plan: Plan, timing: PrepTiming) -> list[str]:
    """'Purges: 3 x nvme-format, about 1 min each (assumed: ...)' and 'Preconditioning: 8.0 GiB ... at 500 MB/s,
    assumed (...)'."""
    count = purge_count(plan)
    rate = f"{timing.rate_bytes_per_s / 1000**2:,.0f} MB/s, {timing.rate_source}"
    if not count:
        purges = "Purges: none (no test purges)"
    elif not timing.purge_method:
        purges = f"Purges: {count}, not estimated (the method is chosen when the run starts)"
    elif timing.purge_method == "none":
        purges = "Purges: none (the purge method at run time is none)"
    else:
        each = " each" if count > 1 else ""
        purges = (f"Purges: {count} x {timing.purge_method}, about {spoken_duration(timing.purge_s)}{each} "
                  f"({timing.purge_basis})")
    written = sum(phase.precondition_bytes for phase in plan.phases)
    if not written:
        return [purges, "Preconditioning: none"]
    return [purges, f"Preconditioning: {format_bytes(written)} of sequential writes, about "
                    f"{spoken_duration(precondition_s(written, timing))} at {rate}"]
