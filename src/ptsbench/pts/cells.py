"""The shapes every PTS test is made of: a phase is rounds of cells (fio jobs) with tracked variables and a stop
rule. Pure data, no spec values: pts/specs.py builds each test's phases from them, pts/plan.py plans them on a
target, the engine runs them.

Roles (Phase.role, CellSpec.role) say what each phase and cell is, so the engine, tables and report need not parse
keys or names: phases "" (IOPS, throughput, latency, write saturation), "histogram" (the latency test's capture),
"baseline" / "wait-state" (meta wait_s) for HIR, "group" (meta group) for XSR, "precondition" / "sweep" / "point"
(meta point, tc, qd) for CBW/DIRTH/ECW, "zones" (meta zones) for HDD; cells "burst" / "recovery" (HIR), "pre-write",
"histogram" (CBW/DIRTH/ECW, the latency test) and "" for every measured cell.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ptsbench.units import format_bs

WINDOW_ROUNDS = 5

METRICS = ("iops", "bw_bytes", "lat_mean_ns", "lat_max_ns")


def mix_label(read_pct: int) -> str:
    """Read/write split as PTS writes it: 65 -> '65/35'."""
    return f"{read_pct}/{100 - read_pct}"


def cell_name(pattern: str, bs_bytes: int, read_pct: int) -> str:
    """The workload's name, e.g. 'rnd 4k 0/100' (random 4 KiB, 100 % writes): how tracked variables refer to it."""
    return f"{pattern} {format_bs(bs_bytes)} {mix_label(read_pct)}"


@dataclass(frozen=True)
class CellSpec:
    """One workload of a round: a fio job run for `runtime_s`."""

    name: str
    pattern: str  # "rnd" | "seq"
    read_pct: int  # 100 = all reads, 0 = all writes
    bs_bytes: int
    numjobs: int
    iodepth: int
    runtime_s: float
    fio_options: tuple[tuple[str, str | None], ...] = ()  # extra options for tests beyond the matrix
    # "" for a measured cell of the test's loop; "pre-write" (writes that only prepare the next cells), "burst" and
    # "recovery" (HIR), "histogram" (a CBW/DIRTH operating point's response-time capture)
    role: str = ""

    @property
    def mix(self) -> str:
        return mix_label(self.read_pct)


@dataclass(frozen=True)
class ZonedCellSpec(CellSpec):
    """A cell confined to one of `zones` equal parts of the active range (0 = the lowest LBAs, the outer tracks)."""

    zone: int = 0
    zones: int = 1


@dataclass(frozen=True)
class Tracked:
    """A tracked (dependent) variable: a metric of one named cell."""

    cell: str
    metric: str  # one of METRICS

    @property
    def label(self) -> str:
        return f"{self.cell} {self.metric}"


@dataclass(frozen=True)
class Precondition:
    """Preconditioning before a phase's rounds: "wipc", workload-independent (`multiple` x the active range of
    sequential writes at `bs_bytes`), or "sprandom", fio's (random writes at `bs_bytes` of the range and its
    over-provisioning `spr_op` once: `multiple` is 1 + spr_op)."""

    bs_bytes: int
    multiple: float
    numjobs: int
    iodepth: int
    kind: str = "wipc"
    spr_op: float = 0.0


@dataclass(frozen=True)
class StopRule:
    """When a phase stops: 'steady' (steady state or max_rounds), 'written' (capacity_multiple x capacity written or
    max_time_s of IO), or 'rounds' (exactly max_rounds)."""

    kind: str
    max_rounds: int
    window: int = WINDOW_ROUNDS
    capacity_multiple: float = 0.0
    max_time_s: float = 0.0


@dataclass(frozen=True)
class Phase:
    """What the engine runs: purge, preconditioning, then rounds of `cells` until the stop rule says stop."""

    key: str  # unique in a run, e.g. "iops", "tp-1m"; also its folder name in the store
    test: str  # the TestDef key
    title: str
    purge: bool
    precondition: Precondition | None
    cells: tuple[CellSpec, ...]
    tracked: tuple[Tracked, ...]
    stop: StopRule
    # what the phase is within its test (so readers need not parse keys): "" (the four base tests), "baseline"
    # (HIR steady state), "wait-state" (HIR), "group" (XSR), "precondition", "sweep", "point" (CBW/DIRTH/ECW),
    # "zones" (HDD); `meta` adds the phase's own numbers: wait_s, group, point/tc/qd, zones
    role: str = ""
    meta: tuple[tuple[str, str | int | float], ...] = ()


def depth_name(workload: str, numjobs: int, iodepth: int) -> str:
    """A cell name with its thread count and queue depth: 'cbw 40/60 tc32/qd32'."""
    return f"{workload} tc{numjobs}/qd{iodepth}"


def fio_ms(seconds: float) -> str:
    """A fio time value in whole milliseconds: 1.5 -> '1500ms'."""
    return f"{round(seconds * 1000)}ms"


def start_delay_s(cell: CellSpec) -> float:
    """The cell's fio startdelay in seconds (0 when it has none)."""
    text = dict(cell.fio_options).get("startdelay")
    match = re.fullmatch(r"(\d+)ms", text or "")
    return int(match.group(1)) / 1000 if match else 0.0


def round_duration_s(cells: Sequence[CellSpec]) -> float:
    """Planned wall time of a round of stonewalled cells, startdelay counted from the round's start (as fio does)."""
    end_s = 0.0
    for cell in cells:
        end_s = max(end_s, start_delay_s(cell)) + cell.runtime_s
    return end_s
