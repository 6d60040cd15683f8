"""One fio --parse-only for all of a sweep's cells judges every cell exactly as its own parse did."""

from pathlib import Path

import pytest

from ptsbench.cases.checks import check_cases
from ptsbench.cases.plan import JobAdditions, case_job, plan_case
from ptsbench.errors import PtsbenchError
from ptsbench.fio.opens import parse_job_text, parse_job_texts
from ptsbench.sweep import SWEEP_DIR, plan_cases

NULL = "[global]\nioengine=null\nsize=4k\n"
# awkward cells, in an order where a [global] or a job left over from the file before would show
CELLS = {
    "global-file": "[global]\nioengine=null\nsize=4k\nfilename={d}/g1:{d}/g2\nrw=write\n[a]\n",
    "generated": NULL + "[b]\nfilename_format={d}/f.$jobname.$jobnum.$filenum\nnumjobs=3\nnrfiles=2\n",
    "list": NULL + "[c]\nfilename=x:y\\:z::w\ndirectory={d}/dir\nnumjobs=2\nrw=randwrite\n",
    "existing": NULL + "[d]\nfilename={d}/kept\nrw=write\n[e]\nfilename={d}/kept\nunlink=1\n",
    "globalish": "[global-ish]\nfilename={d}/gi\n[f]\nioengine=null\nsize=8k\n",
    "device": NULL + "[/dev/null]\nrw=write\n",
    "include": "include {d}/shared.fio\n[g]\nfilename={d}/inc\nrw=write\n",
    "opendir": NULL + "[h]\nopendir={d}/tree\nrw=read\noffset=1m\n",
}


def _folder(tmp_path: Path) -> Path:
    for folder in ("dir", "tree/sub"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
    (tmp_path / "tree" / "sub" / "one").write_text("x")
    (tmp_path / "kept").write_text("the user's data")
    (tmp_path / "shared.fio").write_text(NULL)
    return tmp_path


def _plan_each_alone(entries: list[dict[str, object]], texts: dict[str, str], run_dir: Path) -> list[object]:
    return [plan_case(case_job(int(str(entry["index"])), str(entry["name"]), run_dir / SWEEP_DIR / str(entry["job"]),
                               texts[str(entry["job"])], None, JobAdditions(run_dir, 1000))) for entry in entries]


def _verdict(case: object) -> str:
    try:
        check_cases([case], destructive=False)  # type: ignore[list-item]
    except PtsbenchError as error:
        return error.message
    return "ok"


def test_one_parse_gives_each_text_its_own_parse(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    texts = [text.format(d=folder) for text in CELLS.values()]
    together = parse_job_texts(texts)
    for name, text, found in zip(CELLS, texts, together, strict=True):
        if name == "include":
            assert found is None, "a text with an include is parsed alone"
        else:
            assert found == parse_job_text(text, name), name
    assert sum(found is not None for found in together) == len(CELLS) - 1


@pytest.mark.parametrize("bad", [None, "[bad]\nioengine=null\nbs=lots\n"], ids=["all-parse", "one-rejected"])
def test_a_sweep_plans_and_judges_every_cell_as_its_own_parse_did(bad: str | None, tmp_path: Path) -> None:
    folder = _folder(tmp_path / "files")
    texts = {f"{name}.fio": text.format(d=folder) for name, text in CELLS.items()}
    if bad:
        texts = {"first.fio": texts.pop("list.fio"), "bad.fio": bad, **texts}
    entries: list[dict[str, object]] = [{"index": index, "name": job[:-4], "job": job, "target": 0}
                                        for index, job in enumerate(texts, 1)]
    run_dir = tmp_path / "run"
    together = plan_cases(entries, texts, [], run_dir, 1000, False)
    alone = _plan_each_alone(entries, texts, run_dir)
    assert together == alone
    verdicts = [_verdict(case) for case in together]
    assert verdicts == [_verdict(case) for case in alone]
    assert any("kept" in verdict for verdict in verdicts), "the user's file is refused"
    if bad:
        assert together[1].rejected.startswith(f"{run_dir / SWEEP_DIR / 'bad.fio'}: fio rejects it")
        assert not together[0].rejected and together[0].opens, "the cell before it is judged, not rejected"


def test_a_rejected_text_sends_every_text_to_its_own_parse() -> None:
    assert parse_job_texts([NULL + "[a]\n", NULL + "[b]\nbs=lots\n"]) == [None, None]


def test_cells_on_a_device_are_planned_in_two_fio_start_ups(loop_device: str, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Cells whose job names a block device are parsed again with allow_file_create=0 (cases.device_job_text): those
    second texts too in one start-up of fio (parse_job_texts, which gives each text its own parse: above), and
    each case holds its second text and what fio opens for it."""
    from ptsbench.fio import opens

    starts: list[int] = []
    real = opens._fio_parse_only

    def counted(paths: list[str], cwd: str | None) -> object:
        starts.append(len(paths))
        return real(paths, cwd)

    texts = {f"r{number}.fio": f"[r{number}]\nfilename={loop_device}\nrw=randread\nbs=4k\nruntime=1\n"
             for number in range(3)}
    entries: list[dict[str, object]] = [{"index": index, "name": job[:-4], "job": job, "target": 0}
                                        for index, job in enumerate(texts, 1)]
    run_dir = tmp_path / "run"
    monkeypatch.setattr(opens, "_fio_parse_only", counted)
    together = plan_cases(entries, texts, [], run_dir, 1000, False)
    assert starts == [3, 3]
    assert all("allow_file_create=0" in case.job_text for case in together)
    assert [[job.paths for job in case.opens] for case in together] == [[(loop_device,)]] * 3
