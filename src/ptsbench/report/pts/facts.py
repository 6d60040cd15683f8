"""The header facts PTS asks for on every page of a test (device, platform, purge, write cache, data pattern,
preconditioning, test loop, rounds, steady state), and which compliance reasons concern a test."""

from collections.abc import Mapping, Sequence
from typing import Any

from ptsbench.report.core.style import device_name
from ptsbench.report.pts.views import SPEC_NAMES, PtsContext, bs_label, cells_of
from ptsbench.store import read_text


def _job_options(context: PtsContext, phase_key: str) -> dict[str, str | None]:
    from ptsbench.fio.jobs import parse_job_text

    # job.fio, or job-HOST.fio per host when hosts carry their own sequential offsets (same options otherwise)
    paths = sorted(context.pts.round_dir(phase_key, 1).glob("job*.fio"))
    if not paths:
        return {}
    path = paths[0]
    sections = parse_job_text(read_text(path), str(path))
    return dict(sections[0].options) if sections else {}


def _data_pattern(options: Mapping[str, str | None]) -> str:
    if "refill_buffers" in options:
        return "random data, refilled for every IO (fio refill_buffers)"
    if "scramble_buffers" in options or not options:
        return "fio default buffers (scrambled); not the random data PTS asks for" if options else "-"
    return "fio default buffers"


def _purge_fact(context: PtsContext, views: Sequence[Any]) -> str:
    found = []
    for view in views:
        for attempt in context.pts.purge_attempts(view.key):
            text = f"{attempt['method']}: {attempt['message']}" + (" (a deviation)" if attempt["is_deviation"] else "")
            if not attempt["ok"]:
                text += " (FAILED)"
            found.append(text)
    return "; ".join(dict.fromkeys(found)) or ("none" if not any(v.plan["purge"] for v in views) else "not yet")


def _write_cache_fact(manifest: Mapping[str, Any]) -> str:
    records = manifest.get("write_cache") or []
    wanted = (manifest.get("settings") or {}).get("write_cache", "-")
    if not records:
        return f"{wanted} required; not recorded"
    last = records[-1]
    state = {True: "enabled", False: "disabled", None: "unknown"}.get(last.get("after"), str(last.get("after")))
    return f"{wanted} required; device {state} ({last.get('message')})"


def _precondition_fact(context: PtsContext, views: Sequence[Any]) -> str:
    parts = []
    for view in views:
        pre = view.plan.get("precondition")
        if not pre:
            continue
        done = context.pts.precondition_result(view.key)
        written = f", {done['written_bytes'] / 1e9:,.3f} GB written" if done else ", not finished"
        over = "every LBA the segments spread over" if context.plan.get("segments") else "active range"
        if pre.get("kind") == "sprandom":
            parts.append(f"fio's sprandom: random {bs_label(pre['bs_bytes'])} writes of the {over} and "
                         f"{pre['spr_op']:g} over-provisioning once, at TC{pre['numjobs']}/QD{pre['iodepth']}"
                         f"{written} (not PTS's WIPC)")
            continue
        parts.append(f"WIPC: sequential {bs_label(pre['bs_bytes'])} writes, {pre['multiple']:g} x {over} at "
                     f"TC{pre['numjobs']}/QD{pre['iodepth']}{written}")
    return "; ".join(dict.fromkeys(parts)) or "none (from fresh-out-of-box)"


def _rounds_fact(views: Sequence[Any]) -> str:
    return "; ".join(f"{view.plan['title']}: {len(view.rounds)} of at most {view.plan['max_rounds']}"
                     for view in views)


def _steady_fact(views: Sequence[Any]) -> str:
    parts = []
    for view in views:
        if not view.plan["tracked"]:
            parts.append(f"{view.plan['title']}: not applicable (no tracked variable)")
        elif view.result is None:
            parts.append(f"{view.plan['title']}: in progress")
        elif view.result.get("steady"):
            window = view.result["window_rounds"]
            parts.append(f"{view.plan['title']}: reached in rounds {window[0]}-{window[-1]}")
        else:
            parts.append(f"{view.plan['title']}: NOT reached")
    return "; ".join(parts)


def _dates_fact(views: Sequence[Any]) -> str:
    rounds = [r for view in views for r in view.rounds]
    if not rounds:
        return "not started"
    return f"{rounds[0].get('started_utc', '-')} to {rounds[-1].get('finished_utc', '-')}"


def test_title(test: str, views: Sequence[Any], spec: str = "") -> tuple[str, str]:
    """(title, spec section) of a test: the basic tests' and the advanced ones' rows, the section in the spec
    version that ran (none for a version without the test); else its phases' name."""
    from ptsbench.pts.specs import TEST_DEFS

    definition = TEST_DEFS.get(test)
    if definition is not None:
        return definition.title, definition.section.get(spec, "")
    return str(views[0].plan["title"]).split(":")[0], ""


def _option(cell: Mapping[str, Any], name: str) -> str | None:
    return next((str(value) for key, value in cell.get("fio_options") or () if key == name), None)


def _workload(cells: Sequence[Mapping[str, Any]]) -> str:
    """Block sizes of cells as run: a bssplit (CBW's JESD219 mix) and LBA zones when the cells have them."""
    bssplit = _option(cells[0], "bssplit") if cells else None
    if bssplit is None:
        return f"block sizes {', '.join(dict.fromkeys(bs_label(c['bs_bytes']) for c in cells))}"
    sizes = ", ".join(f"{bs_label(int(size))} {share} %" for size, share in
                      (part.split("/") for part in bssplit.split(":")))
    zones = _option(cells[0], "random_distribution")
    return f"JESD219 block-size mix (fio bssplit: {sizes})" + (f", LBA zones {zones}" if zones else "")


def test_loop(test: str, views: Sequence[Any]) -> str:
    """What a test's rounds run, as PTS's 'test loop parameters'."""
    from ptsbench.pts.cells import mix_label

    cells = [c for view in views for c in cells_of(view)]
    measured = [c for c in cells if c.get("role", "") in ("", "burst", "histogram")] or cells
    mixes = ", ".join(dict.fromkeys(mix_label(c["read_pct"]) for c in measured))
    roles = {view.plan.get("role", "") for view in views}
    if "wait-state" in roles:
        return _wait_state_loop(views, mixes)
    if "group" in roles:
        return "; ".join(f"{view.plan['title'].split(': ', 1)[-1]}: {view.plan['max_rounds']} samples of "
                         f"{cells_of(view)[0]['runtime_s']:g} s" for view in views)
    if "sweep" in roles:
        return _sweep_loop(next(view for view in views if view.plan.get("role") == "sweep"))
    if "zones" in roles:
        zones = max(int(c.get("zones") or 1) for c in cells)
        return f"{zones} zones (outer to inner) x mixes {mixes} x {_workload(cells)}"
    return f"mixes (read/write) {mixes} x {_workload(cells)}"


def _wait_state_loop(views: Sequence[Any], mixes: str) -> str:
    """HIR: the baseline, then bursts and wait states per wait time, then continuous writes."""
    waits = [view for view in views if view.plan.get("role") == "wait-state"]
    bursts = [c for c in cells_of(waits[0]) if c.get("role") == "burst"]
    recovery = next((c for c in cells_of(waits[0]) if c.get("role") == "recovery"), None)
    seconds = ", ".join(f"{float((view.plan.get('meta') or {}).get('wait_s', 0)):g}" for view in waits)
    return (f"{mixes} random {bs_label(bursts[0]['bs_bytes'])} writes: steady state (baseline), then per wait "
            f"state ({seconds} s) "
            f"{len(bursts)} x ({bursts[0]['runtime_s']:g} s of writes + the wait state), then "
            f"{recovery['runtime_s'] if recovery else 0:g} s of continuous writes")


def _sweep_loop(sweep: Any) -> str:
    """CBW / DIRTH / ECW: a pre-write and the TC x QD grid per round, then the operating points."""
    from ptsbench.pts.cells import mix_label

    grid = [c for c in cells_of(sweep) if c.get("role", "") == ""]
    tcs = ",".join(str(tc) for tc in dict.fromkeys(c["numjobs"] for c in grid))
    qds = ",".join(str(qd) for qd in dict.fromkeys(c["iodepth"] for c in grid))
    prewrite = next((c for c in cells_of(sweep) if c.get("role") == "pre-write"), None)
    return (f"random, read/write {mix_label(grid[0]['read_pct'])}, {_workload(grid)}; each round a "
            f"{prewrite['runtime_s'] if prewrite else 0:g} s pre-write, then TC {tcs} x QD {qds} (from the "
            "highest outstanding IO down); then MaxIOPS, MidIOPS, MinIOPS: pre-write and histogram capture")


def pts_test_facts(context: PtsContext, test: str, views: Sequence[Any]) -> tuple[tuple[str, str], ...]:
    """The header facts PTS asks for on every page of a test."""
    settings = context.manifest.get("settings") or {}
    title, section = test_title(test, views, str(settings.get("spec")))
    return (
        ("test", title + (f"; {section}" if section else "")),
        ("specification", f"{SPEC_NAMES.get(str(settings.get('spec')), settings.get('spec'))}, "
                          f"{settings.get('profile')} profile ({settings.get('kind')})"),
        ("test date (UTC)", _dates_fact(views)),
        *_system_facts(context.manifest),
        *_method_facts(context, views),
        *_loop_facts(test, views),
    )


def _system_facts(manifest: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The platform, the test software and the device under test (with the user's description of it)."""
    from ptsbench.units import format_bytes

    host, target = manifest.get("host") or {}, manifest.get("target") or {}
    info = manifest.get("target_info") or {}
    rotational = target.get("rotational")
    capacity = int(info.get("size_bytes") or target.get("size_bytes") or 0)
    return (
        ("platform", f"{host.get('cpu_model', '-')} x {host.get('cpu_count', '-')}, "
                     f"{format_bytes(host['memory_bytes']) if host.get('memory_bytes') else '-'} memory, "
                     f"{host.get('os', '-')}, kernel {host.get('kernel', '-')}"),
        ("test software", f"ptsbench {manifest.get('ptsbench_version')}, {manifest.get('fio_version')}, "
                          f"ioengine {info.get('ioengine', '-')}"),
        ("device", device_name(target)),
        ("device description", device_description(manifest)),
        ("serial / firmware", f"{target.get('serial') or '-'} / {target.get('firmware') or '-'}"),
        ("capacity", f"{capacity / 1e9:,.3f} GB ({capacity:,} bytes)"),
        ("interface / media", f"{target.get('transport') or '-'} / "
                              f"{'-' if rotational is None else 'rotational' if rotational else 'solid state'}"),
        ("sectors", f"{info.get('logical_sector_bytes') or '-'} B logical, "
                    f"{info.get('physical_sector_bytes') or '-'} B physical"),
    )


def _active_range_fact(settings: Mapping[str, Any], active: Any, segments: Mapping[str, Any] | None) -> str:
    """'100 % (1,000.205 GB)', or the client's '75 % (... GB) in 2048 segments of ... bytes, one every ... bytes'."""
    text = f"{settings.get('active_range_pct', '-')} %" + (f" ({active / 1e9:,.3f} GB)" if active else "")
    if segments:
        text += (f" in {segments['count']} segments of {segments['size_bytes']:,} bytes, one every "
                 f"{segments['stride_bytes']:,} bytes from LBA 0")
    return text


def _method_facts(context: PtsContext, views: Sequence[Any]) -> tuple[tuple[str, str], ...]:
    """How the device was prepared and driven: purge, write cache, data, LBAs, active range, preconditioning."""
    manifest, settings = context.manifest, context.manifest.get("settings") or {}
    options = _job_options(context, views[0].key)
    active = context.plan.get("active_range_bytes")
    return (
        ("purge", _purge_fact(context, views)),
        ("write cache", _write_cache_fact(manifest)),
        ("data pattern", _data_pattern(options)),
        ("LBA generator", f"{options.get('random_generator') or 'fio default'}, seed per round "
                          f"(base seed {manifest.get('base_seed', '-')})"),
        ("active range", _active_range_fact(settings, active, context.plan.get("segments"))),
        ("preconditioning", _precondition_fact(context, views)),
    )


def _loop_facts(test: str, views: Sequence[Any]) -> tuple[tuple[str, str], ...]:
    """What the rounds ran, how many ran, and how the test ended."""
    cells = [c for view in views for c in cells_of(view)]
    depths = ", ".join(dict.fromkeys(f"TC{c['numjobs']}/QD{c['iodepth']}" for c in cells))
    round_times = ", ".join(dict.fromkeys(f"{c['runtime_s']:g} s" for c in cells))
    return (
        ("TC / QD", depths),
        ("round time", f"{round_times} per cell"),
        ("test loop", test_loop(test, views)),
        ("rounds", _rounds_fact(views)),
        ("steady state", _steady_fact(views)),
        ("stop", "; ".join(f"{v.plan['title']}: {v.result['stop_reason']}" for v in views if v.result) or
                 "not finished"),
    )


def reasons_for(reasons: Sequence[str], test: str, views: Sequence[Any], context: PtsContext) -> list[str]:
    """The compliance reasons that concern one test: its own ("IOPS: ...", "Host idle recovery, Cross stimulus
    recovery: ...", "Throughput 1m: ...") and the run-wide ones (no test named before the colon)."""
    from ptsbench.pts.specs import TEST_DEFS

    known = {d.title for d in TEST_DEFS.values()}
    known |= {str(phase["title"]).split(":")[0] for phase in context.plan.get("phases", [])}
    own = {test_title(test, views)[0]} | {str(view.plan["title"]).split(":")[0] for view in views}
    found = []
    for reason in reasons:
        names = {name.strip() for name in reason.split(":", 1)[0].split(",")} if ":" in reason else set()
        if names and names <= known and not names & own:
            continue
        found.append(reason)
    return found


def device_description(manifest: Mapping[str, Any]) -> str:
    """The user's description of the device (--device-info) as one line: 'form factor U.2, media TLC'."""
    described = ", ".join(f"{str(key).replace('_', ' ')} {value}"
                          for key, value in (manifest.get("device_info") or {}).items())
    return described or "not given (ptsbench pts --device-info KEY=VALUE)"
