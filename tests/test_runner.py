"""Reading fio's stream of status documents, including text fio interleaves with them."""

import io
import json
from pathlib import Path

from ptsbench.fio.runner import FioStatus, _read_documents, run_fio


def pretty(doc: dict) -> str:  # type: ignore[type-arg]
    return json.dumps(doc, indent=2) + "\n"


def test_text_inside_and_between_documents_is_set_aside() -> None:
    first, second, third = ({"n": n, "jobs": [{"jobname": "j", "read": {"total_ios": n}}]} for n in (1, 2, 3))
    lines = pretty(second).splitlines(keepends=True)
    interrupted = "".join(lines[:3]) + "note: both iodepth >= 1 and iodepth_low may not be set\n" + "".join(lines[3:])
    stream = "fio: warning before\n" + pretty(first) + interrupted + "between\n" + pretty(third) + '{\n  "cut'
    seen: list[dict] = []  # type: ignore[type-arg]
    other = _read_documents(io.StringIO(stream), lambda text, doc: seen.append(doc))
    assert seen == [first, second, third]
    assert "fio: warning before" in other and "note: both" in other and "between" in other and '"cut' in other


def test_a_damaged_document_does_not_swallow_the_next_ones() -> None:
    good = {"a": 1}
    stream = '{\n  "broken": \n}\n' + pretty(good)
    seen: list[dict] = []  # type: ignore[type-arg]
    _read_documents(io.StringIO(stream), lambda text, doc: seen.append(doc))
    assert seen == [good]


def test_status_samples_from_a_real_run(tmp_path: Path) -> None:
    job = tmp_path / "j.fio"
    job.write_text("[a]\nioengine=null\nsize=1m\ntime_based\nruntime=3\nrw=read\n")
    samples: list[FioStatus] = []
    outcome = run_fio(job, json_path=tmp_path / "o.json", stderr_path=tmp_path / "e.txt", on_status=samples.append)
    assert outcome.ok and outcome.doc is not None
    assert len(samples) >= 3  # one per second plus the final document
    assert all(s.iops > 0 and s.running_job == "a" for s in samples[:-1] if s.elapsed_s > 0.5)
    assert json.loads((tmp_path / "o.json").read_text()) == outcome.doc
