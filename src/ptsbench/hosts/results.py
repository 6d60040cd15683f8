"""Per-host results of a case: each host's status (what fio said about a host that dropped off) and the all-hosts
aggregate (fio's group arithmetic: IOs over the longest runtime, latency merged exactly from the hosts' bins)."""

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ptsbench.fio.output import DIRECTIONS, JobResult, merge_directions, percentile_key
from ptsbench.hosts.hostlist import Host, is_problem_line

ALL_HOSTS = "all hosts"


@dataclass(frozen=True)
class HostStatus:
    """How one host ended a case: 'ok' or 'failed', with fio's words about it."""

    host: str
    status: str
    message: str = ""


def host_lines(text: str, host: Host) -> list[str]:
    """fio client lines that name one host (e.g. 'client: host=10.0.0.2 disconnected')."""
    pattern = re.compile(rf"(?<![\w.:]){re.escape(host.name)}(?![\w.])")
    return [line.strip() for line in text.splitlines()
            if pattern.search(line) and not line.lstrip().startswith(("{", '"')) and is_problem_line(line)]


def host_statuses(hosts: Sequence[Host], results: Sequence[JobResult], fio_text: str,
                  jobs: Mapping[str, Collection[str]] | None = None) -> list[HostStatus]:
    """A host is failed when it returned fewer job results than the others (or than its own job file's `jobs`,
    by host name, when hosts ran different job files), or fio reported a problem with it."""
    names_per_host: dict[str, set[tuple[int, str] | str]] = {}
    for result in results:
        names_per_host.setdefault(result.hostname or "", set()).add(
            result.name if jobs is not None else (result.groupid, result.name))
    every = set().union(*names_per_host.values()) if names_per_host else set()
    statuses = []
    for host in hosts:
        said = host_lines(fio_text, host)
        got = names_per_host.get(host.name, set())
        expected: set[tuple[int, str] | str] = set(jobs[host.name]) if jobs is not None else every
        if said or got != expected or not expected:
            missing = "" if got == expected and got else "no results; " if not got else \
                f"results for {len(got)} of {len(expected)} jobs; "
            fio_words = " | ".join(said[:3]) or "no message about this host"
            statuses.append(HostStatus(host.name, "failed", f"{host.label}: {missing}fio: {fio_words}"))
        else:
            statuses.append(HostStatus(host.name, "ok"))
    return statuses


def job_keys(results: Sequence[JobResult]) -> list[tuple[int, str, int]]:
    """Each result's job across hosts: its group, its name and which job of that name it is on its host (two job
    sections of one name are two jobs, on every host in the same order)."""
    seen: dict[tuple[str | None, int, str], int] = {}
    keys = []
    for result in results:
        on_host = (result.hostname, result.groupid, result.name)
        seen[on_host] = seen.get(on_host, -1) + 1
        keys.append((result.groupid, result.name, seen[on_host]))
    return keys


def aggregate_hosts(results: Sequence[JobResult], label: str = ALL_HOSTS) -> list[JobResult]:
    """One result per job over all hosts, with fio's group arithmetic (as its All clients entry): IOs summed over the
    longest runtime, latency merged from the bins."""
    by_job: dict[tuple[int, str, int], list[JobResult]] = {}
    for key, result in zip(job_keys(results), results, strict=True):
        by_job.setdefault(key, []).append(result)
    merged = []
    for parts in by_job.values():
        directions = []
        for name in (*DIRECTIONS, "total"):
            found = [d for part in parts for d in part.directions if d.direction == name]
            if found:
                directions.append(merge_directions(name, found))
        merged.append(replace(
            parts[0], hostname=label, directions=tuple(directions), error=max(part.error for part in parts),
            usr_cpu=sum(part.usr_cpu for part in parts), sys_cpu=sum(part.sys_cpu for part in parts),
        ))
    return merged


def all_clients_mismatches(doc: Mapping[str, Any], results: Sequence[JobResult]) -> list[str]:
    """Compare our merge of every host job with fio's own 'All clients' entry (which sums all jobs of all hosts).

    Checked: IO counts and bytes, latency sample count, min, max and mean, and percentiles when fio gives them.
    Empty when they agree or fio gave no such entry.
    """
    entry = next((e for e in doc.get("client_stats", []) if e.get("jobname") == "All clients"), None)
    if entry is None:
        return []
    problems = []
    for name in DIRECTIONS:
        theirs = entry.get(name) or {}
        ours = [d for result in results for d in result.directions if d.direction == name]
        if not ours and not theirs.get("total_ios"):
            continue
        if not ours:
            problems.append(f"{name}: fio's All clients has {theirs.get('total_ios')} IOs, the hosts none")
            continue
        merged = merge_directions(name, ours)
        lat = theirs.get("lat_ns") or {}
        pairs: list[tuple[str, float | None, Any]] = [
            ("total_ios", merged.total_ios, theirs.get("total_ios")),
            ("io_bytes", merged.io_bytes, theirs.get("io_bytes")),
            ("lat N", merged.lat.n, lat.get("N")), ("lat min", merged.lat.min_ns, lat.get("min")),
            ("lat max", merged.lat.max_ns, lat.get("max")),
        ]
        pairs += [(f"lat p{percentile_key(key)}", merged.lat.percentiles_ns.get(percentile_key(key)), value)
                  for key, value in (lat.get("percentile") or {}).items()]
        problems += [f"{name} {what}: {mine} here, {fio} in fio's All clients" for what, mine, fio in pairs
                     if fio is not None and mine != fio]
        mean = lat.get("mean")
        if mean is not None and abs(merged.lat.mean_ns - mean) > 1e-6 * max(abs(mean), 1.0):
            problems.append(f"{name} lat mean: {merged.lat.mean_ns} here, {mean} in fio's All clients")
    return problems


@dataclass(frozen=True)
class HostOutcome:
    """What a multi-host case adds to its record."""

    jobs: list[JobResult]  # per job: each host in --hosts order, then the all-hosts merge
    statuses: list[HostStatus]
    problem: str  # empty when every host finished


def host_outcome(hosts: Sequence[Host], results: Sequence[JobResult], doc: Mapping[str, Any] | None,
                 fio_text: str) -> HostOutcome:
    """Per-host status and the all-hosts aggregate of one case (over the hosts that finished)."""
    statuses = host_statuses(hosts, results, fio_text)
    failed = [status for status in statuses if status.status != "ok"]
    finished = {status.host for status in statuses if status.status == "ok"}
    kept = [result for result in results if result.hostname in finished]
    label = ALL_HOSTS if not failed else f"{len(finished)} of {len(hosts)} hosts"
    aggregates = aggregate_hosts(kept, label) if kept and len(hosts) > 1 else []
    problem = "; ".join(status.message for status in failed)
    if not failed and doc is not None:
        mismatches = all_clients_mismatches(doc, kept)
        if mismatches:
            problem = "the all-hosts merge disagrees with fio's All clients: " + "; ".join(mismatches)
    host_order = {host.name: index for index, host in enumerate(hosts)}
    every = [*results, *aggregates]
    keys = job_keys(every)
    job_order: dict[tuple[int, str, int], int] = {}
    for key in keys:
        job_order.setdefault(key, len(job_order))
    ordered = sorted(zip(keys, every, strict=True),
                     key=lambda pair: (job_order[pair[0]], host_order.get(pair[1].hostname or "", len(host_order))))
    return HostOutcome([result for _, result in ordered], statuses, problem)
