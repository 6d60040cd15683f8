"""Reading fio's stream of status documents, including text fio interleaves with them."""

import io
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import until_enough
from ptsbench.fio.documents import read_documents
from ptsbench.fio.runner import FioStatus, fio_binary, run_fio


def pretty(doc: dict) -> str:  # type: ignore[type-arg]
    return json.dumps(doc, indent=2) + "\n"


def test_text_inside_and_between_documents_is_set_aside() -> None:
    first, second, third = ({"n": n, "jobs": [{"jobname": "j", "read": {"total_ios": n}}]} for n in (1, 2, 3))
    lines = pretty(second).splitlines(keepends=True)
    interrupted = "".join(lines[:3]) + "note: both iodepth >= 1 and iodepth_low may not be set\n" + "".join(lines[3:])
    stream = "fio: warning before\n" + pretty(first) + interrupted + "between\n" + pretty(third) + '{\n  "cut'
    seen: list[dict] = []  # type: ignore[type-arg]
    other = read_documents(io.StringIO(stream), lambda text, doc: seen.append(doc))
    assert seen == [first, second, third]
    assert "fio: warning before" in other and "note: both" in other and "between" in other and '"cut' in other


def test_a_damaged_document_does_not_swallow_the_next_ones() -> None:
    good = {"a": 1}
    stream = '{\n  "broken": \n}\n' + pretty(good)
    seen: list[dict] = []  # type: ignore[type-arg]
    read_documents(io.StringIO(stream), lambda text, doc: seen.append(doc))
    assert seen == [good]


class _Trickle(io.RawIOBase):
    """A pipe that hands over `size` bytes per read, as fio's stdout may arrive."""

    def __init__(self, data: bytes, size: int) -> None:
        self.data, self.size = data, size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: "memoryview") -> int:  # type: ignore[override]
        piece, self.data = self.data[:self.size], self.data[self.size:]
        buffer[:len(piece)] = piece
        return len(piece)


def test_documents_cut_anywhere_come_out_the_same() -> None:
    """Chunk boundaries at every place (inside a line, between a line and its newline, in a UTF-8 character) give
    the same documents and the same other text as the whole stream at once."""
    first = {"jobs": [{"jobname": "ü-job", "read": {"bins": {str(n): n for n in range(30)}}}]}
    lines = pretty(first).splitlines(keepends=True)
    noted = "".join(lines[:4]) + "note: a job started\n" + "".join(lines[4:])
    stream = "fio: before\n" + pretty(first) + noted + "{\n" + '  "cut": {\n' + pretty({"b": 2}) + "after\n" + "{\n}"
    whole_seen: list[tuple[str, dict]] = []  # type: ignore[type-arg]
    whole_other = read_documents(io.StringIO(stream), lambda text, doc: whole_seen.append((text, doc)))
    assert [doc for _, doc in whole_seen] == [first, first, {"b": 2}, {}]
    assert whole_other == "fio: before\nnote: a job started\n{\n" + '  "cut": {\n' + "after\n"
    data = stream.encode()
    for size in range(1, 40):
        seen: list[tuple[str, dict]] = []  # type: ignore[type-arg]
        text_stream = io.TextIOWrapper(io.BufferedReader(_Trickle(data, size), buffer_size=size), encoding="utf-8")
        other = read_documents(text_stream, lambda text, doc, seen=seen: seen.append((text, doc)))  # type: ignore[misc]
        assert (seen, other) == (whole_seen, whole_other), size


def test_status_samples_from_a_real_run(tmp_path: Path) -> None:
    # the null jobs here are held to 100 IOPS, an IO every 10 ms that fio sleeps through: unlimited, one spins a CPU
    job = tmp_path / "j.fio"
    job.write_text("[a]\nioengine=null\nsize=1m\ntime_based\nruntime=3\nrw=read\nrate_iops=100\n")
    samples: list[FioStatus] = []
    outcome = run_fio(job, json_path=tmp_path / "o.json", stderr_path=tmp_path / "e.txt", on_status=samples.append)
    assert outcome.ok and outcome.doc is not None
    assert len(samples) >= 2  # one a second, a busy host's fio fewer, and the final document
    assert all(s.iops > 0 and s.running_job == "a" for s in samples[:-1] if s.elapsed_s > 0.5)
    assert json.loads((tmp_path / "o.json").read_text()) == outcome.doc


def emptied(value: Any) -> Any:
    """`value` with every "bins" map emptied, as a status document read without its histograms is."""
    if isinstance(value, dict):
        return {key: {} if key == "bins" else emptied(item) for key, item in value.items()}
    if isinstance(value, list):
        return [emptied(item) for item in value]
    return value


def test_status_documents_without_bins_differ_from_fio_s_only_in_the_bins(tmp_path: Path) -> None:
    """A real json+ stream (a job name holding the very text searched for, which fio escapes): read without bins,
    every document equals fio's own with its histograms emptied, and nothing else; run_fio's final document still
    has them all."""
    job = tmp_path / "j.fio"
    job.write_text('[x"bins" : {y]\nioengine=null\nsize=1m\ntime_based\nruntime=2500ms\nrw=randrw\nrate_iops=100\n')
    stream = subprocess.run([fio_binary(), "--output-format=json+", "--status-interval=1", str(job)], check=True,
                            capture_output=True, text=True).stdout
    whole: list[dict[str, Any]] = []
    light: list[dict[str, Any]] = []
    assert read_documents(io.StringIO(stream), lambda text, doc: whole.append(doc)) == \
        read_documents(io.StringIO(stream), lambda text, doc: light.append(doc), without_bins=True)
    assert len(whole) >= 2 and whole[-1]["jobs"][0]["jobname"] == 'x"bins" : {y'
    assert whole[-1]["jobs"][0]["read"]["clat_ns"]["bins"]  # there were bins to leave out (a status document
    # may come before fio's job started on a loaded machine)
    assert light == [emptied(doc) for doc in whole]

    seen: list[dict[str, Any]] = []
    outcome = run_fio(job, json_path=tmp_path / "o.json", stderr_path=tmp_path / "e.txt", on_document=seen.append,
                      status_bins=False)
    assert outcome.ok and outcome.doc is not None and seen
    assert all(doc == emptied(doc) for doc in seen)
    assert outcome.doc["jobs"][0]["write"]["clat_ns"]["bins"]
    assert json.loads((tmp_path / "o.json").read_text()) == outcome.doc


def test_live_iops_and_bandwidth_agree_across_the_end_of_ramp_time(tmp_path: Path) -> None:
    """The live line's IOPS x block size = its MB/s on every sample, across the moment fio resets its counters at
    the end of ramp_time (a mixed 1 MiB job on two threads showed '55 IOPS 335.6 MB/s' there, and negative rates).
    fio reads a document's IO counts a moment after its bytes (up to hundreds of ms on a busy host), so the live
    IOPS are the same bytes over each direction's IO size: exactly 1 MiB here from the first sample whose size the
    documents so far tell (the first alone cannot: its count is a moment ahead of its bytes; on a busy host the
    second may not either: its count can run 27 % ahead), on every sample after it, across the reset, to the end;
    and never negative."""
    job = tmp_path / "j.fio"
    job.write_text("[m]\nioengine=null\nsize=64m\nbs=1m\nrw=randrw\nrwmixread=65\nnumjobs=2\ntime_based\n"
                   "ramp_time=2500ms\nruntime=2500ms\nrate_iops=100\n")
    def statuses() -> list[FioStatus]:
        samples: list[FioStatus] = []
        outcome = run_fio(job, json_path=tmp_path / "o.json", stderr_path=tmp_path / "e.txt", on_status=samples.append)
        assert outcome.ok
        return samples

    def past_the_reset(samples: list[FioStatus]) -> bool:
        return len(samples) >= 4 and any(s.iops > 0 for s in samples if s.elapsed_s > 3.5)

    samples = until_enough(statuses, past_the_reset)  # a busy host's fio may give too few documents to see it
    assert past_the_reset(samples), samples
    moving = [sample for sample in samples if sample.iops > 0]
    assert all(sample.iops >= 0 and sample.bw_bytes >= 0 for sample in samples), samples
    exact = [sample.bw_bytes / sample.iops == pytest.approx(1 << 20, rel=1e-9) for sample in moving]
    assert True in exact[1:], moving  # found by the documents
    assert all(exact[exact.index(True, 1):]), moving  # and kept from then on


def test_fio_is_asked_its_version_once_when_threads_ask_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A plan's threads all want fio's version as they start (sweep.plan_together): fio is started once for it, and
    every thread gets the same answer."""
    import threading

    from ptsbench.fio import runner

    started: list[list[str]] = []
    real_run_bound = runner.run_bound

    def counting(argv: list[str], **kwargs: Any) -> Any:
        started.append(list(argv))
        return real_run_bound(argv, **kwargs)

    monkeypatch.setattr(runner, "run_bound", counting)
    runner._version_of.cache_clear()
    barrier = threading.Barrier(4)
    answers: list[str] = []

    def ask() -> None:
        barrier.wait()
        answers.append(runner.fio_version())

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    runner._version_of.cache_clear()  # the next test asks the unpatched run_bound
    assert [argv[1:] for argv in started] == [["--version"]]
    assert len(answers) == 4 and len(set(answers)) == 1 and answers[0].startswith("fio-")
