"""The device lab as tests: scripts/device-lab.sh boots its QEMU guest once (emulated NVMe, SCSI, SATA and
rotational disks on the real Linux drivers) and every check it runs there (tests/device_lab/device_lab_guest.py) is one
test here; its Debian 13 variant (`--debian13`: QEMU 10's OCP log and FDP, Debian 13's fio, nvme-cli and Python) runs
tests/device_lab/device_lab_debian13.py's checks the same way, and its FTL variant (`--ftl`: NVMeVirt's emulated SSD
with garbage collection) tests/device_lab/device_lab_ftl.py's: its full size only when PTSBENCH_LAB_FTL=1, its CI size
(ftl-ci) always. conftest.py starts each
lab as soon as its tests are collected, so its minutes of QEMU run beside the rest of the suite; the first test of a
lab waits for it. Skipped only where the lab cannot run: not root, or QEMU, the guest kernel, the Debian 13 root or
the kernel headers NVMeVirt is built against not installable (and the FTL variants without their variables); with
CI=true such a lab fails instead, so that CI never passes without its labs."""

import json
import os
import subprocess

import pytest

from conftest import device_lab, lab_opted_in
from device_lab_debian13 import CHECKS as DEBIAN13_CHECKS
from device_lab_ftl import CI_CHECKS as FTL_CI_CHECKS
from device_lab_ftl import FULL_CHECKS as FTL_FULL_CHECKS
from device_lab_ftl import SPRANDOM
from device_lab_guest import CHECKS

LAB_TIMEOUT_S = 3000  # the guest's own bound (2400 s in scripts/device-lab.sh), and its install and boot
# the FTL variant waits for the other labs to end (they take turns), then runs up to 25 PTS rounds, for which
# scripts/device-lab.sh gives it 1800 s (3600 s with the opt-in sprandom check); its CI size takes a few minutes,
# bounded by the same 1800 s
LAB_TIMEOUT_S_OF = {"ftl": LAB_TIMEOUT_S + (3600 if SPRANDOM else 1800), "ftl-ci": LAB_TIMEOUT_S + 1800}
CANNOT_RUN = 77  # scripts/device-lab.sh: the lab cannot run on this machine

pytestmark = [pytest.mark.slow]


def lab_timeout_s(variant: str) -> float:
    """How long a lab variant's tests wait for it: its own bound, and the FTL variant's too when that one runs (the
    labs take turns with it, and which of them goes first is whichever starts first)."""
    own = LAB_TIMEOUT_S_OF.get(variant, LAB_TIMEOUT_S)
    return own + sum(LAB_TIMEOUT_S_OF[ftl] for ftl in ("ftl", "ftl-ci") if ftl != variant and lab_opted_in(ftl) is None)


def lab_results(request: pytest.FixtureRequest, variant: str) -> tuple[dict[str, dict[str, object]], str]:
    """Every check's result (by name) of a lab variant and the end of its console output."""
    why_not = lab_opted_in(variant)
    if why_not is not None:
        pytest.skip(why_not)
    started = device_lab(request.config, variant)
    try:
        status = started.process.wait(timeout=lab_timeout_s(variant))
    except subprocess.TimeoutExpired:
        started.stop()
        status = -1
    console = started.console.read_text(errors="replace")
    if status == CANNOT_RUN:
        why = console.strip().splitlines()[-1]
        if os.environ.get("CI") == "true":  # CI runs the labs: one that cannot run there fails rather than hides
            pytest.fail(f"{why} (CI=true: the device labs must run)")
        pytest.skip(why)
    console = console[-3000:]
    results = started.results
    assert results.exists(), f"the lab stopped before the guest ran (status {status}):\n{console}"
    records = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
    return {str(record["check"]): record for record in records}, console


@pytest.fixture(scope="module")
def lab(request: pytest.FixtureRequest) -> tuple[dict[str, dict[str, object]], str]:
    return lab_results(request, "debian12")


@pytest.fixture(scope="module")
def lab_debian13(request: pytest.FixtureRequest) -> tuple[dict[str, dict[str, object]], str]:
    return lab_results(request, "debian13")


@pytest.fixture(scope="module")
def lab_ftl(request: pytest.FixtureRequest) -> tuple[dict[str, dict[str, object]], str]:
    return lab_results(request, "ftl")


@pytest.fixture(scope="module")
def lab_ftl_ci(request: pytest.FixtureRequest) -> tuple[dict[str, dict[str, object]], str]:
    return lab_results(request, "ftl-ci")


def assert_passed(lab: tuple[dict[str, dict[str, object]], str], name: str) -> None:
    records, console = lab
    record = records.get(name)
    assert record is not None, f"the guest stopped before check {name}; the lab's console ended with:\n{console}"
    assert record["ok"], record["detail"]


@pytest.mark.device_lab(variant="debian13")
@pytest.mark.parametrize("name", list(DEBIAN13_CHECKS))
def test_device_lab_debian13(lab_debian13: tuple[dict[str, dict[str, object]], str], name: str) -> None:
    assert_passed(lab_debian13, name)


@pytest.mark.device_lab(variant="ftl")
@pytest.mark.parametrize("name", list(FTL_FULL_CHECKS))
def test_device_lab_ftl(lab_ftl: tuple[dict[str, dict[str, object]], str], name: str) -> None:
    assert_passed(lab_ftl, name)


@pytest.mark.device_lab(variant="ftl-ci")
@pytest.mark.parametrize("name", list(FTL_CI_CHECKS))
def test_device_lab_ftl_ci(lab_ftl_ci: tuple[dict[str, dict[str, object]], str], name: str) -> None:
    assert_passed(lab_ftl_ci, name)


@pytest.mark.device_lab
@pytest.mark.parametrize("name", list(CHECKS))
def test_device_lab(lab: tuple[dict[str, dict[str, object]], str], name: str) -> None:
    assert_passed(lab, name)
