"""The PTS run directory: what a PTS run keeps, written so that a kill at any moment loses at most the current round.

Layout (inside a RunStore whose manifest has kind "pts"):
  manifest.json        kind "pts"; settings (profile, spec, tests, per-test parameters; `advanced`: per advanced
                       test its AdvancedParams fields, see params.py); target (facts, size, sector sizes,
                       ioengine and how it was chosen); base_seed; write_cache (wanted, before, after, message,
                       per start/resume; on a drive whose cache ptsbench sets also controller, original (what
                       the last run out puts back) and shared_with (the runs it joined); device/controller.py);
                       write_cache_rounds (phase, round, wanted, read: the cache read at every round's end);
                       write_cache_restored (to, done, action "restored" | "kept" | "left", message: at the
                       end, also of a failed or interrupted run); compliance {compliant, reasons}; notes;
                       status ("running" | "interrupted" | "failed" | "done"); scratch (true when the target is
                       a scratch file ptsbench made in the run directory); operating_points (CBW/DIRTH/ECW,
                       written when the sweep phase ends, before the points run): {test: {phase (the sweep's key),
                       window_rounds (the sweep rounds whose averages chose them), limit_ns (5 ms), middle_iops
                       ((Max + Min) / 2, null without MaxIOPS), note (null, or why only MinIOPS runs), points:
                       {max, mid, min: {name, tc, qd, iops, lat_mean_ns} (the sweep cell's window averages) or
                       null}}}
  plan.json            the plan: active range, alignment, pending_points (demand tests whose points are not chosen
                       yet), and per phase its key, test, title, role and meta (see below), cells (name, role,
                       pattern, read %, block size, TC, QD, runtime, extra fio options; HDD cells add zone
                       (0 = lowest LBAs) and zones), skipped cells, tracked variables, preconditioning, stop rule
                       (kind "steady" | "written" | "rounds"), max_rounds, round_s. Written again when operating
                       points are chosen and at every start (so it always matches the manifest)
  plan.txt             the plan as printed before the run
  pts/PHASE/           one folder per phase, in run order: iops, tp-1m, tp-128k, lat, wsat; hir-ss, hir-w5s ...
                       hir-w50s; xsr-1, xsr-2, xsr-3; cbw-wdpc, cbw, cbw-max, cbw-mid, cbw-min (dirth-*, ecw-*
                       alike); hdd-iops; hdd-tp
    purge.json         list of purge attempts: method, command lines, ok, message, is_deviation, utc times
    precondition/      job.fio, command.txt, fio.json (json+), fio.stderr of the preconditioning run;
      result.json      written last: bytes written, runtime, bandwidth. Present = preconditioning completed
    rounds/NNN/        job.fio, command.txt, fio.json, fio.stderr of round NNN (1-based). A chained round (see
                       pts/handoff.py) runs one fio process per job of job.fio (command.txt: one line each) and
                       keeps fio-NN.json / fio-NN.stderr of each until the round is complete; fio.json is then
                       every process's document merged into one
      fio-NN.json      while the round runs (local runs): job NN of job.fio (00 = the first) as fio reported it,
                       written once, when that job finished (chained: its process's own document as it exits;
                       stonewalled: its entries from fio's status document as the next job started); removed once
                       fio.json holds the whole round. Runs stored before this layout kept cells.partial.json
                       instead (every finished job so far, rewritten per job). Nothing reads either: resume sets an
                       unfinished round aside whole and runs it again
      round.json       written last, atomically: seed, utc times, wall and CPU time, per-cell results (see
                       cell_record in records.py), the sequential start/end offsets, WSAT running totals, the
                       steady-state determination after this round, and handoff: way ("chained" | "stonewall"),
                       text (as the plan says it), gaps_ms (chained: per hand-off, the relay's time from the last
                       thread's end to the next job's first start; null when not measured), max_gap_ms,
                       startups_s (chained: per hand-off, the next job's fio start-up, from its start to all its
                       threads at the gate; it sets how far ahead fio is started, fio/chain.py), notes.
                       Present = round finished
    rounds/NNN.interrupted-K/   a round that was killed part-way (kept for the record, never used)
    phase.json         written when the phase ends: stop reason, rounds run, steady state reached, window
                       rounds, the determination per tracked variable, and the window averages of every cell
Every file goes through atomic_write_* (temporary file, fsync, rename, fsync of the folder).

A run on hosts (`ptsbench pts TARGET --hosts HOSTS --size SIZE`) keeps the same layout, with:
  manifest.json        hosts: every host's pre-flight facts in --hosts order ({host, port, fio_version, hostname,
                       os, arch, targets: [{path, kind, disks (fio's disk_util names), size_checked_bytes (a block
                       device: fio read its byte at --size - 1)}]}, hosts.HostInfo); target: hosts.remote_target_facts
                       (kind, path, size_bytes = --size, size_source, hosts: what fio said per host, for the report);
                       target_info.size_bytes is --size; purge_method "none"
  purge.json           method "none (remote hosts)", is_deviation true (no purge tool runs on a remote path)
  precondition/result.json   adds hosts: {host: bytes written there}; written_bytes is the sum
  rounds/NNN/          one fio client process per round (command.txt: --client=HOST JOB for every host, so every
                       host starts together and the round ends when the last host is done); job.fio when every
                       host runs the same job, else job-HOST.fio each (sequential cells carry on per host);
                       fio.json holds one entry per host job (client_stats, `hostname` = the host as given)
    round.json         cells: ALL HOSTS: per cell and direction the hosts' results merged (IOPS, bw_bytes,
                       io_bytes, total_ios summed; runtime_ms the longest; latency merged exactly from every host's
                       json+ bins, never averaged); no seq_start/end_bytes. hosts: {host: {cells (as a local
                       run's, seq offsets included), steady (that host's own determination), wsat (its own
                       totals)}}. steady: every host's variables, labelled "HOST CELL METRIC" and carrying host;
                       steady true when every host is steady. wsat: the all-hosts totals (the phase stops when
                       every host has written its multiple of the capacity). telemetry before/after "not
                       available" (the device is remote); cpu is the controller's
    failed.json        a round (or preconditioning) a host dropped out of: what, finished_utc, hosts: [{host,
                       status "ok" | "failed", message (fio's words)}], kept: {host: cells} of the hosts that
                       finished. No round.json: resume sets the folder aside as NNN.interrupted-K and runs the
                       round again
  phase.json           steady, determination, window: all hosts (as in round.json); hosts: {host: {steady,
                       determination, window (that host's averages, percentiles from its own bins), wsat}}
  store.host_round and store.host_phase_result give a round or phase as one host saw it.

round.json in detail:
  round, phase, seed (fio randseed), started_utc, finished_utc, wall_s (fio process), ptsbench_cpu_s (our own CPU
  during the round), fio_version,
  cells: {cell name: {name, pattern ("rnd"|"seq"), read_pct, bs_bytes, numjobs (TC), iodepth (QD), runtime_s
          (planned), jobs (fio job names; a sequential cell continuing mid-slice has parts "-a" and "-b"), error,
          usr_cpu, sys_cpu (fio's own CPU %), iodepth_level (fio's IO depth distribution: {bucket: % of IOs},
          jobs averaged; null when fio gave none), qd_reached_pct (% of IOs submitted at the planned QD's bucket or
          deeper), read / write / total: {iops, bw_bytes, io_bytes, total_ios, runtime_ms, lat_n,
          lat_mean_ns, lat_min_ns, lat_max_ns, lat_percentiles_ns {"50" ... "99.999"}, lat_beyond {percentile: IOs
          slower than it, from fio's json+ bins}} or null, and the total's
          iops, bw_bytes, lat_mean_ns, lat_max_ns at top level; sequential cells add seq_start_bytes and
          seq_end_bytes (position within each thread's slice of the active range)}}
          latency is fio's total latency (lat_ns), parts and threads merged exactly from json+ bins
  host_bound: {host_cpu_busy_pct, fio_cpu_pct {cell: usr + sys %}, qd_not_reached {cell: qd_reached_pct},
          possibly (true: host CPU saturated or a planned QD not reached, pts/hostbound.py RULE), reasons}
  wsat (write saturation only): {written_bytes, io_time_s} running totals including this round
  steady: {window_rounds, steady, variables: {"CELL METRIC": steady.SteadyState.to_dict() + cell, metric, or null
          before the 5th round}, rounds_needed (before the 5th round)}
  telemetry: {before, after: one reading each (device/telemetry.py TELEMETRY_KEYS: source, device, command, note
          ("not available: ..." when the device or tools do not say), temperature_c, temperature_k,
          critical_warning, warning_temp_time_min, critical_temp_time_min, thm_temp1/2_trans_count,
          thm_temp1/2_total_time_s, media_errors, data_units_written, data_written_bytes, media_written_bytes,
          fdp_host_written_bytes, media_erased_bytes, media_source "OCP C0h" | "FDP statistics", media_note,
          latency_monitor (OCP C3h active bucket counters {bucket: {read, write, trim}}),
          latency_monitor_thresholds_ms, latency_monitor_config, latency_monitor_note, latency_monitor_order
          (the counters' order decoded and why: device/latency_log.py), latency_monitor_set
          (what --latency-monitor set: thresholds_ms, bucket_timer_threshold_min, enable, note why not in
          force; null when not asked); null = unknown), change: telemetry_change (counter increases,
          temperature_start_c / _end_c, throttled true | false | null, waf: device/waf.py write_amplification:
          host_written_bytes, media_written_bytes, ratio, source, host_unit_bytes, host_counter, note saying why
          ratio is null; latency_monitor: the C3h counters' increase {bucket: {read, write, trim}} or null with
          latency_monitor_note; error_log_new: the NVMe error log's entries new over the round), monitor_host:
          the host's side of the C3h counters, null when the drive gave no increase ({thresholds_ms: A-D, read /
          write / trim: the round's IOs at or above each threshold in fio's json+ bins, ramp_time_s};
          catalog/monitor_host.py), cpu: host CPU during
          the fio process (busy_pct, user_pct, system_pct, iowait_pct, steal_pct, idle_pct of all CPUs, interval_s,
          cpu_count)}.
          "before" is the previous round's "after" when nothing ran in between (no purge or preconditioning)
  cells also carry role and, for HDD cells, zone and zones; a cell with role "histogram" (an operating point's
  capture) adds histogram: {edges_ns (bucket lower edges, the last bucket open-ended), counts, n, mean_ns, max_ns,
  percentiles_ns} of its total latency (pts/advanced.py response_histogram, from fio's json+ bins)
phase.json window: {cell name: {iops, bw_bytes, lat_mean_ns, read_/write_ iops, bw_bytes, lat_mean_ns (averages
  over the window rounds), lat_max_ns (maximum), lat_percentiles_ns (all window IOs, merged from fio's bins),
  lat_n (those IOs), lat_beyond (per percentile, the window IOs slower than it)}};
  a fixed-schedule phase (stop kind "rounds": HIR wait states, XSR groups, operating points, HDD zones) averages
  all its rounds and has steady null

Phase roles and meta (plan.json), cell roles (plan.json and round.json) of the advanced tests:
  HIR      hir-ss role "baseline" (1 cell, tracked IOPS = the baseline); hir-wN role "wait-state", meta {wait_s}:
           one round of cells "burst" (k-th starting at k x (burst + wait) s, fio startdelay) and one "recovery"
  XSR      xsr-N role "group", meta {group}: one cell, one round per throughput sample (round wall_s add up to
           the time axis)
  CBW, DIRTH, ECW   KEY-wdpc role "precondition"; KEY role "sweep": cell 1 "pre-write", then the TC x QD cells
           (role "", numjobs = TC, iodepth = QD); KEY-max/-mid/-min role "point", meta {point, tc, qd}: a
           "pre-write" cell and a "histogram" cell
  HDD      hdd-iops, hdd-tp role "zones", meta {zones}: one round, cells with zone
"""

import fcntl
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ptsbench.atomic import atomic_write_json
from ptsbench.errors import StoreError
from ptsbench.store import RunStore, read_json, utc_now

PTS_DIR = "pts"
ROUND_FILE = "round.json"
PHASE_FILE = "phase.json"
PRECONDITION_DONE = "result.json"
FAILED_FILE = "failed.json"
LOCK_FILE = ".lock"


def host_round(record: Mapping[str, Any], host: str) -> dict[str, Any]:
    """A round record of a run on hosts as one host saw it: its own cells, steady state and WSAT totals."""
    return {**record, **record["hosts"][host]}


def host_phase_result(result: Mapping[str, Any], host: str) -> dict[str, Any]:
    """A phase summary of a run on hosts as one host saw it: its own steady state, determination and window."""
    return {**result, **result["hosts"][host]}


class PtsStore:
    """The PTS part of a run directory."""

    def __init__(self, store: RunStore) -> None:
        self.store = store
        self.root = store.root.absolute()  # absolute job paths: orphan fio processes are found by them

    def phase_dir(self, phase_key: str) -> Path:
        return self.root / PTS_DIR / phase_key

    def check_readable(self) -> None:
        """Read everything stored (plan, and every phase's rounds and results): StoreError naming the first damaged
        or missing file, before a resume changes anything."""
        plan = read_json(self.root / "plan.json")
        planned = [phase.get("key") for phase in plan.get("phases", []) if isinstance(phase, dict)] \
            if isinstance(plan, dict) else []
        stored = [path.name for path in (self.root / PTS_DIR).glob("*") if path.is_dir()]
        for key in dict.fromkeys([*(str(key) for key in planned if key), *sorted(stored)]):
            self.finished_rounds(key)
            self.precondition_result(key)
            self.purge_attempts(key)

    def rounds_dir(self, phase_key: str) -> Path:
        return self.phase_dir(phase_key) / "rounds"

    def round_dir(self, phase_key: str, round_number: int) -> Path:
        return self.rounds_dir(phase_key) / f"{round_number:03d}"

    def precondition_dir(self, phase_key: str) -> Path:
        return self.phase_dir(phase_key) / "precondition"

    def finished_rounds(self, phase_key: str) -> list[dict[str, Any]]:
        """Stored round records 1..n (stops at the first round without round.json). The phase's record is read first:
        a run going on writes it after its last round.json, so a reader (a live report) that read the rounds first
        could find the phase's count ahead of the rounds it saw."""
        phase = self.phase_result(phase_key)
        rounds = []
        number = 1
        while (path := self.round_dir(phase_key, number) / ROUND_FILE).exists():
            rounds.append(_round_record(path, number))
            number += 1
        later = sorted(path.parent.name for path in self.rounds_dir(phase_key).glob(f"*/{ROUND_FILE}")
                       if path.parent.name.isdigit() and int(path.parent.name) > number)
        recorded = phase.get("rounds") if isinstance(phase, dict) else None
        if later or (isinstance(recorded, int) and recorded > len(rounds)):
            stored = f"rounds {', '.join(later)} are stored" if later else f"{phase_key}/{PHASE_FILE} says " \
                f"{recorded} rounds ran"
            raise StoreError(f"{self.rounds_dir(phase_key) / f'{number:03d}' / ROUND_FILE} is missing but {stored}",
                             "restore the round from a copy: the test's averages and steady state need every round")
        return rounds

    def set_aside_interrupted(self, phase_key: str, next_round: int) -> list[Path]:
        """Rename unfinished round folders (a kill mid-round) so the round can run again; nothing is deleted."""
        moved: list[Path] = []
        rounds_dir = self.rounds_dir(phase_key)
        if not rounds_dir.is_dir():
            return moved
        for path in sorted(rounds_dir.iterdir()):
            if not path.name.isdigit() or (path / ROUND_FILE).exists():
                continue
            number = 1
            while (target := path.with_name(f"{path.name}.interrupted-{number}")).exists():
                number += 1
            os.replace(path, target)
            moved.append(target)
        if (self.round_dir(phase_key, next_round) / ROUND_FILE).exists():
            raise StoreError(f"{rounds_dir}: round {next_round} exists after a gap", "the run directory was edited")
        return moved

    def precondition_result(self, phase_key: str) -> dict[str, Any] | None:
        path = self.precondition_dir(phase_key) / PRECONDITION_DONE
        return read_json(path) if path.exists() else None

    def phase_result(self, phase_key: str) -> dict[str, Any] | None:
        path = self.phase_dir(phase_key) / PHASE_FILE
        if path.exists():
            result: dict[str, Any] = read_json(path)
            return result
        if self.store.manifest.get("status") == "done":  # every phase of a finished run ended
            raise StoreError(f"{path} is missing, but the run finished",
                             "restore the phase folder from a copy: without it the test cannot be reported")
        return None

    def purge_attempts(self, phase_key: str) -> list[dict[str, Any]]:
        path = self.phase_dir(phase_key) / "purge.json"
        attempts: list[dict[str, Any]] = read_json(path) if path.exists() else []
        return attempts

    def add_purge_attempt(self, phase_key: str, attempt: dict[str, Any]) -> None:
        self.phase_dir(phase_key).mkdir(parents=True, exist_ok=True)
        atomic_write_json(self.phase_dir(phase_key) / "purge.json", [*self.purge_attempts(phase_key), attempt])

    def write_phase_result(self, phase_key: str, result: dict[str, Any]) -> None:
        atomic_write_json(self.phase_dir(phase_key) / PHASE_FILE, {**result, "finished_utc": utc_now()})

    def add_compliance_reason(self, reason: str) -> None:
        """Record one more way the run departs from the spec (idempotent)."""
        compliance = dict(self.store.manifest.get("compliance") or {"compliant": True, "reasons": []})
        if reason not in compliance["reasons"]:
            compliance["reasons"] = [*compliance["reasons"], reason]
            compliance["compliant"] = False
            self.store.update_manifest(compliance=compliance)

    def run_status(self) -> str:
        """The run's status as it is now: the manifest's, except that a run it calls "running" (or "created") that
        no process holds was killed (kill -9, power loss) without a chance to say so: "interrupted"."""
        status = str(self.store.manifest.get("status"))
        if status in ("running", "created") and not self.held():
            return "interrupted"
        return status

    def held(self) -> bool:
        """True while a ptsbench process runs this run (holds its lock)."""
        try:  # O_NONBLOCK: a FIFO put in the lock file's place opens at once (a plain open would wait forever)
            descriptor = os.open(self.root / LOCK_FILE, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:  # no lock file of ptsbench's (a socket, say): nothing holds the run through it
            return False
        finally:
            os.close(descriptor)  # closing releases a lock taken here
        return False

    @contextmanager
    def lock(self, record_pid: bool = True) -> Iterator[None]:
        """Hold the run directory for one process (released by the kernel even after kill -9); `record_pid`: write
        this process's pid into the lock file (a run does; a short hold to stop a killed run's fio leaves the
        directory byte for byte as it was)."""
        handle = open(self.root / LOCK_FILE, "a+")  # noqa: SIM115 - held open for the whole run
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise StoreError(f"{self.root} is in use by another ptsbench process", "wait for it or stop it") from None
        try:
            if record_pid:
                handle.seek(0)
                handle.truncate()
                handle.write(f"{os.getpid()}\n")
                handle.flush()
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
            handle.close()


_ROUND_KEYS = ("round", "cells", "steady")


def _round_record(path: Path, number: int) -> dict[str, Any]:
    """A stored round, refused in one line when it is not one ptsbench wrote (edited or damaged by hand)."""
    record = read_json(path)
    if not isinstance(record, dict) or any(key not in record for key in _ROUND_KEYS) or record["round"] != number:
        raise StoreError(f"{path} is damaged: not round {number} as ptsbench wrote it (it needs "
                         f"{', '.join(_ROUND_KEYS)})", "restore it from a copy; without it the test cannot be reported "
                         "or resumed")
    return record

