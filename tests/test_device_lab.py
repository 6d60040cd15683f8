"""The device lab as tests: scripts/device-lab.sh boots its QEMU guest once for this module (emulated NVMe, SCSI,
SATA and rotational disks on the real Linux drivers) and every check it runs there (tests/device_lab_guest.py) is
one test here. Skipped only where the lab cannot run: not root, or QEMU and the guest kernel not installable."""

import json
import subprocess
from pathlib import Path

import pytest

from device_lab_guest import CHECKS

ROOT = Path(__file__).resolve().parent.parent
LAB_TIMEOUT_S = 1500
CANNOT_RUN = 77  # scripts/device-lab.sh: the lab cannot run on this machine

pytestmark = [pytest.mark.device_lab, pytest.mark.slow]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, dict[str, object]], str]:
    """Every check's result (by name) and the end of the lab's console output."""
    folder = tmp_path_factory.mktemp("device-lab")
    results = folder / "results.jsonl"
    done = subprocess.run(["bash", str(ROOT / "scripts" / "device-lab.sh"), "--results", str(results)],
                          capture_output=True, text=True, errors="replace", timeout=LAB_TIMEOUT_S, check=False)
    if done.returncode == CANNOT_RUN:
        pytest.skip(done.stderr.strip().splitlines()[-1])
    console = (done.stdout + done.stderr)[-3000:]
    assert results.exists(), f"the lab stopped before the guest ran (status {done.returncode}):\n{console}"
    records = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
    return {str(record["check"]): record for record in records}, console


@pytest.mark.parametrize("name", list(CHECKS))
def test_device_lab(lab: tuple[dict[str, dict[str, object]], str], name: str) -> None:
    records, console = lab
    record = records.get(name)
    assert record is not None, f"the guest stopped before check {name}; the lab's console ended with:\n{console}"
    assert record["ok"], record["detail"]
