"""Purge methods (device/purge.py) and the write-cache switch (device/cache.py), driven through stand-in tools
(tests/fakebin) that record their argv and fail on demand; blkdiscard and sysfs also run for real on a loop device."""

import os
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import attached_loop
from ptsbench.device import purge as purge_module
from ptsbench.device.cache import read_write_cache, set_write_cache
from ptsbench.device.claim import claim_targets
from ptsbench.device.inuse import in_use_reasons
from ptsbench.device.purge import (
    ATA_TEMP_PASSWORD,
    AtaSecureErase,
    Blkdiscard,
    CommandLog,
    NoPurge,
    NvmeFormat,
    NvmeSanitize,
    ScsiFormat,
    choose_purge,
    id_ctrl_value,
    purge,
)
from ptsbench.device.purge_time import ASSUMED_ERASE_S, ERASE_ASSUMPTION, purge_time_s
from ptsbench.device.target import Target, resolve_target
from ptsbench.errors import PtsbenchError, TargetError, UnsafeTargetError

NVME = Target(path="/dev/nvme0n1", kind="block", size_bytes=10**12, requested="/dev/nvme0n1")
NVME_FACTS: dict[str, object] = {"transport": "nvme", "disk": "/dev/nvme0n1", "nvme_controller": "/dev/nvme0"}
SATA = Target(path="/dev/sda", kind="block", size_bytes=10**12, requested="/dev/sda")
SATA_FACTS: dict[str, object] = {"transport": "sata", "disk": "/dev/sda"}
SAS = Target(path="/dev/sdb", kind="block", size_bytes=10**12, requested="/dev/sdb")
SAS_FACTS: dict[str, object] = {"transport": "scsi", "disk": "/dev/sdb"}


def test_nvme_sanitize_polls_until_done(fakebin: Callable[[], list[list[str]]],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_SANITIZE_BUSY_POLLS", "2")
    outcome = NvmeSanitize(poll_interval_s=0.01).run(NVME, NVME_FACTS)
    expected = [
        ["nvme", "id-ctrl", "/dev/nvme0", "-o", "json"],
        ["nvme", "sanitize-log", "/dev/nvme0", "-o", "json"],  # none in progress (SSTAT 0)
        ["nvme", "sanitize", "/dev/nvme0", "--sanact=2"],
        *[["nvme", "sanitize-log", "/dev/nvme0", "-o", "json"]] * 3,
    ]
    assert outcome.commands == expected == fakebin()
    assert outcome.ok and not outcome.is_deviation
    assert "block erase" in outcome.message


def test_nvme_sanitize_already_running_is_waited_for_not_started_again(
        fakebin: Callable[[], list[list[str]]], monkeypatch: pytest.MonkeyPatch) -> None:
    """A run killed during its sanitize leaves it running on the drive, which refuses a second one: resume waits."""
    monkeypatch.setenv("FAKE_SANITIZE_IN_PROGRESS", "1")
    outcome = NvmeSanitize(poll_interval_s=0.01).run(NVME, NVME_FACTS)
    assert outcome.ok and "started earlier" in outcome.message and "completed" in outcome.message
    assert not any(command[:2] == ["nvme", "sanitize"] for command in fakebin())
    assert fakebin()[1:] == [["nvme", "sanitize-log", "/dev/nvme0", "-o", "json"]] * 2


def test_nvme_sanitize_picks_crypto_erase_and_reports_failure(fakebin: Callable[[], list[list[str]]],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_NVME_SANICAP", "0x1")  # crypto erase only
    monkeypatch.setenv("FAKE_SANITIZE_SSTAT", "0x3")  # sanitize failed
    outcome = NvmeSanitize(poll_interval_s=0.01).run(NVME, NVME_FACTS)
    assert ["nvme", "sanitize", "/dev/nvme0", "--sanact=4"] in outcome.commands
    assert not outcome.ok and "failed" in outcome.message


def test_id_ctrl_fields_are_numbers_or_none(fakebin: Callable[[], list[list[str]]],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Sanitize support (sanicap), the volatile write cache (vwc) and a format's reach (fna) come from one decoding of
    `nvme id-ctrl -o json`: the number printed, None for a field it does not print or when nvme-cli fails. Then
    sanitize is not offered and the write cache is unknown."""
    monkeypatch.setenv("FAKE_NVME_SANICAP", "0x2")
    monkeypatch.setenv("FAKE_NVME_VWC", "0x6")
    log = CommandLog()
    assert [id_ctrl_value(log, "/dev/nvme0", key) for key in ("sanicap", "vwc", "fna")] == [2, 6, None]
    monkeypatch.setenv("FAKEBIN_FAIL", "nvme:id-ctrl")
    assert id_ctrl_value(log, "/dev/nvme0", "vwc") is None
    assert log.commands == fakebin() == [["nvme", "id-ctrl", "/dev/nvme0", "-o", "json"]] * 4
    assert NvmeSanitize().applies(NVME, NVME_FACTS) == "sanitize not supported"
    assert read_write_cache(NVME, NVME_FACTS) is None


def test_nvme_sanitize_unsupported_is_not_chosen(fakebin: Callable[[], list[list[str]]],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_NVME_SANICAP", "0")
    assert NvmeSanitize().applies(NVME, NVME_FACTS) == "sanitize not supported"
    assert choose_purge(NVME, NVME_FACTS).name == "nvme-format"


@pytest.mark.parametrize(("sanicap", "estimate", "seconds", "basis"), [
    ("0x2", "120", 120.0, "the drive's own estimate for a sanitize block erase"),
    ("0x2", "0xFFFFFFFF", ASSUMED_ERASE_S, "sanitize block erase, the drive gives no estimate; assumed"),
    ("0x4", "0xFFFFFFFF", 2000.0, "sanitize overwrite: 1,000,000,000,000 bytes rewritten at the preconditioning rate"),
])
def test_nvme_sanitize_time_is_the_drives_estimate_else_stated(
        fakebin: Callable[[], list[list[str]]], monkeypatch: pytest.MonkeyPatch, sanicap: str, estimate: str,
        seconds: float, basis: str) -> None:
    monkeypatch.setenv("FAKE_NVME_SANICAP", sanicap)
    monkeypatch.setenv("FAKE_SANITIZE_TIME_S", estimate)
    found_s, found_basis = purge_time_s(NvmeSanitize(), NVME, NVME_FACTS, 500e6)
    assert found_s == seconds and found_basis.startswith(basis), found_basis
    assert fakebin()[-1] == ["nvme", "sanitize-log", "/dev/nvme0", "-o", "json"]  # read, nothing started
    assert not any(argv[1] == "sanitize" for argv in fakebin())


def test_purge_time_per_method() -> None:
    """An erase is assumed to take a minute, a method that rewrites every block the capacity at the rate; each says
    which; no purge takes none."""
    rate = 500e6  # 1 TB at 500 MB/s: 2000 s
    assert purge_time_s(NvmeFormat(), NVME, NVME_FACTS, rate) == (ASSUMED_ERASE_S, ERASE_ASSUMPTION)
    assert purge_time_s(Blkdiscard(), SATA, SATA_FACTS, rate) == (ASSUMED_ERASE_S, ERASE_ASSUMPTION)
    scsi_s, scsi_basis = purge_time_s(ScsiFormat(), SAS, SAS_FACTS, rate)
    assert scsi_s == 2000.0 and scsi_basis.startswith("FORMAT UNIT: 1,000,000,000,000 bytes rewritten")
    ata_s, ata_basis = purge_time_s(AtaSecureErase(), SATA, SATA_FACTS, rate * 2)
    assert ata_s == 1000.0 and "secure erase" in ata_basis
    assert purge_time_s(NoPurge(), SATA, SATA_FACTS, rate) == (0.0, "no purge")


def test_nvme_sanitize_tool_failure_is_reported(fakebin: Callable[[], list[list[str]]],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKEBIN_FAIL", "nvme:sanitize")
    outcome = NvmeSanitize(poll_interval_s=0.01).run(NVME, NVME_FACTS)
    assert not outcome.ok
    assert outcome.message == "nvme exited with status 5: nvme: injected failure (nvme:sanitize)"
    assert outcome.commands[-1] == ["nvme", "sanitize", "/dev/nvme0", "--sanact=2"]


@pytest.mark.parametrize(("flbas", "dps", "options"), [
    ("0x0", "0", ["--lbaf=0", "--ms=0", "--pi=0", "--pil=0"]),
    ("0x1", "0x1", ["--lbaf=1", "--ms=0", "--pi=1", "--pil=0"]),  # 8 bytes of metadata, PI type 1 (QEMU ms=8,pi=1)
    ("0x12", "0xb", ["--lbaf=2", "--ms=1", "--pi=3", "--pil=1"]),  # extended LBA, PI type 3 in the first 8 bytes
    ("0x2f", "0x2", ["--lbaf=31", "--ms=0", "--pi=2", "--pil=0"]),  # FLBAS bits 5-6: formats 16 to 63
])
def test_nvme_format_keeps_lba_format_and_protection_information(
        fakebin: Callable[[], list[list[str]]], monkeypatch: pytest.MonkeyPatch, flbas: str, dps: str,
        options: list[str]) -> None:
    monkeypatch.setenv("FAKE_NVME_FLBAS", flbas)
    monkeypatch.setenv("FAKE_NVME_DPS", dps)
    outcome = NvmeFormat().run(NVME, NVME_FACTS)
    id_ns = ["nvme", "id-ns", "/dev/nvme0n1", "-o", "json"]
    assert outcome.commands == fakebin() == [id_ns, ["nvme", "format", "/dev/nvme0n1", "--ses=1", *options], id_ns]
    assert outcome.ok and not outcome.is_deviation, outcome.message
    assert outcome.message.endswith("of /dev/nvme0n1 done, read back unchanged")


def test_nvme_format_that_drops_protection_information_fails(
        fakebin: Callable[[], list[list[str]]], monkeypatch: pytest.MonkeyPatch) -> None:
    """A drive (or a tool) that leaves the namespace formatted differently: the purge fails, saying how."""
    monkeypatch.setenv("FAKE_NVME_FLBAS", "0x1")
    monkeypatch.setenv("FAKE_NVME_DPS", "0x1")
    monkeypatch.setenv("FAKE_NVME_FORMAT_DROPS_PI", "1")
    outcome = NvmeFormat().run(NVME, NVME_FACTS)
    assert not outcome.ok
    assert outcome.message == ("the format changed /dev/nvme0n1: LBA format 1, PI type 1 (last 8 bytes of the "
                               "metadata) before, LBA format 1, no PI now")


def test_nvme_format_failure(fakebin: Callable[[], list[list[str]]], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKEBIN_FAIL", "nvme:format")
    outcome = NvmeFormat().run(NVME, NVME_FACTS)
    assert not outcome.ok and "injected failure" in outcome.message


def test_ata_secure_erase_commands(fakebin: Callable[[], list[list[str]]]) -> None:
    outcome = AtaSecureErase().run(SATA, SATA_FACTS)
    assert outcome.commands == fakebin() == [
        ["hdparm", "-I", "/dev/sda"],
        ["hdparm", "--user-master", "u", "--security-set-pass", ATA_TEMP_PASSWORD, "/dev/sda"],
        ["hdparm", "-I", "/dev/sda"],
        ["hdparm", "--user-master", "u", "--security-erase", ATA_TEMP_PASSWORD, "/dev/sda"],
        ["hdparm", "-I", "/dev/sda"],
    ]
    assert outcome.ok and not outcome.is_deviation


def test_ata_password_the_drive_did_not_take_stops_there(fakebin: Callable[[], list[list[str]]],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """QEMU's AHCI disk: it aborts SECURITY SET PASSWORD, hdparm exits 0 anyway (seen in the device lab)."""
    monkeypatch.setenv("FAKE_HDPARM_ABORTED", "--security-set-pass,--security-erase,--security-disable")
    outcome = AtaSecureErase().run(SATA, SATA_FACTS)
    assert not outcome.ok and "shows no password set" in outcome.message
    assert [argv[3] if len(argv) > 3 else argv[1] for argv in fakebin()] == ["-I", "--security-set-pass", "-I"]


def test_ata_erase_that_leaves_the_password_is_a_failure(fakebin: Callable[[], list[list[str]]],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_HDPARM_ABORTED", "--security-erase")
    outcome = AtaSecureErase().run(SATA, SATA_FACTS)
    assert not outcome.ok and "still has the temporary password" in outcome.message
    assert fakebin()[-1] == ["hdparm", "--user-master", "u", "--security-disable", ATA_TEMP_PASSWORD, "/dev/sda"]
    assert purge_module._password_set(CommandLog(), "/dev/sda") is False  # the fake drive's password was removed


def test_ata_failed_erase_removes_password(fakebin: Callable[[], list[list[str]]],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKEBIN_FAIL", "hdparm:--security-erase")
    outcome = AtaSecureErase().run(SATA, SATA_FACTS)
    assert not outcome.ok and "injected failure" in outcome.message
    assert fakebin()[-1] == ["hdparm", "--user-master", "u", "--security-disable", ATA_TEMP_PASSWORD, "/dev/sda"]
    assert outcome.commands == fakebin()


def test_ata_failed_password_removal_is_shouted(fakebin: Callable[[], list[list[str]]],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKEBIN_FAIL", "hdparm:--security-erase,hdparm:--security-disable")
    outcome = AtaSecureErase().run(SATA, SATA_FACTS)
    assert not outcome.ok
    assert "ALSO failed" in outcome.message and f"--security-disable {ATA_TEMP_PASSWORD} /dev/sda" in outcome.message


def test_ata_failed_set_pass_does_not_erase(fakebin: Callable[[], list[list[str]]],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKEBIN_FAIL", "hdparm:--security-set-pass")
    outcome = AtaSecureErase().run(SATA, SATA_FACTS)
    assert not outcome.ok
    assert [argv[3] for argv in fakebin()[1:]] == ["--security-set-pass"]


@pytest.mark.parametrize(("security", "reason"), [
    ("supported,not enabled,not locked,frozen", "frozen"),
    ("supported,enabled,locked,not frozen", "already set"),
    ("supported,not enabled,locked,not frozen", "locked"),
    ("not supported,not enabled,not locked,not frozen", "not supported"),
])
def test_ata_refuses_frozen_locked_unsupported(fakebin: Callable[[], list[list[str]]],
                                               monkeypatch: pytest.MonkeyPatch, security: str, reason: str) -> None:
    monkeypatch.setenv("FAKE_HDPARM_SECURITY", security)
    why_not = AtaSecureErase().applies(SATA, SATA_FACTS)
    assert why_not is not None and reason in why_not
    outcome = AtaSecureErase().run(SATA, SATA_FACTS)
    assert not outcome.ok and reason in outcome.message
    assert fakebin()[-1] == ["hdparm", "-I", "/dev/sda"]  # nothing after the check


def test_scsi_format_commands(fakebin: Callable[[], list[list[str]]]) -> None:
    outcome = ScsiFormat().run(SAS, SAS_FACTS)
    assert outcome.commands == fakebin() == [["sg_format", "--format", "--quick", "/dev/sdb"]]
    assert outcome.ok and not outcome.is_deviation  # its output is not UTF-8 (device lab: a UnicodeDecodeError)


def test_blkdiscard_is_a_deviation(fakebin: Callable[[], list[list[str]]], monkeypatch: pytest.MonkeyPatch) -> None:
    target = Target(path="/dev/vdb", kind="block", size_bytes=None, requested="/dev/vdb")
    outcome = Blkdiscard().run(target, {})
    assert outcome.commands == fakebin() == [["blkdiscard", "/dev/vdb"]]
    assert outcome.ok and outcome.is_deviation
    monkeypatch.setenv("FAKEBIN_FAIL", "blkdiscard")
    failed = Blkdiscard().run(target, {})
    assert not failed.ok and failed.is_deviation and "injected failure" in failed.message


def test_auto_order_by_device_type(fakebin: Callable[[], list[list[str]]], tmp_path: Path) -> None:
    assert choose_purge(NVME, NVME_FACTS).name == "nvme-sanitize"
    assert choose_purge(SATA, SATA_FACTS).name == "ata-secure-erase"
    assert choose_purge(SAS, SAS_FACTS).name == "scsi"
    file_target = resolve_target(str(tmp_path / "f.dat"), 4096)
    assert choose_purge(file_target, {}).name == "none"


def test_files_get_no_purge_marked_as_deviation(tmp_path: Path) -> None:
    file_target = resolve_target(str(tmp_path / "f.dat"), 4096)
    outcome = purge(file_target, {}, destructive=False)
    assert (outcome.method, outcome.ok, outcome.is_deviation, outcome.commands) == ("none", True, True, [])


def test_requested_method_that_does_not_apply(tmp_path: Path, fakebin: Callable[[], list[list[str]]]) -> None:
    file_target = resolve_target(str(tmp_path / "f.dat"), 4096)
    with pytest.raises(TargetError, match="not a block device"):
        choose_purge(file_target, {}, "blkdiscard")
    with pytest.raises(TargetError, match="not an NVMe device"):
        choose_purge(SATA, SATA_FACTS, "nvme-format")
    with pytest.raises(PtsbenchError, match="unknown purge method"):
        choose_purge(SATA, SATA_FACTS, "magic")


def test_partition_is_not_purged_device_wide(fakebin: Callable[[], list[list[str]]]) -> None:
    part = Target(path="/dev/nvme0n1p1", kind="block", size_bytes=None, requested="/dev/nvme0n1p1")
    why_not = NvmeFormat().applies(part, NVME_FACTS)
    assert why_not is not None and "partition" in why_not


def test_missing_tool_is_a_reason(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert NvmeFormat().applies(NVME, NVME_FACTS) == "nvme is not installed"
    chosen = choose_purge(NVME, NVME_FACTS)
    assert chosen.name == "none"
    assert "nvme-format: nvme is not installed" in chosen.run(NVME, NVME_FACTS).message


def test_purge_refuses_block_device_without_destructive(fakebin: Callable[[], list[list[str]]]) -> None:
    with pytest.raises(UnsafeTargetError):
        purge(NVME, NVME_FACTS, destructive=False)
    assert fakebin() == []  # refused before any tool ran


@pytest.mark.root
def test_real_blkdiscard_on_loop(tmp_path: Path) -> None:
    """Real blkdiscard: a loop device over a file punches holes, so discarded data reads back as zeros."""
    with attached_loop(str(tmp_path)) as device:
        with open(device, "r+b") as handle:
            handle.write(b"\xab" * 1024 * 1024)
            os.fsync(handle.fileno())
        target = resolve_target(device)
        if Blkdiscard().applies(target, {}) is not None:
            pytest.skip(f"blkdiscard unusable: {Blkdiscard().applies(target, {})}")
        outcome = purge(target, {"transport": "loop", "disk": device}, destructive=True)
        assert (outcome.method, outcome.ok, outcome.is_deviation) == ("blkdiscard", True, True), outcome.message
        assert outcome.commands == [["blkdiscard", device]]
        with open(device, "rb") as handle:
            assert handle.read(1024 * 1024) == bytes(1024 * 1024)


@pytest.mark.root
def test_real_blkdiscard_under_the_runs_own_claim(tmp_path: Path) -> None:
    """A run holds its device with O_EXCL while it purges (device/claim.py): the guard inside purge() does not take
    that claim for another user, and blkdiscard, which opens the device with O_EXCL too, gets --force then only."""
    with attached_loop(str(tmp_path)) as device:
        with open(device, "r+b") as handle:
            handle.write(b"\xab" * 1024 * 1024)
            os.fsync(handle.fileno())
        target = resolve_target(device)
        if Blkdiscard().applies(target, {}) is not None:
            pytest.skip(f"blkdiscard unusable: {Blkdiscard().applies(target, {})}")
        with claim_targets([device], tmp_path / "run"):
            assert in_use_reasons(device) == []
            outcome = purge(target, {"transport": "loop", "disk": device}, destructive=True)
        assert outcome.ok, outcome.message
        assert outcome.commands == [["blkdiscard", "--force", device]]
        with open(device, "rb") as handle:
            assert handle.read(1024 * 1024) == bytes(1024 * 1024)


def test_module_lists_methods_in_auto_order() -> None:
    names = [method.name for method in purge_module.purge_methods()]
    assert names == ["nvme-sanitize", "nvme-format", "ata-secure-erase", "scsi", "blkdiscard", "none"]


# Write cache (device/cache.py): same stand-ins, kept here with the other tool-driven tests.


@pytest.mark.parametrize(("target", "facts", "read_argv", "set_argv"), [
    (NVME, NVME_FACTS, ["nvme", "get-feature", "/dev/nvme0", "--feature-id=6"],
     # the controller's feature; long options: nvme-cli 2.13's -v is --verbose (the stand-in takes values as it does)
     ["nvme", "set-feature", "/dev/nvme0", "--feature-id=6", "--namespace-id=0", "--value={}"]),
    (SATA, SATA_FACTS, ["hdparm", "-W", "/dev/sda"], ["hdparm", "-W{}", "/dev/sda"]),
    (SAS, SAS_FACTS, ["sdparm", "--quiet", "--get=WCE", "/dev/sdb"], ["sdparm", "--quiet", "--set=WCE={}", "/dev/sdb"]),
])
def test_write_cache_off_and_on_read_back(fakebin: Callable[[], list[list[str]]], target: Target,
                                          facts: dict[str, object], read_argv: list[str], set_argv: list[str]) -> None:
    assert read_write_cache(target, facts) is True
    for enabled in (False, True):
        log = CommandLog()
        done, message = set_write_cache(target, facts, enabled=enabled, log=log)
        wanted_argv = [arg.format(int(enabled)) for arg in set_argv]
        assert done, message
        assert log.commands == [wanted_argv, read_argv]
        assert shlex.join(wanted_argv) in message
        assert read_write_cache(target, facts) is enabled
    assert [argv for argv in fakebin() if argv != read_argv] == [[arg.format(value) for arg in set_argv]
                                                                  for value in (0, 1)]


@pytest.mark.parametrize(("enabled", "done_wanted"), [(False, True), (True, False)])
def test_nvme_without_volatile_write_cache(fakebin: Callable[[], list[list[str]]], monkeypatch: pytest.MonkeyPatch,
                                           enabled: bool, done_wanted: bool) -> None:
    """id-ctrl VWC bit 0 clear: feature 6 aborts; off is how the drive already is, on cannot be had, and both say why
    instead of "failed"."""
    monkeypatch.setenv("FAKE_NVME_VWC", "0x6")
    assert read_write_cache(NVME, NVME_FACTS) is False
    done, message = set_write_cache(NVME, NVME_FACTS, enabled=enabled)
    assert (done, message) == (done_wanted, "/dev/nvme0 has no volatile write cache (id-ctrl VWC bit 0 clear): "
                                            f"nothing to turn {'on' if enabled else 'off'}")
    assert ["nvme", "id-ctrl", "/dev/nvme0", "-o", "json"] in fakebin()


def test_write_cache_change_ignored_by_device(fakebin: Callable[[], list[list[str]]],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_WRITE_CACHE_STUCK", "1")
    done, message = set_write_cache(SATA, SATA_FACTS, enabled=False)
    assert not done and "still reads on" in message


def test_write_cache_tool_failure(fakebin: Callable[[], list[list[str]]], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKEBIN_FAIL", "nvme:set-feature")
    done, message = set_write_cache(NVME, NVME_FACTS, enabled=True)
    assert not done and "injected failure" in message
    monkeypatch.setenv("FAKEBIN_FAIL", "nvme:get-feature")
    assert read_write_cache(NVME, NVME_FACTS) is None  # no sysfs entry for this fake device either


def test_write_cache_of_file_is_left_alone(tmp_path: Path, fakebin: Callable[[], list[list[str]]]) -> None:
    done, message = set_write_cache(resolve_target(str(tmp_path / "f.dat")), {}, enabled=False)
    assert not done and "left as is" in message
    assert fakebin() == []


@pytest.mark.root
def test_write_cache_of_loop_from_sysfs(tmp_path: Path) -> None:
    with attached_loop(str(tmp_path)) as device:
        target = resolve_target(device)
        sysfs = Path(f"/sys/class/block/{os.path.basename(device)}/queue/write_cache").read_text().strip()
        assert read_write_cache(target, {"transport": "loop", "disk": device}) is (sysfs == "write back")
        done, message = set_write_cache(target, {"transport": "loop", "disk": device}, enabled=False)
        assert not done and "cannot set" in message


# what the tools printed here (nvme-cli 2.4, sg3_utils 1.46, smartctl 7.3, hdparm 9.65), usage texts shortened
NVME_USAGE = ("\x1b[1mUsage: nvme set-feature <device> [OPTIONS]\x1b[0m\n\nModify the saveable or changeable current "
              "operating parameters of the\n\n\x1b[1mOptions:\x1b[0m\n  [  --namespace-id=<NUM>, -n <NUM> ]   --- "
              "desired namespace\n  [  --save, -s ]                       --- specifies that the controller\n"
              "                                            shall save the attribute\n")


@pytest.mark.parametrize(("stdout", "stderr", "said"), [
    ("", "NVMe status: Feature Not Namespace Specific: The Feature Identifier specified is not namespace "
     "specific(0x410f)\n" + NVME_USAGE,
     "NVMe status: Feature Not Namespace Specific: The Feature Identifier specified is not namespace specific(0x410f)"),
    ("", "/dev/nvme9: No such file or directory\n" + NVME_USAGE, "/dev/nvme9: No such file or directory"),
    ("", "set-feature: unrecognized option '--bogus'\n" + NVME_USAGE, "set-feature: unrecognized option '--bogus'"),
    ("", NVME_USAGE, "it printed only its usage text (options this version does not take)"),
    ("smartctl 7.3 2022-02-28 r5338 [x86_64-linux-6.1.0] (local build)\nCopyright (C) 2002-22, Bruce Allen\n\n"
     "/dev/nonexist: Unable to detect device type\nPlease specify device type with the -d option.\n\n"
     "Use smartctl -h to get a usage summary\n\n", "", "Please specify device type with the -d option."),
    ("", "sg_format: unrecognized option '--bogus'\nUsage:\n  sg_format [--cmplst=0|1] [--count=COUNT] [--dcrt]\n",
     "sg_format: unrecognized option '--bogus'"),
    ("", "error opening device file: /dev/nonexist: No such file or directory\nsg_format failed: No such file or "
     "directory\n", "sg_format failed: No such file or directory"),
    ("", "/dev/nonexist: No such file or directory\n", "/dev/nonexist: No such file or directory"),
    ("", "", "no message"),
])
def test_a_tool_failure_is_told_by_its_error_line_never_its_usage_text(stdout: str, stderr: str, said: str) -> None:
    import subprocess

    done = subprocess.CompletedProcess(["nvme", "set-feature"], 1, stdout, stderr)
    assert purge_module.tool_message(done) == f"nvme exited with status 1: {said}"
