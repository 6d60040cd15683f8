"""The series the exporter serves and the push sends, as plain data: from a stored run directory (run status, each
PTS test's round, steady state, write amplification and temperature of its last round, drops found, the catalog's
headline values) and from the streams a running run publishes (board.py: each job direction's last second).

The per-second values are drops/find.py's per_second arithmetic over the samples the run is gathering, worked out
for the last second only from the samples added since the previous scrape (seconds.py): the same numbers the run
stores as seconds.json, so a second served live equals that second read back from the store (except where later
intervals change which ones count, or the first second's span: docs/metrics.md). The newest sample
stays out until the next one arrives (per_second leaves a job's last interval out: it may be cut
short by the job's end), so a second is served about a second after it ends. Each carries its own time (when fio
wrote the status document), which Prometheus keeps as the sample's time.

exposition() writes samples in the OpenMetrics text format: a writer of its own, since prometheus_client's checks
every label name of every sample at every scrape (bench/README.md has both measured)."""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ptsbench.fio.intervals import P99_COLUMN, STATUS_TIME
from ptsbench.metrics.board import Stream
from ptsbench.metrics.seconds import LastSecond

PREFIX = "ptsbench_"


@dataclass(frozen=True)
class Metric:
    """One series family (a gauge): its name, with its unit, and what it says."""

    name: str
    help: str


SECOND_IOPS = Metric(PREFIX + "second_iops", "IOs per second in the last second of a job direction")
SECOND_BW = Metric(PREFIX + "second_bandwidth_bytes_per_second", "bytes per second in the last second of a job "
                   "direction")
SECOND_LAT = Metric(PREFIX + "second_latency_mean_seconds", "mean total latency of the IOs completed in the last "
                    "second of a job direction")
SECOND_P99 = Metric(PREFIX + "second_latency_p99_seconds", "99th percentile of the total latency of the IOs completed "
                    "in the last second of a job direction (measured while metrics are served or pushed)")
ETA = Metric(PREFIX + "eta_seconds", "time left by the plan (PTS: of the run, if every phase runs to its maximum "
             "round count; a case: of the case)")
RUN_STATUS = Metric(PREFIX + "run_status", "1 for the run's status now (running, done, failed, interrupted)")
ROUND = Metric(PREFIX + "round", "the PTS round under way, else the last stored one, per test")
STEADY = Metric(PREFIX + "steady_state", "1 when the test's last stored round reached steady state, else 0")
WAF = Metric(PREFIX + "round_write_amplification", "write amplification of the test's last stored round "
             "(media bytes over host bytes), where the device reports it")
TEMPERATURE = Metric(PREFIX + "round_temperature_celsius", "device temperature at the end of the test's last stored "
                     "round, where the device reports it")
DROPS = Metric(PREFIX + "drops_found", "drops found in the stored per-second data of the test's rounds or cases")
VALUE = Metric(PREFIX + "value", "a finished run's headline values as the catalog keeps them (IOPS, bytes/s, ns)")
METRICS = (SECOND_IOPS, SECOND_BW, SECOND_LAT, SECOND_P99, ETA, RUN_STATUS, ROUND, STEADY, WAF, TEMPERATURE, DROPS,
           VALUE)
STATUSES = ("running", "done", "failed", "interrupted")


@dataclass(frozen=True)
class Sample:
    metric: Metric
    labels: Mapping[str, str]
    value: float
    time_ms: int | None = None  # when it was measured, Unix ms (None: now)


@dataclass
class StoredRun:
    """What one stored run directory says (serve.py reads it again when it changes)."""

    root: Path
    device: dict[str, str] = field(default_factory=dict)  # device, model, serial, host (device_labels)
    samples: list[Sample] = field(default_factory=list)
    targets: list[dict[str, str]] = field(default_factory=list)  # each target's labels (target_labels)
    cases: dict[str, dict[str, str]] = field(default_factory=dict)  # a case run: each case's target's labels

    def device_of(self, stream: Stream) -> dict[str, str]:
        """The labels of the target a stream of this run measures."""
        return self.target(stream.labels.get("device"))

    def target(self, path: str | None) -> dict[str, str]:
        """The labels of the run's target `path` (else of its first)."""
        return next((labels for labels in self.targets if labels["device"] == path), self.device)


def target_labels(manifest: Mapping[str, Any]) -> list[dict[str, str]]:
    """device, model, serial and host of each target of a run, in the manifest's order (a PTS run has one)."""
    targets = [manifest.get("target")] if manifest.get("kind") == "pts" else list(manifest.get("targets") or [])
    host = str((manifest.get("host") or {}).get("hostname") or "")
    return [{"device": str(target.get("path") or ""), "model": str(target.get("model") or ""),
             "serial": str(target.get("serial") or ""), "host": host}
            for target in targets if isinstance(target, dict)] or [{"device": "", "model": "", "serial": "",
                                                                    "host": host}]


def device_labels(manifest: Mapping[str, Any], device: str | None = None) -> dict[str, str]:
    """The labels of the target `device` of a run (a case run's stream names it), else of its first target."""
    targets = target_labels(manifest)
    return next((labels for labels in targets if labels["device"] == device), targets[0])


def run_dirs(root: Path) -> list[Path]:
    """The run directories a folder holds: itself, or a fleet's parts (each a PTS run of its own)."""
    from ptsbench.pts.fleet import FLEET_KIND, fleet_parts
    from ptsbench.store import RunStore

    store = RunStore.open(root)
    return [folder.absolute() for _name, folder in fleet_parts(store)] if store.kind == FLEET_KIND \
        else [store.root.absolute()]


def read_stored(root: Path, drops_seen: dict[Path, int]) -> StoredRun:
    """A run directory's samples; `drops_seen` keeps each finished folder's drop count (they never change)."""
    from ptsbench.store import RunStore

    store = RunStore.open(root)
    manifest = store.manifest
    run = StoredRun(root, device_labels(manifest), targets=target_labels(manifest))
    status = str(manifest.get("status") or "")
    for name in STATUSES:
        run.samples.append(Sample(RUN_STATUS, {**run.device, "run": root.name, "status": name},
                                  float(status == name)))
    if store.kind == "pts":
        _pts_samples(store, run, drops_seen)
    else:
        _case_samples(store, run, drops_seen)
    if status == "done":
        run.samples.extend(_values(store, run))
    return run


def _values(store: Any, run: StoredRun) -> list[Sample]:
    """The catalog's values of a finished run, each labelled with the target of the case it names (none when they
    cannot be made: the rest of the run is still served)."""
    from ptsbench.catalog.values import run_values
    from ptsbench.errors import PtsbenchError

    try:
        values = run_values(store)
    except (PtsbenchError, KeyError, TypeError, ValueError):
        return []
    return [Sample(VALUE, {**run.cases.get(value.name.split("/", 1)[0], run.device), "name": value.name,
                           "quantity": value.quantity}, float(value.value)) for value in values]


def _folder_drops(folder: Path, record: Mapping[str, Any] | None, rule: Any, seen: dict[Path, int]) -> int:
    from ptsbench.drops.stored import folder_findings

    if folder not in seen:
        seen[folder] = len(folder_findings(folder, rule, record))
    return seen[folder]


def _pts_samples(store: Any, run: StoredRun, seen: dict[Path, int]) -> None:
    """Per phase (its key is the `test` label: iops, tp-128k, lat, lat-histogram; each has its own rounds and steady
    state): its last round, steady state, WAF and temperature, and the drops of all its rounds."""
    from ptsbench.drops.stored import stored_rule
    from ptsbench.pts.store import PtsStore
    from ptsbench.store import read_json

    pts = PtsStore(store)
    rule, _minimum = stored_rule(store.manifest)
    for phase in read_json(pts.root / "plan.json").get("phases") or []:
        key = str(phase["key"])
        rounds = pts.finished_rounds(key)
        if not rounds:
            continue
        drops = sum(_folder_drops(pts.round_dir(key, int(record["round"])), record, rule, seen) for record in rounds)
        last = rounds[-1]
        labels = {**run.device, "test": key}
        run.samples.append(Sample(ROUND, labels, float(last["round"])))
        run.samples.append(Sample(DROPS, labels, float(drops)))
        steady = last.get("steady") or {}
        if isinstance(steady.get("steady"), bool):
            run.samples.append(Sample(STEADY, labels, float(steady["steady"])))
        change = (last.get("telemetry") or {}).get("change") or {}
        in_round = {**labels, "round": str(last["round"])}
        if ((change.get("waf") or {}).get("ratio")) is not None:
            run.samples.append(Sample(WAF, in_round, float(change["waf"]["ratio"])))
        if change.get("temperature_end_c") is not None:
            run.samples.append(Sample(TEMPERATURE, in_round, float(change["temperature_end_c"])))


def _case_samples(store: Any, run: StoredRun, seen: dict[Path, int]) -> None:
    """Each finished case's drops, labelled with the target it measured."""
    from ptsbench.drops.stored import stored_rule
    from ptsbench.store import read_json

    rule, _minimum = stored_rule(store.manifest)
    # the case folders, not the manifest's list of cases: a sweep's manifest has none
    for folder in sorted(path.parent for path in (store.root / "cases").glob("*/result.json")):
        case = folder.name.split("-", 1)[-1]
        run.cases[case] = run.target(read_json(folder / "result.json").get("target"))
        run.samples.append(Sample(DROPS, {**run.cases[case], "test": case}, float(_folder_drops(folder, None, rule,
                                                                                             seen))))


SeriesKey = tuple[str, tuple[tuple[str, str], ...]]


@dataclass(frozen=True)
class Line:
    """A sample, which series it is, and its line in the answer: made once, served at every scrape until it
    changes."""

    sample: Sample
    key: SeriesKey
    text: str


@dataclass(frozen=True)
class LabelSet:
    """Labels, sorted as a series key has them, and their text in a line: made once for all samples that share
    them."""

    labels: Mapping[str, str]
    items: tuple[tuple[str, str], ...]
    text: str


def label_set(labels: Mapping[str, str]) -> LabelSet:
    items = tuple(sorted(labels.items()))
    return LabelSet(labels, items, ",".join(f'{key}="{_escaped(value)}"' for key, value in items))


def line_of(sample: Sample, labels: LabelSet | None = None) -> Line:
    """A sample's line; `labels`: its labels' LabelSet, when made already."""
    labels = labels or label_set(sample.labels)
    return Line(sample, (sample.metric.name, labels.items), sample_line(sample, labels.text))


@dataclass
class JobLines:
    """A live job's last second and its lines, kept from scrape to scrape; the stream is held, so that its id is not
    another's while kept."""

    stream: Stream
    last: LastSecond = field(default_factory=LastSecond)
    lines: list[Line] = field(default_factory=list)
    labels: dict[str, LabelSet] = field(default_factory=dict)  # direction -> its samples' labels


SecondsCache = dict[tuple[int, str], JobLines]  # (id of the stream, job) -> what is kept of it


def _stream_labels(stream: Stream, device: Mapping[str, str]) -> dict[str, str]:
    labels = {**device, **{key: value for key, value in stream.labels.items() if value}}
    labels.setdefault("round", "")
    return labels


def stream_lines(stream: Stream, device: Mapping[str, str], cache: SecondsCache) -> list[Line]:
    """A live stream's last second per job and direction, and the plan's time left. Only a job's samples added since
    the previous scrape are read, and its lines made again only when it has new ones (`cache`; a PTS round's
    finished cells stay as they were)."""
    labels = _stream_labels(stream, device)
    found = []
    for job in stream.samples.counts():
        kept = cache.get((id(stream), job))
        if kept is None or kept.stream is not stream:
            kept = cache[(id(stream), job)] = JobLines(stream)
        if kept.last.read(stream.samples, job):
            kept.lines[:] = _job_lines(kept, job, labels)
        found.extend(kept.lines)
    return found + [line_of(sample) for sample in stream_eta(stream, device)]


def stream_eta(stream: Stream, device: Mapping[str, str]) -> list[Sample]:
    """The plan's time left, where it is known."""
    eta = stream.eta_left_s()
    labels = {key: value for key, value in _stream_labels(stream, device).items() if key != "round"}
    return [] if eta is None else [Sample(ETA, labels, eta)]


def _second_samples(labels: Mapping[str, str], iops: float, bw: float, lat_ns: float | None, p99_ns: float | None,
                    time_ms: int | None) -> list[Sample]:
    """One second's samples of a job direction (none of a latency where no IO completed in it)."""
    return [Sample(metric, labels, value, time_ms) for metric, value in (
        (SECOND_IOPS, iops), (SECOND_BW, bw), (SECOND_LAT, None if lat_ns is None else lat_ns / 1e9),
        (SECOND_P99, None if p99_ns is None else p99_ns / 1e9)) if value is not None and value == value]


def _job_lines(kept: JobLines, job: str, labels: Mapping[str, str]) -> list[Line]:
    found = []
    for direction, second in kept.last.last(kept.stream.samples.fio_version).items():
        where = kept.labels.get(direction)
        if where is None:
            where = kept.labels[direction] = label_set(
                {**labels, "workload": kept.stream.job_labels.get(job, job), "direction": direction})
        found += [line_of(sample, where) for sample in _second_samples(
            where.labels, second.iops, second.bw, second.lat_ns, second.p99_ns, second.time_ms)]
    return found


# (id of the stream, job) -> the stream (held, so that its id is not another's while kept), the index of the job's
# last pushed document
PushedSeconds = dict[tuple[int, str], tuple[Stream, int]]


def stream_seconds(stream: Stream, device: Mapping[str, str], pushed: PushedSeconds) -> list[Sample]:
    """Every second of a stream's jobs not pushed yet (`pushed`), from per_second over each job's whole series (a
    push comes every few seconds: this is not the scrape's hot path)."""
    from ptsbench.drops.find import per_second

    labels = _stream_labels(stream, device)
    found = []
    for job in stream.samples.counts():
        kept = pushed.get((id(stream), job))
        after = kept[1] if kept is not None and kept[0] is stream else -1
        columns = stream.samples.job_columns(job)
        stamps = columns.get(STATUS_TIME) or []
        newest = after
        for direction, seconds in per_second(columns, stream.samples.fio_version, running=True).items():
            p99 = columns.get(P99_COLUMN.format(direction=direction)) or []
            where = {**labels, "workload": stream.job_labels.get(job, job), "direction": direction}
            for position, index in enumerate(int(index) for index in (seconds.sample if seconds.sample is not None
                                                                       else ())):
                if index > after:
                    stamp = stamps[index] if index < len(stamps) else None
                    lat = float(seconds.values["lat"][position])
                    found += _second_samples(where, float(seconds.values["iops"][position]),
                                             float(seconds.values["bw"][position]), None if lat != lat else lat,
                                             p99[index] if index < len(p99) else None,
                                             stamp if isinstance(stamp, int) else None)
                    newest = max(newest, index)
        pushed[(id(stream), job)] = (stream, newest)
    return found


def live_rounds(streams: Iterable[Stream], device_of: Mapping[Path, Mapping[str, str]]) -> list[Sample]:
    """The PTS round under way per test (it replaces the last stored one)."""
    return [Sample(ROUND, {**device_of[s.run_dir], "test": s.labels["test"]}, float(s.labels["round"]))
            for s in streams if s.run_dir in device_of and s.labels.get("round")]


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def sample_line(sample: Sample, labels: str) -> str:
    """One sample in the OpenMetrics text format, its labels' text given (its time, when it has one, in seconds to
    the millisecond)."""
    value = sample.value
    text = repr(float(value)) if value == value and abs(value) != float("inf") else \
        ("NaN" if value != value else ("+Inf" if value > 0 else "-Inf"))
    stamp = "" if sample.time_ms is None else f" {sample.time_ms // 1000}.{sample.time_ms % 1000:03d}"
    return f"{sample.metric.name}{{{labels}}} {text}{stamp}\n"


def exposition(lines: Iterable[Line]) -> str:
    """A whole answer: each metric's lines under its TYPE and HELP (families in METRICS order), then # EOF."""
    by_metric: dict[str, list[str]] = {}
    for line in lines:
        by_metric.setdefault(line.key[0], []).append(line.text)
    parts = []
    for metric in METRICS:
        if metric.name in by_metric:
            parts.append(f"# TYPE {metric.name} gauge\n# HELP {metric.name} {_escaped(metric.help)}\n")
            parts.extend(by_metric[metric.name])
    return "".join(parts) + "# EOF\n"
