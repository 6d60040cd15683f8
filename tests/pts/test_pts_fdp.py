"""`ptsbench pts --fdp-placement` (device/placement.py): the PTS jobs on an FDP namespace's generic character device
through io_uring_cmd with the chosen placement handles, as fio 3.34+ parses them (Debian 13's fio 3.39; this machine's
older fio says which fio is needed), and the refusals: files, devices that are no NVMe namespace, FDP disabled, no
generic device, a fio before 3.34, a character device that reaches another namespace. The run on a real (QEMU) FDP
namespace is the device lab's Debian 13 check pts_fdp."""

import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from ptsbench.cli.pts_steps import placed
from ptsbench.device.placement import check_placement_device, choose_placement, generic_device_of
from ptsbench.device.target import Target
from ptsbench.errors import JobFileError, TargetError
from ptsbench.fio.runner import fio_version
from ptsbench.fio.versions import data_placement_problem, option_hint, version_tuple
from ptsbench.pts.describe import describe
from ptsbench.pts.plan import TargetInfo, make_plan, precondition_job, round_job
from ptsbench.pts.settings import make_settings
from ptsbench.report.compare import differences
from ptsbench.report.core.model import Report
from ptsbench.report.pts.report import placement_facts

DATA = Path(__file__).parents[1] / "data" / "telemetry"
NAMESPACE = TargetInfo("/dev/nvme0n1", "block", 1 << 30, 4096, 4096, "io_uring")
PLACED = replace(NAMESPACE, fdp_placement="spread", fdp_device="/dev/ng0n1", fdp_plids="0,1,2,3")
PASSTHROUGH = ("filename=/dev/ng0n1", "ioengine=io_uring_cmd", "cmd_type=nvme", "fdp=1", "fdp_pli=0,1,2,3")


def _jobs(info: TargetInfo) -> tuple[str, str]:
    plan = make_plan(make_settings("demo", "2.0", ("iops",)), info)
    phase = plan.phases[0]
    return precondition_job(plan, phase), round_job(plan, phase, 7).text


def test_placement_jobs_write_the_char_device_through_io_uring_cmd() -> None:
    for text in _jobs(PLACED):
        lines = text.splitlines()
        assert all(option in lines for option in PASSTHROUGH), text
        assert "filename=/dev/nvme0n1" not in lines and "ioengine=io_uring" not in lines
        assert "direct=1" not in lines  # the character device refuses O_DIRECT opens (EINVAL)
    assert not any("fdp" in text or "ng0n1" in text for text in _jobs(NAMESPACE))  # off: as always
    plan_text = "\n".join(describe(make_plan(make_settings("demo", "2.0", ("iops",)), PLACED)))
    assert "FDP placement spread: fio writes /dev/ng0n1 (io_uring_cmd) over placement handle(s) 0,1,2,3" in plan_text
    manifest = {"target_info": PLACED.__dict__}
    assert placement_facts(manifest) == (("FDP placement", "spread: placement handle(s) 0,1,2,3 through /dev/ng0n1 "
                                                           "(io_uring_cmd)"),)
    assert placement_facts({"target_info": NAMESPACE.__dict__}) == ()


def test_fio_339_parses_the_placement_jobs(debian13_fio: str) -> None:
    for text in _jobs(PLACED):
        done = subprocess.run([debian13_fio, "--parse-only", "-"], input=text, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        broken = text.replace("fdp_pli=", "fdp_plx=")  # the check could fail: a misspelt option is refused
        done = subprocess.run([debian13_fio, "--parse-only", "-"], input=broken, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode != 0 and "Bad option <fdp_plx" in done.stderr


def test_an_older_fio_is_refused_naming_the_fio_needed(tmp_path: Path) -> None:
    assert data_placement_problem("fio-3.34") is None and data_placement_problem("fio-3.39") is None
    assert data_placement_problem("fio-3.33") == ("fio's data placement options (fdp, fdp_pli) need fio 3.34 or "
                                                  "newer, this is fio-3.33")
    here = fio_version()
    job = tmp_path / "round.fio"
    job.write_text(_jobs(PLACED)[1])
    done = subprocess.run(["fio", "--parse-only", str(job)], capture_output=True, text=True, timeout=120)
    if (version_tuple(here) or (0, 0)) < (3, 34):  # this machine's fio: what it says, and what ptsbench adds
        assert done.returncode != 0 and "Bad option <fdp=1>" in done.stderr
        assert "need fio 3.34 or newer" in (option_hint(done.stderr, here) or "")
    else:
        assert done.returncode == 0, done.stderr


Cli = Callable[..., subprocess.CompletedProcess[str]]


def test_pts_refuses_placement_on_a_file_a_loop_device_and_on_hosts(tmp_path: Path, loop_device: str,
                                                                     cli: Cli) -> None:
    for args, says in (
            (("--profile", "demo", "--fdp-placement", "spread", "--dry-run"),
             "--fdp-placement spread needs an NVMe namespace with FDP enabled: "),
            ((loop_device, "--profile", "demo", "--fdp-placement", "one", "--destructive"),
             f"--fdp-placement one needs an NVMe namespace with FDP enabled: {loop_device} is not an NVMe namespace "
             "(transport loop)"),
            ((loop_device, "--hosts", "tcp://127.0.0.1:1", "--size", "1G", "--fdp-placement", "one"),
             "--fdp-placement takes one local TARGET (not --hosts, not a fleet)")):
        out = tmp_path / "run"
        result = cli("pts", *args, "--out", str(out))
        assert result.returncode == 2 and says in result.stderr and "Traceback" not in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and not out.exists()


NVME_FACTS: dict[str, object] = {"transport": "nvme", "nvme_controller": "/dev/nvme0"}


def test_namespace_without_fdp_or_generic_device_is_refused(fakebin: Callable[[], list[list[str]]], loop_device: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The nvme stand-in answers for the drive (no FDP drive here); the loop device stands for the namespace."""
    target = Target(loop_device, "block", 1 << 26, loop_device)
    monkeypatch.setenv("FAKE_NVME_FDP_FEATURE", "0x00000000")
    with pytest.raises(TargetError, match="cannot place writes: FDP is disabled on its endurance group"):
        choose_placement("spread", target, NVME_FACTS)
    monkeypatch.delenv("FAKE_NVME_FDP_FEATURE")  # an nvme-cli or drive without the feature
    with pytest.raises(TargetError, match="gave no value .* the drive has no FDP, or nvme-cli is too old"):
        choose_placement("one", target, NVME_FACTS)
    monkeypatch.setenv("FAKE_NVME_FDP_FEATURE", "0x00000001")
    monkeypatch.setenv("FAKE_NVME_FDP_CONFIGS", str(DATA / "nvme-cli-2.13-fdp-configs-qemu-10.json"))
    monkeypatch.setenv("FAKE_NVME_FDP_STATUS", str(DATA / "nvme-cli-2.13-fdp-status-qemu-10.json"))
    with pytest.raises(TargetError, match=f"{loop_device} has no generic character device /dev/ngXnY"):
        choose_placement("spread", target, NVME_FACTS)  # FDP on, handles listed: a loop device has no ng device
    assert ["nvme", "fdp", "status", loop_device, "-o", "json"] in fakebin()
    assert choose_placement("off", target, NVME_FACTS) is None


def test_char_device_must_reach_the_runs_namespace(loop_device: str) -> None:
    assert generic_device_of(loop_device) is None
    with pytest.raises(TargetError, match=f"/dev/null does not reach {loop_device} .it reaches no namespace."):
        check_placement_device("/dev/null", loop_device, destructive=True)


def test_stored_values_with_line_breaks_never_become_jobs(tmp_path: Path) -> None:
    """A resumed run makes its jobs again from its stored manifest: placement handles (or an engine) edited there to
    hold a line break would be a job of their own that writes a file or device no guard has seen. Refused."""
    victim = tmp_path / "victim"
    for edited in (replace(PLACED, fdp_plids=f"0\n[evil]\nrw=write\nfilename={victim}"),
                   replace(NAMESPACE, ioengine=f"io_uring\r\n[evil]\nfilename={victim}")):
        with pytest.raises(JobFileError, match="line break or NUL"):
            _jobs(edited)
    assert not victim.exists()


def test_fdp_off_is_recorded_on_a_namespace_with_fdp_enabled(fakebin: Callable[[], list[list[str]]],
                                                              loop_device: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Without --fdp-placement, a run on a namespace with FDP enabled records placement off (the nvme stand-in
    answers for the drive, the loop device stands for the namespace), so `compare` sets "off" beside an FDP-on run's
    placement; FDP disabled or absent records nothing, and `--fdp-placement off` records off wherever it is given."""
    target = Target(loop_device, "block", 1 << 26, loop_device)
    info = replace(NAMESPACE, path=loop_device)
    monkeypatch.setenv("FAKE_NVME_FDP_CONFIGS", str(DATA / "nvme-cli-2.13-fdp-configs-qemu-10.json"))
    monkeypatch.setenv("FAKE_NVME_FDP_STATUS", str(DATA / "nvme-cli-2.13-fdp-status-qemu-10.json"))
    recorded = {}
    for feature in ("0x00000001", "0x00000000", None):  # FDP enabled, disabled, a drive without FDP
        if feature:
            monkeypatch.setenv("FAKE_NVME_FDP_FEATURE", feature)
        else:
            monkeypatch.delenv("FAKE_NVME_FDP_FEATURE")
        recorded[feature] = placed(info, target, NVME_FACTS, None).fdp_placement
        assert placed(info, target, NVME_FACTS, "off").fdp_placement == "off"
    assert recorded == {"0x00000001": "off", "0x00000000": None, None: None}
    assert ["nvme", "get-feature", "/dev/nvme0", "-f", "0x1d", "--cdw11=1"] in fakebin()
    loop = {"transport": "loop", "disk": loop_device}
    calls = len(fakebin())
    assert placed(info, target, loop, None).fdp_placement is None and len(fakebin()) == calls  # nvme not asked
    assert placed(info, target, loop, "off").fdp_placement == "off"

    off = replace(info, fdp_placement="off")
    assert placement_facts({"target_info": off.__dict__}) == (("FDP placement", "off"),)
    assert placement_facts({"target_info": info.__dict__}) == ()
    plan_text = "\n".join(describe(make_plan(make_settings("demo", "2.0", ("iops",)), off)))
    assert f"FDP placement off: fio writes {loop_device} as always, naming no placement handle" in plan_text
    reports = [Report(label, "", placement_facts({"target_info": run.__dict__}), ())
               for label, run in (("off", off), ("spread", PLACED), ("none", info))]
    assert differences(reports[:2], ["a", "b"]) == [
        "FDP placement: off (a) vs spread: placement handle(s) 0,1,2,3 through /dev/ng0n1 (io_uring_cmd) (b)"]
    assert differences([reports[2], reports[0]], ["a", "b"]) == ["FDP placement: - (a) vs off (b)"]
