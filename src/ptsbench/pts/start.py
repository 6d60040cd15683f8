"""Starting and resuming a PTS run: creating its run directory and plan files, rebuilding the plan of a stored run,
the checks at every start (same programs, same plan), the checks before a resume (same target, the file target
kept), stopping the fio a killed run left behind, and removing a finished run's scratch file.
"""

import json
import os
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ptsbench.atomic import atomic_write_json, atomic_write_text
from ptsbench.device.same_device import check_same_device
from ptsbench.device.target import Target
from ptsbench.device.userfile import check_same_file, file_identity
from ptsbench.errors import StoreError
from ptsbench.fio.lifetime import stop_orphan_fio
from ptsbench.hosts.hostlist import Host
from ptsbench.pts.describe import describe
from ptsbench.pts.params import Settings
from ptsbench.pts.plan import Plan, TargetInfo, make_plan
from ptsbench.pts.prep_time import PrepTiming
from ptsbench.pts.records import plan_record
from ptsbench.pts.store import PRECONDITION_DONE, ROUND_FILE, PtsStore
from ptsbench.store import RunStore, utc_now

# ---------------------------------------------------------------------------------------------------------------
# creating a run


def target_info(target: Target, facts: Mapping[str, object], ioengine: str, size_bytes: int,
                remote: bool = False) -> TargetInfo:
    """The planning view of a target (`remote`: the same path on fio servers)."""

    def as_int(key: str) -> int | None:
        value = facts.get(key)
        return value if isinstance(value, int) else None

    return TargetInfo(target.path, target.kind, size_bytes, as_int("logical_sector_bytes"),
                      as_int("physical_sector_bytes"), ioengine, remote)


@dataclass(frozen=True)
class RunStart:
    """What a new PTS run's manifest records beside its settings and target: how it was started."""

    ioengine_note: str
    purge_method: str = "auto"
    purge_scope: str = "namespace"
    scratch: bool = False
    name: str = "pts"
    hosts: Sequence[Mapping[str, Any]] = ()  # the pre-flight facts of every host (hosts.HostInfo as a dict)
    device_info: Mapping[str, str] | None = None  # the user's description of the device, for the report
    device_identity: Mapping[str, Any] | None = None  # the block device as the run starts on it (resume checks)
    timing: PrepTiming | None = None  # how long purges and preconditioning are estimated to take


def create_run(root: Path, settings: Settings, info: TargetInfo, facts: Mapping[str, object],
               start: RunStart) -> tuple[PtsStore, Plan]:
    """Plan the run and create its run directory (manifest, plan.json, plan.txt); nothing runs yet. `start`: how it
    was started (hosts for a run on fio servers; device_identity from device/same_device.py start_record; timing
    stated in plan.txt)."""
    plan = make_plan(settings, info)
    manifest = {
        "kind": "pts",
        "name": start.name,
        "settings": settings.to_dict(),
        "target_info": info.__dict__,
        "target": dict(facts),
        "ioengine_note": start.ioengine_note,
        "purge_method": start.purge_method,
        "purge_scope": start.purge_scope,
        "base_seed": random.SystemRandom().randrange(1, 2**31),
        "scratch": start.scratch,
        "compliance": {"compliant": not plan.deviations, "reasons": list(plan.deviations)},
        "notes": list(plan.notes),
        "write_cache": [],
        "device_info": dict(start.device_info or {}),
        "status": "created",
        **({"hosts": [dict(host) for host in start.hosts]} if start.hosts else {}),
        **({"device_identity": dict(start.device_identity)} if start.device_identity is not None else {}),
        **({"file_identity": file_identity(info.path)} if info.kind == "file" and not start.hosts else {}),
        **({"prep_timing": start.timing.to_dict()} if start.timing is not None else {}),
    }
    store = RunStore.create(root, manifest)
    write_plan(root, plan, start.timing)
    return PtsStore(store), plan


def write_plan(root: Path, plan: Plan, timing: PrepTiming | None) -> None:
    """plan.json and plan.txt (written again when operating points join the plan)."""
    atomic_write_json(root / "plan.json", plan_record(plan))
    atomic_write_text(root / "plan.txt", "\n".join(describe(plan, timing)) + "\n")


def load_plan(store: RunStore) -> Plan:
    """Rebuild the plan of a stored run (planning is pure, so it is the same plan)."""
    manifest = store.manifest
    if manifest.get("kind") != "pts":
        raise StoreError(f"{store.root} is not a PTS run (kind {manifest.get('kind')!r})", "pass a `ptsbench pts` run")
    return make_plan(Settings.from_dict(manifest["settings"]), TargetInfo(**manifest["target_info"]),
                     operating_points=stored_operating_points(manifest))


def stored_operating_points(manifest: Mapping[str, Any]) -> dict[str, dict[str, tuple[int, int]]]:
    """{test: {'max': (TC, QD), ...}} of the operating points chosen so far (a point not chosen is left out)."""
    return {test: {point: (int(cell["tc"]), int(cell["qd"])) for point, cell in record["points"].items() if cell}
            for test, record in (manifest.get("operating_points") or {}).items()}


def stored_hosts(manifest: Mapping[str, Any]) -> tuple[Host, ...]:
    """The fio servers of a run on hosts, in --hosts order (() for a local run)."""
    return tuple(Host(str(host["host"]), int(host["port"]), str(host.get("transport", "tcp")),
                      str(host.get("user", ""))) for host in manifest.get("hosts") or ())


# ---------------------------------------------------------------------------------------------------------------
# checks at every start


def check_versions(pts: PtsStore) -> None:
    """A deviation when this start runs another ptsbench or fio than the one the run started with: rounds before
    and after would come from different programs. Every start is recorded under "starts"."""
    from ptsbench import __version__
    from ptsbench.fio.runner import fio_version

    manifest = pts.store.manifest
    now = {"utc": utc_now(), "ptsbench_version": __version__, "fio_version": fio_version()}
    pts.store.update_manifest(starts=[*(manifest.get("starts") or []), now])
    changed = [f"{name} {manifest.get(f'{name}_version')} -> {now[f'{name}_version']}" for name in ("ptsbench", "fio")
               if manifest.get(f"{name}_version") != now[f"{name}_version"]]
    if changed:
        pts.add_compliance_reason(f"resumed with another version ({', '.join(changed)}) at {now['utc']}: rounds "
                                  "before and after ran different programs")


def check_stored_plan(pts: PtsStore, plan: Plan) -> None:
    """StoreError when a phase that has begun (its folder exists) is planned differently now than in plan.json,
    or the active range differs: the stored rounds ran another plan (made by another ptsbench version), and going on
    would mix the two in one phase."""
    from ptsbench.store import read_json

    path = pts.root / "plan.json"
    if not path.exists():
        return
    stored, now = read_json(path), json.loads(json.dumps(plan_record(plan)))  # as JSON has it: lists, not tuples
    before = {phase["key"]: phase for phase in stored.get("phases", [])}
    begun = [phase for phase in now["phases"] if phase["key"] in before and pts.phase_dir(phase["key"]).exists()]
    changed = [phase["title"] for phase in begun if not _same_plan(before[phase["key"]], phase)]
    if stored.get("active_range_bytes") != now["active_range_bytes"] and begun:
        changed.insert(0, "the active range")
    if changed:
        raise StoreError(f"{pts.root}: {', '.join(changed)} was planned differently when the run started",
                         "finish it with the ptsbench version that started it "
                         f"({pts.store.manifest.get('ptsbench_version')}), or start a new run")


def _same_plan(stored: Any, now: Any) -> bool:
    """Two plan.json records plan the same: equal on every key both have (a key only one version of ptsbench
    writes is not a difference), estimates left out."""
    if isinstance(stored, dict) and isinstance(now, dict):
        return all(_same_plan(stored[key], now[key]) for key in stored.keys() & now.keys() if key != "worst_case_s")
    if isinstance(stored, list) and isinstance(now, list):
        return len(stored) == len(now) and all(map(_same_plan, stored, now))
    return bool(stored == now)


# ---------------------------------------------------------------------------------------------------------------
# resuming and cleaning up


def resume_target(pts: PtsStore) -> tuple[Target, list[str]]:
    """The stored run's target, checked to be the same device as when the run started (size, model, serial, every
    id the device offers, a loop device's backing file, no new signature: see check_same_device), and notes on how
    weak that check was. The fio a killed run left behind is stopped first (run directory locked): it could
    otherwise lay a deleted target file out again, or write on, while the target is being checked."""
    from ptsbench.device.claim import check_not_claimed
    from ptsbench.device.info import target_facts
    from ptsbench.device.target import resolve_target
    from ptsbench.errors import TargetError

    manifest = pts.store.manifest
    if manifest.get("kind") != "pts":
        raise StoreError(f"{pts.root} is not a PTS run, sweep or replay --steady run",
                         "`ptsbench resume` continues runs made by `ptsbench pts`, `ptsbench sweep` or "
                         "`ptsbench replay --steady`")
    info = TargetInfo(**manifest["target_info"])
    with pts.lock(record_pid=False):
        stop_orphan_fio(pts.root)
    if manifest.get("hosts"):
        return _remote_target(info, stored_hosts(manifest)), []
    check_not_claimed(info.path)  # first: another run on the target also explains a changed device or signature
    notes = []
    if info.kind == "file" and manifest.get("status") != "done":  # the same file, as sweeps judge it: inode, mark
        notes = check_same_file(info.path, manifest.get("file_identity"), str(pts.root))
        _check_file_kept(pts, info, bool(manifest.get("scratch")))
    stored = manifest.get("target") or {}
    if info.kind == "block":
        _check_device_back(info.path, stored)
    target = resolve_target(info.path, info.size_bytes if info.kind == "file" else None)
    if target.kind != info.kind or (info.kind == "block" and target.size_bytes != info.size_bytes):
        raise TargetError(f"{info.path} is not the target this run started on (kind or size changed)",
                          "resume on the same device, or start a new run")
    now = target_facts(target)
    for key in ("model", "serial", "wwid"):  # the wwid is the NVMe namespace's UUID, NGUID or EUI64 where it has one
        if info.kind == "block" and stored.get(key) and stored.get(key) != now.get(key):
            raise TargetError(f"{info.path} is now {key} {now.get(key)}, the run started on {stored.get(key)}",
                              "resume on the same device")
    if info.kind != "block":
        return target, notes
    notes = check_same_device(info.path, manifest.get("device_identity"), _has_written(pts), pts.root)
    return target, [*notes, *_check_write_history(pts, target, now)]


def _check_write_history(pts: PtsStore, target: Target, facts: dict[str, object]) -> list[str]:
    """The drive's own counters now against the last stored round's (device/telemetry.py counters_since): a counter
    that went back is a TargetError; writes the run did not make and power cycles are recorded as deviations and
    returned as notes. The run's own writes since then are at most its largest stored round (the round that was
    killed) and any preconditioning begun since. Nothing to compare (no round stored, a device without counters):
    no notes."""
    from ptsbench.device.telemetry import HISTORY_KEYS, counters_since, read_telemetry
    from ptsbench.errors import TargetError
    from ptsbench.store import read_json

    rounds = [read_json(path) for path in sorted((pts.root / "pts").rglob(ROUND_FILE))]
    if not rounds:
        return []
    last = max(rounds, key=lambda record: str(record.get("finished_utc") or ""))
    stored = (last.get("telemetry") or {}).get("after") or {}
    if not any(isinstance(stored.get(key), int) for key in HISTORY_KEYS):
        return []
    changes = [((record.get("telemetry") or {}).get("change") or {}).get("data_written_bytes") for record in rounds]
    own_bytes = max((value for value in changes if isinstance(value, int)), default=0)
    plan = load_plan(pts.store)
    own_bytes += sum(phase.precondition_bytes for phase in plan.phases
                     if (pts.phase_dir(phase.key) / "precondition").exists()
                     and not any(pts.rounds_dir(phase.key).glob(f"*/{ROUND_FILE}")))
    verdict = counters_since(stored, read_telemetry(target, facts), own_bytes)
    where = f"{target.path}, after {last.get('phase')} round {last.get('round')}"
    if verdict.refusal:
        raise TargetError(f"{where}: {verdict.refusal}", "resume only on the drive the run started on, as it was; "
                          "else start a new run")
    reasons = [f"resumed at {utc_now()}: {where}: {deviation}" for deviation in verdict.deviations]
    for reason in reasons:
        pts.add_compliance_reason(reason)
    return [f"recorded as a deviation: {reason}" for reason in reasons]


def _has_written(pts: PtsStore) -> bool:
    """The run has begun writing the device: a preconditioning or a round has started (a purge comes first)."""
    phases = pts.root / "pts"
    return any((phase / "precondition").exists() or (phase / "rounds").exists()
               for phase in (phases.iterdir() if phases.is_dir() else ()))


def _check_device_back(path: str, stored: dict[str, Any]) -> None:
    """TargetError when the run's device is not at its path any more, naming where the same drive is now."""
    from ptsbench.device.identity import devices_with_ids, missing_device
    from ptsbench.errors import TargetError

    gone = missing_device(path)
    if gone is None:
        return
    ids = {"wwid": stored["wwid"]} if stored.get("wwid") else {}
    if not ids and stored.get("serial"):
        ids = {"device/serial": stored["serial"]}
    elsewhere = [dev for dev in devices_with_ids(ids) if dev != path]
    if elsewhere:
        raise TargetError(f"{gone}; the same drive is at {elsewhere[0]} now",
                          "a run resumes only on the path it started on: start a new run on "
                          f"{elsewhere[0]}")
    fix = f"check what it holds and remove it (rm {path}), then " if os.path.isfile(path) else ""
    raise TargetError(gone, f"{fix}reattach the drive (or let the kernel find it again: echo 1 > "
                      "/sys/bus/pci/rescan) and resume; resume checks it is the same drive")


def _check_file_kept(pts: PtsStore, info: TargetInfo, scratch: bool) -> None:
    """TargetError when a file target lost what the stored rounds left on it: gone, or shorter than the run's size
    (fio would lay out a fresh file and the next rounds would run on it unpreconditioned). A scratch file fio has
    not written yet may be missing."""
    from ptsbench.errors import TargetError

    path = Path(info.path)
    written = any(p.name in (ROUND_FILE, PRECONDITION_DONE) for p in (pts.root / "pts").rglob("*.json"))
    if not path.exists():
        if scratch and not written:
            return
        raise TargetError(f"target file {info.path} is gone", "restore it, or start a new run")
    size_bytes = path.stat().st_size
    if written and size_bytes < info.size_bytes:
        raise TargetError(f"{info.path} is {size_bytes:,} bytes, the run started on {info.size_bytes:,}: what the "
                          "stored rounds wrote is gone", "restore the file, or start a new run")


def _remote_target(info: TargetInfo, hosts: Sequence[Host]) -> Target:
    """The target of a run on hosts, after the pre-flight again: every host back, same fio, path usable."""
    from ptsbench.errors import TargetError
    from ptsbench.hosts.preflight import preflight

    checked = preflight(hosts, [info.path], size_bytes=info.size_bytes).targets[0]
    if checked.path != info.path or checked.kind != info.kind:
        raise TargetError(f"{info.path} is now a {checked.kind} at {checked.path} on the hosts, the run started on "
                          f"a {info.kind}", "resume on the same device or file")
    return Target(path=info.path, kind=info.kind, size_bytes=info.size_bytes, requested=info.path)


def finish_scratch(pts: PtsStore) -> None:
    """Remove the scratch file of a finished run (kept while the run can still be resumed)."""
    manifest = pts.store.manifest
    if manifest.get("scratch") and manifest.get("status") == "done":
        Path(manifest["target_info"]["path"]).unlink(missing_ok=True)
