"""The plan of each test equals the spec (cells, order, TC/QD, tracked variables) for both profiles and both spec
versions; job files, preconditioning amounts, sequential carry-over and deviations."""

import pytest

from ptsbench.errors import PtsbenchError
from ptsbench.fio.jobs import parse_job_text
from ptsbench.pts.params import Settings
from ptsbench.pts.plan import (
    Plan,
    SeqStart,
    TargetInfo,
    make_plan,
    next_seq_offset,
    precondition_job,
    round_job,
    round_seed,
)
from ptsbench.pts.settings import RunChoices, make_settings, parse_overrides

TB = 10**12
GIB = 1024**3
IOPS_MIXES = [100, 95, 65, 50, 35, 5, 0]
IOPS_BS = [1024**2, 128 * 1024, 64 * 1024, 32 * 1024, 16 * 1024, 8 * 1024, 4 * 1024, 512]


def device(size: int = TB, logical: int = 512, physical: int = 512) -> TargetInfo:
    return TargetInfo("/dev/nvme9n1", "block", size, logical, physical, "io_uring")


def plan_for(
    profile: str = "enterprise", spec: str = "2.0", target: TargetInfo | None = None, **kwargs: object
) -> Plan:
    return make_plan(make_settings(profile, spec, **kwargs), target or device())  # type: ignore[arg-type]


def cells(plan: Plan, key: str) -> list[tuple[str, int, int, int, int]]:
    return [(c.pattern, c.read_pct, c.bs_bytes, c.numjobs, c.iodepth) for c in plan.phase(key).cells]


@pytest.mark.parametrize(("profile", "tc", "qd", "spec"),
                         [("enterprise", 4, 32, "2.0"), ("enterprise", 4, 32, "1.1"), ("client", 2, 16, "2.0")])
def test_iops_round_is_mix_outer_block_size_inner(profile: str, tc: int, qd: int, spec: str) -> None:
    plan = plan_for(profile, spec)
    expected = [("rnd", mix, bs, tc, qd) for mix in IOPS_MIXES for bs in IOPS_BS]
    assert cells(plan, "iops") == expected
    phase = plan.phase("iops").phase
    assert phase.purge and phase.precondition is not None
    assert (phase.precondition.bs_bytes, phase.precondition.multiple) == (128 * 1024, 2.0)
    assert (phase.stop.kind, phase.stop.max_rounds, phase.stop.window) == ("steady", 25, 5)
    assert all(cell.runtime_s == 60 for cell in plan.phase("iops").cells)


def test_tracked_iops_variables_by_spec_version() -> None:
    pts2 = plan_for("client", "2.0").phase("iops").phase.tracked
    pts11 = plan_for("enterprise", "1.1").phase("iops").phase.tracked
    assert [(t.cell, t.metric) for t in pts2] == [
        ("rnd 4k 0/100", "iops"), ("rnd 64k 65/35", "iops"), ("rnd 1m 100/0", "iops")]
    assert [(t.cell, t.metric) for t in pts11] == [("rnd 4k 0/100", "iops")]


def test_tracked_cells_are_found_by_name_not_position() -> None:
    plan = plan_for()
    phase = plan.phase("iops")
    by_name = {cell.name: cell for cell in phase.cells}
    assert by_name["rnd 4k 0/100"].bs_bytes == 4096 and by_name["rnd 4k 0/100"].read_pct == 0
    assert by_name["rnd 64k 65/35"].read_pct == 65 and by_name["rnd 1m 100/0"].bs_bytes == 1024**2


def test_throughput_one_phase_per_block_size_with_its_own_preconditioning() -> None:
    enterprise, client = plan_for("enterprise"), plan_for("client")
    assert [p.key for p in enterprise.phases] == ["iops", "tp-1m", "tp-128k", "lat", "lat-histogram", "wsat"]
    assert [p.key for p in client.phases] == ["iops", "tp-1m", "lat", "lat-histogram", "wsat"]
    assert [p.key for p in plan_for("enterprise", "1.1").phases] == ["iops", "tp-1m", "tp-128k", "lat", "wsat"]
    for key, bs in (("tp-1m", 1024**2), ("tp-128k", 128 * 1024)):
        phase = enterprise.phase(key)
        assert cells(enterprise, key) == [("seq", 100, bs, 1, 32), ("seq", 0, bs, 1, 32)]
        assert phase.phase.purge and phase.phase.precondition is not None
        assert phase.phase.precondition.bs_bytes == bs
        assert [(t.cell, t.metric) for t in phase.phase.tracked] == [(f"seq {'1m' if bs == 1024**2 else '128k'} 0/100",
                                                                      "bw_bytes")]


def test_throughput_spec_1_1_uses_the_profile_depth() -> None:
    assert cells(plan_for("enterprise", "1.1"), "tp-1m")[0][3:] == (4, 32)


def test_client_profile_under_pts_e_1_1_is_refused() -> None:
    with pytest.raises(PtsbenchError, match="no client profile"):
        make_settings("client", "1.1")


@pytest.mark.parametrize(("profile", "spec"), [("enterprise", "2.0"), ("enterprise", "1.1"), ("client", "2.0")])
def test_latency_at_tc1_qd1(profile: str, spec: str) -> None:
    plan = plan_for(profile, spec)
    expected = [("rnd", mix, bs, 1, 1) for mix in (100, 65, 0) for bs in (8192, 4096, 512)]
    assert cells(plan, "lat") == expected
    assert [(t.cell, t.metric) for t in plan.phase("lat").phase.tracked] == [("rnd 4k 0/100", "lat_mean_ns")]


@pytest.mark.parametrize(("profile", "tc", "qd"), [("enterprise", 4, 32), ("client", 2, 16)])
def test_write_saturation(profile: str, tc: int, qd: int) -> None:
    plan = plan_for(profile)
    phase = plan.phase("wsat").phase
    assert cells(plan, "wsat") == [("rnd", 0, 4096, tc, qd)]
    assert phase.purge and phase.precondition is None and phase.tracked == ()
    assert (phase.stop.kind, phase.stop.capacity_multiple, phase.stop.max_time_s) == ("written", 4.0, 86400.0)
    assert phase.stop.max_rounds == 24 * 60


def test_active_range_and_write_cache_per_profile() -> None:
    enterprise, client = plan_for("enterprise"), plan_for("client")
    assert enterprise.settings.write_cache == "disabled" and client.settings.write_cache == "enabled"
    assert enterprise.active_range_bytes <= TB < enterprise.active_range_bytes + 1024**2
    assert enterprise.segments is None and client.segments is not None
    segments = client.segments
    assert segments.count == 2048 and segments.stride_bytes * 2048 <= TB < (segments.stride_bytes + 1024**2) * 2048
    assert segments.size_bytes <= 0.75 * segments.stride_bytes < segments.size_bytes + 1024**2
    assert client.active_range_bytes == 2048 * segments.size_bytes


def test_compliant_profiles_have_no_deviations_and_demo_lists_them() -> None:
    for profile, spec in (("enterprise", "2.0"), ("enterprise", "1.1"), ("client", "2.0")):
        assert plan_for(profile, spec).deviations == ()
    demo = plan_for("demo")
    text = "\n".join(demo.deviations)
    for expected in ("0.5 s per cell (PTS: 60 s)", "at most 5 rounds", "time limit", "mixes 100/0,65/35,0/100"):
        assert expected in text


def test_overrides_are_deviations() -> None:
    overrides = parse_overrides({"round_time_s": ["30"], "numjobs": ["iops=8"]}, ("iops", "lat"))
    plan = plan_for(tests=("iops", "lat"), overrides=overrides,
                    choices=RunChoices(active_range_pct=50.0, wipc_multiple=1.0, ramp_time_s=5.0))
    text = "\n".join(plan.deviations)
    assert "IOPS: 30 s per cell" in text and "Latency: 30 s per cell" in text
    assert "IOPS: TC8/QD32 (PTS enterprise: TC4/QD32)" in text
    assert "active range 50 %" in text and "1 x the active range" in text and "ramp time 5 s" in text
    assert cells(plan, "iops")[0][3] == 8 and cells(plan, "lat")[0][3] == 1


def test_parse_overrides_plain_and_per_test() -> None:
    parsed = parse_overrides({"block_sizes": ["4k,64k", "lat=8k"], "mixes": ["65/35,0"], "round_time_s": ["500ms"]},
                             ("iops", "lat"))
    assert parsed["iops"]["block_sizes"] == (4096, 65536)
    assert parsed["lat"]["block_sizes"] == (8192,)
    assert parsed["iops"]["mixes"] == (65, 0) and parsed["lat"]["round_time_s"] == 0.5
    with pytest.raises(PtsbenchError, match="unknown test"):
        parse_overrides({"numjobs": ["nope=4"]}, ("iops",))
    with pytest.raises(PtsbenchError, match="positive whole number"):
        parse_overrides({"numjobs": ["0"]}, ("iops",))


def test_four_k_native_device_skips_half_k_cells_with_a_note() -> None:
    plan = plan_for(target=device(logical=4096, physical=4096))
    assert all(cell.bs_bytes >= 4096 for phase in plan.phases for cell in phase.cells)
    assert len(plan.phase("iops").cells) == 49 and len(plan.phase("lat").cells) == 6
    assert plan.phase("iops").skipped[0] == "rnd 512 100/0"
    assert any("IOPS: 7 cell(s) below the 4096-byte logical sector skipped" in note for note in plan.notes)
    assert [t.cell for t in plan.phase("iops").phase.tracked] == ["rnd 4k 0/100", "rnd 64k 65/35", "rnd 1m 100/0"]


def test_512e_device_keeps_half_k_cells_and_says_they_measure_rmw() -> None:
    plan = plan_for(target=device(logical=512, physical=4096))
    assert len(plan.phase("iops").cells) == 56
    assert any("read-modify-write" in note for note in plan.notes)


def test_removing_a_tracked_cell_is_refused() -> None:
    overrides = parse_overrides({"block_sizes": ["iops=8k,64k,1m"]}, ("iops",))
    with pytest.raises(PtsbenchError, match="tracked variable 'rnd 4k 0/100'"):
        plan_for(tests=("iops",), overrides=overrides)


def test_too_small_target_is_refused() -> None:
    with pytest.raises(PtsbenchError, match="too small"):
        plan_for(target=device(size=1024**2 - 4096))
    with pytest.raises(PtsbenchError, match="too small for 2048 segments"):
        plan_for("client", target=device(size=2048 * 1024**2))


def test_round_job_file_has_one_stonewalled_job_per_cell_in_order() -> None:
    plan = plan_for()
    phase = plan.phase("iops")
    job = round_job(plan, phase, seed=1234)
    sections = parse_job_text(job.text, "round")
    assert [s.name for s in sections] == [name for name, _ in job.jobs]
    assert [cell for _, cell in job.jobs] == [cell.name for cell in phase.cells]
    first = sections[0]
    for flag in ("stonewall", "time_based", "refill_buffers", "norandommap"):
        assert first.has(flag)
    assert first.get("direct") == "1" and first.get("randrepeat") == "0" and first.get("randseed") == "1234"
    assert first.get("random_generator") == "tausworthe64" and first.get("ramp_time") == "0s"
    assert first.get("ioengine") == "io_uring" and first.get("runtime") == "60s"
    assert first.get("lat_percentiles") == "1"
    assert (first.get("percentile_list") or "").split(":")[-2:] == ["99.999", "99.9999"]  # six nines for targets
    mixed = next(s for s in sections if s.get("rw") == "randrw")
    assert mixed.get("rwmixread") == "95" and mixed.get("numjobs") == "4" and mixed.get("iodepth") == "32"
    assert sections[-1].get("rw") == "randwrite" and sections[-1].get("bs") == "512"
    assert all(s.get("size") == str(plan.active_range_bytes) for s in sections)


def test_round_seeds_are_recorded_per_round_and_reproducible() -> None:
    seeds = {round_seed(99, "iops", n) for n in range(1, 26)}
    assert len(seeds) == 25
    assert round_seed(99, "iops", 3) == round_seed(99, "iops", 3) != round_seed(98, "iops", 3)


@pytest.mark.parametrize("profile", ["enterprise", "client", "demo"])
def test_preconditioning_is_one_stream_writing_twice_the_range(profile: str) -> None:
    """WIPC: one sequential stream at TC1/QD32 from LBA 0, twice the active range (client: twice every LBA the
    segments spread over, i.e. the user capacity to under one stride)."""
    size = 10 * GIB + 12345
    plan = plan_for(profile, target=device(size=size))
    phase = plan.phase("iops")
    (section,) = parse_job_text(precondition_job(plan, phase), "wipc")
    covered, io_size = int(section.get("size") or 0), int(section.get("io_size") or 0)
    assert section.get("rw") == "write" and section.get("bs") == "128k" and section.get("offset") == "0"
    assert (section.get("numjobs"), section.get("iodepth")) == ("1", "32") and not section.has("offset_increment")
    assert covered == plan.precondition_range_bytes and io_size == 2 * covered == phase.precondition_bytes
    assert covered % (128 * 1024) == 0
    if profile == "client":
        assert size - size // 2048 <= covered <= size
    else:
        assert covered == plan.active_range_bytes


def test_sequential_cell_carries_on_where_the_previous_round_stopped() -> None:
    plan = plan_for(target=device(size=64 * GIB))
    phase = plan.phase("tp-1m")
    write = phase.cells[1]
    region = plan.stream_bytes(phase.phase, write)
    fresh = parse_job_text(round_job(plan, phase, 1).text, "r1")
    assert [s.get("offset") for s in fresh] == ["0", "0"]
    start = 60 * 1024**3
    rate = 1e9  # bytes/s per thread: the 4 GiB left take 4.29 s of the 60 s round
    job = round_job(plan, phase, 2, {write.name: SeqStart(start, rate)})
    sections = parse_job_text(job.text, "r2")
    part_a, part_b = sections[1], sections[2]
    assert [name for name, _ in job.jobs][1:] == ["c01-seq-1m-0-100-a", "c01-seq-1m-0-100-b"]
    assert (part_a.get("offset"), part_a.get("size")) == (str(start), str(region - start))
    assert not part_a.has("time_based") and part_a.get("runtime") == "60s"
    assert part_b.get("offset") == "0" and part_b.has("time_based")
    assert part_b.get("runtime") == f"{round((60 - (region - start) / rate) * 1000)}ms"
    assert job.seq_starts[write.name] == start
    assert next_seq_offset(plan, phase.phase, write, start, (region - start) + 5 * 1024**3) == 5 * 1024**3
    assert next_seq_offset(plan, phase.phase, write, 0, 3 * 1024**3 + 100) == 3 * 1024**3


def test_settings_survive_the_store_round_trip() -> None:
    settings = make_settings("demo", "1.1", ("iops", "wsat"), parse_overrides({"numjobs": ["iops=3"]}, ("iops",)))
    assert Settings.from_dict(settings.to_dict()) == settings


def test_overridden_matrix_runs_in_spec_order_without_duplicates() -> None:
    """A reduced or reordered matrix still nests as the spec requires (mixes from all reads to all writes, block
    sizes from largest to smallest); a value given twice is one cell (or one throughput phase), not two."""
    overrides = parse_overrides({"block_sizes": ["iops=4k,1m,64k,4k", "tp=128k,1m,1m"], "mixes": ["iops=0,100,65,0"]},
                                ("iops", "tp"))
    plan = plan_for(tests=("iops", "tp"), overrides=overrides)
    expected = [("rnd", mix, bs, 4, 32) for mix in (100, 65, 0) for bs in (1024**2, 64 * 1024, 4096)]
    assert cells(plan, "iops") == expected
    assert [phase.key for phase in plan.phases] == ["iops", "tp-1m", "tp-128k"]
    full = parse_overrides({"block_sizes": ["iops=" + ",".join(str(bs) for bs in reversed(IOPS_BS))]}, ("iops",))
    assert not any("block sizes" in reason for reason in plan_for(tests=("iops",), overrides=full).deviations)


def test_sprandom_replaces_the_random_tests_wipc_and_is_a_deviation() -> None:
    """--precondition sprandom: the IOPS and latency tests are preconditioned by one fio sprandom job over the
    range (4 KiB random writes, fio's lfsr generator, which sprandom requires, the over-provisioning given), planned
    as the range and its over-provisioning once; throughput keeps its WIPC at the tested block size; the plan says
    so as a deviation, and the choice survives the store."""
    size = 10 * GIB + 12345
    settings = make_settings("enterprise", "2.0", ("iops", "tp", "lat"),
                             choices=RunChoices(precondition="sprandom", sprandom_op=0.07))
    plan = make_plan(settings, device(size=size))
    for key in ("iops", "lat"):
        phase = plan.phase(key)
        (section,) = parse_job_text(precondition_job(plan, phase), "sprandom")
        assert (section.get("rw"), section.get("bs"), section.get("sprandom"), section.get("spr_op")) == (
            "randwrite", "4k", "1", "0.07")
        assert section.get("random_generator") == "lfsr" and section.get("offset") == "0"
        assert int(section.get("size") or 0) == plan.precondition_range_bytes // 4096 * 4096
        assert phase.precondition_bytes == round(plan.precondition_range_bytes * 1.07)
    (wipc,) = parse_job_text(precondition_job(plan, plan.phase("tp-1m")), "wipc")
    assert (wipc.get("rw"), wipc.get("bs"), wipc.has("sprandom")) == ("write", "1m", False)
    assert wipc.get("random_generator") == "tausworthe64"
    assert [reason for reason in plan.deviations if "sprandom" in reason] == [
        "IOPS, Latency: preconditioned by fio's sprandom (4 KiB random writes of the range and 0.07 "
        "over-provisioning once, fio's lfsr generator), not WIPC (PTS: 2 x the active range of sequential 128 KiB "
        "writes)"]
    assert Settings.from_dict(settings.to_dict()) == settings
    assert not [reason for reason in plan_for().deviations if "sprandom" in reason]  # WIPC: the default
    old = {key: value for key, value in settings.to_dict().items() if key not in ("precondition", "sprandom_op")}
    assert Settings.from_dict(old).precondition == "wipc"  # a run stored before the option: WIPC, as it ran
