"""Flexible Data Placement facts (device/fdp.py) and `info`'s FDP section: feature 1Dh, the configurations log and
the namespace's placement handles parsed from nvme-cli's output shapes, read through the nvme stand-in on PATH in
the order `info` reads them; a drive without FDP and a target that is no NVMe namespace."""

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import run_cli
from ptsbench.cli.info import _fdp_section, _print_tables
from ptsbench.device.fdp import parse_fdp_config, parse_fdp_feature, parse_fdp_status, read_fdp

DATA = Path(__file__).parents[1] / "data" / "telemetry"
NVME_FACTS: dict[str, object] = {"transport": "nvme", "disk": "/dev/nvme0n1", "nvme_controller": "/dev/nvme0"}


def test_feature_value_enabled_bit_and_configuration_index() -> None:
    assert parse_fdp_feature("get-feature:0x1d (Flexible Data Placement), Current value:0x00000201\n") == (True, 2)
    assert parse_fdp_feature("get-feature:0x1d (Flexible Data Placement), Current value:0x00000000\n") == (False, 0)
    assert parse_fdp_feature("NVMe status: Invalid Field in Command") is None


def test_configuration_and_placement_handles() -> None:
    configs = json.loads((DATA / "nvme-cli-2.x-fdp-configs.json").read_text())
    assert parse_fdp_config(configs, 0) == {"fdp_reclaim_groups": 1, "fdp_reclaim_unit_handles": 8,
                                            "fdp_reclaim_unit_bytes": 32 * 1024**2}
    assert set(parse_fdp_config(configs, 1).values()) == {None}  # no second configuration
    assert parse_fdp_status(json.loads((DATA / "nvme-cli-2.x-fdp-status.json").read_text())) == [0, 1, 2, 3]


def test_qemu_10_fdp_subsystem_as_nvme_cli_2_13_printed_it() -> None:
    """Real output captured by the device lab's Debian 13 variant: QEMU 10's nvme-subsys with fdp=on, fdp.nrg=1,
    fdp.nruh=4, fdp.runs=64M and a namespace with fdp.ruhs=0-3, read by nvme-cli 2.13."""
    configs = json.loads((DATA / "nvme-cli-2.13-fdp-configs-qemu-10.json").read_text())
    assert parse_fdp_config(configs, 0) == {"fdp_reclaim_groups": 1, "fdp_reclaim_unit_handles": 4,
                                            "fdp_reclaim_unit_bytes": 64 * 2**20}
    status = json.loads((DATA / "nvme-cli-2.13-fdp-status-qemu-10.json").read_text())
    assert parse_fdp_status(status) == [0, 1, 2, 3]


def test_enabled_drive_through_nvme_cli(fakebin: Callable[[], list[list[str]]], monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("FAKE_NVME_FDP_FEATURE", "0x00000001")
    monkeypatch.setenv("FAKE_NVME_FDP_CONFIGS", str(DATA / "nvme-cli-2.x-fdp-configs.json"))
    monkeypatch.setenv("FAKE_NVME_FDP_STATUS", str(DATA / "nvme-cli-2.x-fdp-status.json"))
    section = _fdp_section(dict(NVME_FACTS))
    assert fakebin() == [["nvme", "get-feature", "/dev/nvme0", "-f", "0x1d", "--cdw11=1"],
                         ["nvme", "fdp", "configs", "/dev/nvme0", "--endgrp-id=1", "-o", "json"],
                         ["nvme", "fdp", "status", "/dev/nvme0n1", "-o", "json"]]
    assert section["fdp"] == {"fdp": "enabled", "fdp_config_index": 0, "fdp_reclaim_groups": 1,
                              "fdp_reclaim_unit_handles": 8, "fdp_reclaim_unit_bytes": 32 * 1024**2,
                              "fdp_placement_ids": [0, 1, 2, 3], "fdp_note": None}
    _print_tables(section)
    shown = capsys.readouterr().out
    rows = {cells[1].strip(): cells[2].strip() for line in shown.splitlines() if len(cells := line.split("│")) == 4}
    assert shown.startswith("Flexible Data Placement")
    assert rows["FDP"] == "enabled" and rows["placement handles (fio plids)"] == "0, 1, 2, 3"
    assert rows["reclaim unit size"] == "32.0 MiB (33554432 bytes)" and rows["reclaim unit handles"] == "8"


def test_disabled_and_unsupported(fakebin: Callable[[], list[list[str]]], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_NVME_FDP_FEATURE", "0x00000000")
    assert read_fdp("/dev/nvme0", "/dev/nvme0n1")["fdp"] == "disabled"
    assert len(fakebin()) == 1  # no log read for a drive with FDP off
    monkeypatch.delenv("FAKE_NVME_FDP_FEATURE")
    unsupported = read_fdp("/dev/nvme0", "/dev/nvme0n1")
    assert unsupported["fdp"] is None and unsupported["fdp_note"].startswith(
        "not reported: `nvme get-feature /dev/nvme0 -f 0x1d --cdw11=1` gave no value (exit status 0)")


def test_info_of_a_loop_device_has_no_fdp_section(tmp_path: Path) -> None:
    from conftest import attached_loop

    with attached_loop(str(tmp_path)) as loop:
        done = run_cli("info", loop, "--json")
    assert done.returncode == 0, done.stderr
    assert "fdp" not in json.loads(done.stdout)
