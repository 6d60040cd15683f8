"""Which log files to plot: files, folders and glob patterns to runs (one log, or the per-job logs of one run)."""

import glob
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ptsbench.errors import PtsbenchError
from ptsbench.fio.logs import LOG_KINDS, parse_log_name
from ptsbench.textfile import not_found_reason


@dataclass(frozen=True)
class RunFiles:
    label: str
    kind: str | None  # None: the name does not say (the reader then asks for --kind)
    paths: tuple[Path, ...]


@dataclass(frozen=True)
class Found:
    runs: tuple[RunFiles, ...]
    left_out: tuple[str, ...]  # files a folder or pattern matched but that were not used, and why


def find_runs(inputs: Sequence[str], kind: str | None = None, pattern: str | None = None, per_job: bool = False,
              labels: Sequence[str] = ()) -> Found:
    """Expand LOG|GLOB|DIR arguments; group per-job logs (P_KIND.1.log, P_KIND.2.log, ...) into one run each."""
    if kind is not None and kind not in LOG_KINDS:
        raise PtsbenchError(f"unknown log kind {kind!r}", f"use one of {', '.join(LOG_KINDS)}")
    try:
        name_filter = re.compile(pattern) if pattern else None
    except re.error as error:
        raise PtsbenchError(f"--pattern {pattern!r} is not a regular expression: {error}", "fix the pattern") from None
    chosen: dict[Path, bool] = {}  # path -> named explicitly
    origin: dict[Path, int] = {}  # path -> the input that named it
    for index, text in enumerate(inputs):
        for path, explicit in _expand(text):
            chosen.setdefault(path, explicit)
            origin.setdefault(path, index)
    left_out: list[str] = []
    keep: list[Path] = []
    for path, explicit in chosen.items():
        name = parse_log_name(path)
        if kind is not None and name is not None and name.kind != kind:
            continue
        if name_filter is not None and not name_filter.search(path.name):
            continue
        if name is None and not explicit and kind is None:
            left_out.append(f"{path}: not a fio log name (name its kind with --kind to read it)")
            continue
        if not explicit and path.stat().st_size == 0:
            left_out.append(f"{path}: empty (fio logged nothing of this kind)")
            continue
        keep.append(path)
    if not keep:
        what = f" {kind}" if kind else ""
        if any(next(Path(text).rglob("*.json"), None) for text in inputs if Path(text).is_dir()):
            raise PtsbenchError(f"no fio{what} logs in {' '.join(inputs)}, but JSON files",
                                "add --json to draw fio's JSON output as bar charts")
        raise PtsbenchError(f"no fio{what} logs in {' '.join(inputs)}",
                            "pass log files, folders holding them or glob patterns (e.g. 'results/*_bw.*.log')")
    runs = _group(keep, kind, per_job)
    if labels and len(labels) == len(runs):
        runs = [RunFiles(label, run.kind, run.paths) for label, run in zip(labels, runs, strict=True)]
    elif labels and len(labels) == len(inputs):  # a label per folder (or pattern): each run named after its own
        per_input = [sum(origin[run.paths[0]] == index for run in runs) for index in range(len(inputs))]
        runs = [RunFiles(labels[origin[run.paths[0]]] if per_input[origin[run.paths[0]]] == 1
                         else f"{labels[origin[run.paths[0]]]}: {_short_label(run)}", run.kind, run.paths)
                for run in runs]
    elif labels:
        raise PtsbenchError(f"{len(labels)} labels for {len(runs)} runs ({', '.join(r.label for r in runs)}) from "
                            f"{len(inputs)} inputs", "give one --label per run or per input, in this order, or none")
    return Found(tuple(runs), tuple(left_out))


def _short_label(run: RunFiles) -> str:
    """A run's name within its folder: its logs' prefix."""
    name = parse_log_name(run.paths[0])
    return Path(name.prefix).name if name is not None and Path(name.prefix).name else run.label


def is_json_input(inputs: Sequence[str]) -> bool:
    """Whether `ptsbench plot` was given fio JSON output: every input a *.json file."""
    return bool(inputs) and all(Path(raw).suffix == ".json" and Path(raw).is_file() for raw in inputs)


def _expand(text: str) -> list[tuple[Path, bool]]:
    path = Path(text)
    if path.is_dir():
        return [(found, False) for found in sorted(path.rglob("*")) if found.is_file() and parse_log_name(found)]
    if path.is_file():
        return [(path, True)]
    if glob.has_magic(text):
        matches = sorted(Path(found) for found in glob.glob(text, recursive=True))
        files = [(found, False) for found in matches if found.is_file()]
        if files:
            return files
        raise PtsbenchError(f"{text}: no file matches", "check the pattern (quote it so the shell leaves it alone)")
    raise PtsbenchError(f"{text}: {not_found_reason(text)}", "pass fio log files, folders or glob patterns")


def _group(paths: list[Path], kind: str | None, per_job: bool) -> list[RunFiles]:
    groups: dict[tuple[str, ...], list[Path]] = {}
    for path in paths:
        name = parse_log_name(path)
        if name is None or name.job is None or per_job:
            key: tuple[str, ...] = ("file", str(path))
        else:
            key = ("run", name.prefix, name.kind, name.host or "")
        groups.setdefault(key, []).append(path)
    runs = []
    for members in groups.values():
        members.sort(key=lambda p: (job if (job := _job(p)) is not None else -1, str(p)))
        name = parse_log_name(members[0])
        run_kind = kind or (name.kind if name else None)
        runs.append(RunFiles(_label(members[0], per_job), run_kind, tuple(members)))
    runs.sort(key=lambda run: str(run.paths[0]))
    return _unique_labels(runs)


def _job(path: Path) -> int | None:
    name = parse_log_name(path)
    return name.job if name else None


def _label(path: Path, with_job: bool) -> str:
    name = parse_log_name(path)
    if name is None:
        return path.name
    label = Path(name.prefix).name
    if with_job and name.job is not None:
        label += f".{name.job}"
    return label + (f"@{name.host}" if name.host else "")


def _unique_labels(runs: list[RunFiles]) -> list[RunFiles]:
    """Labels that repeat (same prefix in several folders) get the folders that tell them apart."""
    counts: dict[tuple[str, str | None], int] = {}
    for run in runs:
        counts[run.label, run.kind] = counts.get((run.label, run.kind), 0) + 1
    if all(count == 1 for count in counts.values()):
        return runs
    parents = [run.paths[0].parent.resolve() for run in runs]
    common = Path(*Path(parents[0]).parts[:1])
    for depth in range(min(len(p.parts) for p in parents), 0, -1):
        candidate = Path(*parents[0].parts[:depth])
        if all(p.parts[:depth] == candidate.parts for p in parents):
            common = candidate
            break
    return [RunFiles(f"{parent.relative_to(common)}/{run.label}" if counts[run.label, run.kind] > 1 else run.label,
                     run.kind, run.paths) for run, parent in zip(runs, parents, strict=True)]
