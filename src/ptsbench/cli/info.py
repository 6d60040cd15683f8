"""`ptsbench info TARGET [--json]`: print target and host facts."""

import json

import click


@click.command()
@click.argument("target")
@click.option("--json", "as_json", is_flag=True, help="Print the facts as JSON instead of a table.")
def info(target: str, as_json: bool) -> None:
    """Print what ptsbench knows about TARGET (file, folder or block device) and this host.

    Nothing is written. Facts not exposed by the system are shown as unknown (null in JSON).

    \b
    Examples:
      ptsbench info /dev/nvme0n1
      ptsbench info /mnt/test                 # the filesystem and the disk under it
      ptsbench info /dev/sda --json > facts.json
    """
    from ptsbench import __version__
    from ptsbench.device.info import host_facts, target_facts
    from ptsbench.device.target import resolve_target
    from ptsbench.fio.lifetime import start_way
    from ptsbench.fio.log_reader import reader_name

    found = target_facts(resolve_target(target))
    facts: dict[str, dict[str, object]] = {
        "target": found, **_fdp_section(found), "host": host_facts(),
        # which parser reads fio logs here, and how fio is started
        "ptsbench": {"version": __version__, "fio_log_reader": reader_name(), "fio_start": start_way()},
    }
    if as_json:
        click.echo(json.dumps(facts, indent=2))
        return
    _print_tables(facts)


def _fdp_section(found: dict[str, object]) -> dict[str, dict[str, object]]:
    """An NVMe namespace's Flexible Data Placement (device/fdp.py), read with nvme-cli; nothing for other targets."""
    import shutil

    from ptsbench.device.fdp import read_fdp

    disk, controller = found.get("disk"), found.get("nvme_controller")
    if not str(found.get("transport") or "").startswith("nvme") or not isinstance(disk, str):
        return {}
    if not shutil.which("nvme"):
        return {"fdp": {"fdp": None, "fdp_note": "not read: nvme-cli not installed"}}
    return {"fdp": read_fdp(controller if isinstance(controller, str) else disk, disk)}


_TITLES = {"fdp": "Flexible Data Placement"}
_LABELS = {
    "size_bytes": "size",
    "memory_bytes": "memory",
    "logical_sector_bytes": "logical sector",
    "physical_sector_bytes": "physical sector",
    "nvme_controller": "NVMe controller",
    "backing_device": "backing device",
    "backing_file": "backing file",
    "write_cache": "write cache",
    "cpu_model": "CPU model",
    "cpu_count": "CPUs",
    "os": "OS",
    "fio_log_reader": "fio log reader",
    "fio_start": "fio started by",
    "metadata_bytes": "metadata per block",
    "protection_information": "protection information",
    "fdp": "FDP",
    "fdp_config_index": "FDP configuration",
    "fdp_reclaim_groups": "reclaim groups",
    "fdp_reclaim_unit_handles": "reclaim unit handles",
    "fdp_reclaim_unit_bytes": "reclaim unit size",
    "fdp_placement_ids": "placement handles (fio plids)",
    "fdp_note": "note",
}


def _print_tables(facts: dict[str, dict[str, object]]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    for title, section in facts.items():
        table = Table(title=_TITLES.get(title, title.capitalize()), show_header=False, title_justify="left")
        table.add_column("fact", style="bold")
        table.add_column("value")
        for key, value in section.items():
            if value is None and not _applies(key, section):
                continue
            table.add_row(_LABELS.get(key, key.replace("_", " ")), _format_value(key, value))
        console.print(table)


def _applies(key: str, section: dict[str, object]) -> bool:
    """Whether a fact means anything for this target: 'unknown' is for facts that apply but could not be read."""
    transport = str(section.get("transport") or "")
    if key.startswith("fdp_"):  # FDP's details exist only while it is enabled; the note only when there is one
        return key != "fdp_note" and section.get("fdp") == "enabled"
    if key in ("filesystem", "backing_device"):
        return section.get("kind") != "block"
    if key == "backing_file":
        return transport == "loop"
    if key in ("nvme_controller", "metadata_bytes"):
        return transport.startswith("nvme")
    if key in ("zoned", "protection_information"):
        return section.get("kind") == "block"
    return True


def _format_value(key: str, value: object) -> str:
    """Human text for one fact; sizes show the exact byte count next to the binary-unit figure."""
    from rich.markup import escape

    from ptsbench.units import format_bytes

    if value is None:
        return "[dim]unknown[/dim]"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "none"
    if key.endswith("_bytes") and isinstance(value, int):
        return f"{format_bytes(value)} ({value} bytes)" if value >= 1024 else f"{value} bytes"
    return escape(str(value))
