"""report: a captured workload's statistics (characterisation.json) as tables, figures and a terminal summary."""

from collections.abc import Mapping
from typing import Any

from ptsbench.report.core.figure import Figure, Grid, Series
from ptsbench.report.core.model import Column, Report, Section, Table, Text
from ptsbench.units import format_bs, format_bytes


def summary_lines(found: Mapping[str, Any]) -> list[str]:
    """The characterisation in a few lines for the terminal."""
    lines = [f"{found['source']}: {found['event_count']:,} events, {found['io_count']:,} IOs, "
             f"{format_bytes(found['bytes'])}" + (f" in {found['duration_s']:.3f} s" if found["duration_s"] else "")]
    for name, part in found["directions"].items():
        common = sorted(part["sizes"], key=lambda pair: -pair[1])[:4]
        sizes = ", ".join(f"{format_bs(size)} x{count:,}" for size, count in common)
        lines.append(f"  {name:5s} {part['io_count']:>12,} IOs {format_bytes(part['bytes']):>11s}  sizes: {sizes}"
                     + (" ..." if len(part["sizes"]) > 4 else ""))
    if found["read_fraction"] is not None:
        lines.append(f"  read share {found['read_fraction']:.1%} of IOs")
    if found["streams"]:
        named = (f"{'seq' if stream['access'] == 'sequential' else 'rand'} {stream['direction']} "
                 f"{format_bs(stream['size_bytes'])} {stream['share']:.1%}" for stream in found["streams"][:5])
        lines.append("  top IO streams: " + ", ".join(named))
    locality = found.get("locality")
    if locality:
        lines.append(f"  locality: {format_bytes(locality['high_bytes'] - locality['low_bytes'])} span, "
                     f"{locality['sequential_fraction']:.1%} sequential, hottest tenth of the span holds "
                     f"{locality['hottest_tenth_fraction']:.1%} of IOs")
    gaps = found.get("inter_arrival_us")
    if gaps:
        lines.append(f"  inter-arrival: mean {gaps['mean']:.1f} us, p50 {gaps['p50']:.1f} us, p99 {gaps['p99']:.1f} us")
    held = found.get("outstanding")
    if held:
        idle = held["idle"]
        lines.append(f"  outstanding IOs: mean {held['mean']:.2f}, max {held['max']}; idle {idle['fraction']:.1%} "
                     f"of the time in {idle['count']:,} periods" if held["mean"] is not None else "")
    return [line for line in lines if line]


def workload_sections(found: Mapping[str, Any]) -> tuple[Section, ...]:
    """The sections of a characterisation: mix and sizes, streams, time (pace, outstanding, idle), locality."""
    directions = found["directions"]
    sizes = Table("io_sizes", "IO sizes by direction",
                  (Column("direction"), Column("size (bytes)", "int"), Column("IOs", "int"),
                   Column("share of direction (%)", "number")),
                  tuple((name, size, count, 100 * count / part["io_count"]) for name, part in directions.items()
                        for size, count in part["sizes"]), keys=(0, 1))
    streams = Table("io_streams", "Top IO streams (direction, size, access)",
                    (Column("direction"), Column("size (bytes)", "int"), Column("access"), Column("IOs", "int"),
                     Column("share of IOs (%)", "number")),
                    tuple((s["direction"], s["size_bytes"], s["access"], s["io_count"], 100 * s["share"])
                          for s in found["streams"]), keys=(0, 1, 2))
    size_figure = Figure("io_sizes", "IOs by size and direction", "IO size (bytes)", "IOs",
                         tuple(Series(name, tuple(size for size, _ in part["sizes"]),
                                      tuple(count for _, count in part["sizes"]), mode="bars")
                               for name, part in found["directions"].items()), x_log=True,
                         caption="How many IOs of each size the trace holds, per direction.")
    blocks: list[Any] = [Text(summary_lines(found)[0]), sizes, size_figure, streams]
    time_blocks = _time_blocks(found)
    sections = [Section("workload", "Workload: sizes and streams", blocks=tuple(blocks))]
    if time_blocks:
        sections.append(Section("workload_time", "Workload over time", blocks=tuple(time_blocks)))
    if found.get("locality"):
        sections.append(_locality_section(found["locality"]))
    return tuple(sections)


def _time_blocks(found: Mapping[str, Any]) -> list[Any]:
    blocks: list[Any] = []
    mix = found.get("mix")
    if mix:
        step = mix["slice_s"]
        series = tuple(Series(f"{name} IOPS", tuple(index * step for index in range(len(mix[f"{name}_ios"]))),
                              tuple(count / step for count in mix[f"{name}_ios"]), mode="lines")
                       for name in ("read", "write", "trim") if f"{name}_ios" in mix)
        blocks.append(Figure("workload_mix", "Read/write mix over time", "time (s)", "IOs per second", series,
                             caption=f"IOs per direction in each {step} s of the trace."))
    rows = [(label, *(values.get(key) for key in ("mean", "p50", "p90", "p99", "p99.9", "max")))
            for label, values in (("inter-arrival (us)", found.get("inter_arrival_us")),
                                  ("idle period (us)", (found.get("outstanding") or {}).get("idle", {}).get("us")))
            if values]
    if rows:
        blocks.append(Table("workload_times", "Inter-arrival and idle times (us)",
                            (Column("time"), *(Column(name, "number") for name in
                                               ("mean", "p50", "p90", "p99", "p99.9", "max"))), tuple(rows)))
    held = found.get("outstanding")
    if held and held["time_fraction"]:
        blocks.append(Table("outstanding", "IOs outstanding at the device (share of the traced time)",
                            (Column("IOs outstanding", "int"), Column("share of time (%)", "number")),
                            tuple((level, 100 * share) for level, share in held["time_fraction"])))
    return blocks


def _locality_section(locality: Mapping[str, Any]) -> Section:
    heat = locality["heat"]
    band_bytes = (locality["high_bytes"] - locality["low_bytes"]) / heat["lba_bins"]
    slice_s = heat["slice_s"]
    grid = Grid(tuple(f"{index * slice_s:.3g} s" if slice_s else "all" for index in range(heat["time_slices"])),
                tuple(format_bytes(locality["low_bytes"] + index * band_bytes) for index in range(heat["lba_bins"])),
                tuple(tuple(row) for row in heat["counts"]))
    figure = Figure("lba_heat", "LBA heat map", "time", "offset", grid=grid, kind="heatmap", z_label="IOs",
                    caption="IOs per address band (rows, from the lowest offset the trace reaches) and time slice.")
    facts = (("address span", format_bytes(locality["high_bytes"] - locality["low_bytes"])),
             ("sequential IOs", f"{locality['sequential_fraction']:.1%}"),
             ("IOs in the hottest tenth of the span", f"{locality['hottest_tenth_fraction']:.1%}"))
    return Section("locality", "Locality", facts=facts, blocks=(figure,))


def workload_report(manifest: Mapping[str, Any], found: Mapping[str, Any], in_progress: str | None = None) -> Report:
    """The report of a capture run directory."""
    from ptsbench.report.common import environment_section, provenance_line, run_facts

    facts = run_facts(manifest) + tuple((key.replace("_", " "), str(manifest[key])) for key in
                                        ("device", "duration_s", "event_count", "dropped_events")
                                        if manifest.get(key) is not None)
    warnings = (f"the kernel dropped {manifest['dropped_events']:,} trace events: the trace misses IOs",) \
        if manifest.get("dropped_events") else ()
    return Report(f"Workload {manifest.get('name', '')}", provenance_line(manifest), facts,
                  (*workload_sections(found), environment_section(manifest)), in_progress, warnings)


def replay_sections(comparison: Mapping[str, Any], found: Mapping[str, Any] | None,
                    steady: Mapping[str, Any] | None) -> tuple[Section, ...]:
    """The sections a replay adds to its run's report: what fio did beside what the trace holds, the steady-state
    rounds (replay --steady), and the replayed trace's own statistics."""
    from ptsbench.workload.replayed import pace_line

    rows = tuple((row["direction"], row["trace_ios"], row["replay_ios"], row["trace_bytes"], row["replay_bytes"])
                 for row in comparison["rows"])
    table = Table("replay_vs_trace", "Replay against the trace (IOs and bytes per direction)",
                  (Column("direction"), Column("trace IOs", "int"), Column("replay IOs", "int"),
                   Column("trace bytes", "int"), Column("replay bytes", "int")), rows)
    verdict = {"same": "The replay issued the trace's IOs: the same IO count in every direction",
               "different": "The replay differs from the trace"}.get(comparison.get("verdict", ""))
    said = pace_line(comparison)
    pace = Text(f"{said[0].upper()}{said[1:]}.")
    notes = tuple(Text(f"{note}.") for note in (verdict, *comparison.get("notes", ())) if note)  # fio's: lower case
    sections = [Section("replay", "Replay against the trace", blocks=(table, *notes, pace))]
    if steady:
        sections.append(_steady_section(steady))
    return (*sections, *(workload_sections(found) if found else ()))


def _steady_section(steady: Mapping[str, Any]) -> Section:
    rounds = tuple(range(1, steady["rounds"] + 1))
    table = Table("replay_rounds", "Replay rounds: IOPS and mean latency",
                  (Column("round", "int"), Column("IOPS", "iops"), Column("mean latency (µs)", "us")),
                  tuple((number, iops, lat / 1e3 if lat is not None else None)
                        for number, iops, lat in zip(rounds, steady["iops"], steady["mean_lat_ns"], strict=True)))
    figure = Figure("replay_rounds", "IOPS per replay round", "round", "IOPS",
                    (Series("IOPS", rounds, tuple(steady["iops"])),),
                    caption="Each round replays the whole trace; the PTS criterion judges the last 5 rounds.")
    verdict = (f"Steady state (PTS criterion on IOPS and mean latency) in rounds {steady['window'][0]}-"
               f"{steady['window'][-1]}." if steady["steady"] else f"Not steady after {steady['rounds']} rounds.")
    deviations = Text("Follows the SNIA RWSW technical position, with these deviations: "
                      + "; ".join(steady["deviations"]) + ".")
    written = steady.get("precondition_written_bytes")
    preconditioned = (Text(f"Preconditioned before round 1: fio wrote {format_bytes(written)} sequentially in 128 "
                           "KiB writes, the whole target twice (RWSW's workload-independent preconditioning)."),) \
        if written is not None else ()
    purge = steady.get("purge")
    purged = (Text(f"Before the preconditioning, purge method {purge['method']}: {purge['message']}."),) \
        if purge else ()
    return Section("replay_steady", "RWSW steady state",
                   blocks=(Text(verdict), *purged, *preconditioned, table, figure, deviations))
