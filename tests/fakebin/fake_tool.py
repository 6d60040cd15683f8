"""Stand-in for nvme, hdparm, sdparm, sg_format, sg_sanitize and blkdiscard, for fault injection.

The sh scripts of those names run `$FAKEBIN_PYTHON fake_tool.py TOOL ARGS...`.

Every call appends its argv as one JSON line to $FAKEBIN_LOG. $FAKEBIN_FAIL lists comma-separated "tool" or
"tool:argument" entries that make matching calls fail (exit 5, message on stderr). Device state that the code
reads back (write cache, sanitize progress) lives in $FAKEBIN_LOG.state.json. Knobs: FAKE_NVME_SANICAP,
FAKE_NVME_FLBAS and FAKE_NVME_DPS (the namespace's format; `format` changes them as a drive does, PI dropped
with FAKE_NVME_FORMAT_DROPS_PI), FAKE_SANITIZE_BUSY_POLLS, FAKE_SANITIZE_SSTAT,
FAKE_SANITIZE_IN_PROGRESS (a sanitize already runs), FAKE_SANITIZE_TIME_S (the sanitize log's estimated times),
FAKE_HDPARM_SECURITY, FAKE_HDPARM_ABORTED (security commands the drive aborts while hdparm exits 0, as QEMU's AHCI
disk does), FAKE_WRITE_CACHE,
FAKE_WRITE_CACHE_STUCK (the device ignores write-cache changes), FAKE_NVME_SMART_LOG, FAKE_NVME_OCP_LOG,
FAKE_NVME_FDP_STATS, FAKE_NVME_FDP_CONFIGS, FAKE_NVME_FDP_STATUS, FAKE_NVME_ERROR_LOG and
FAKE_SMARTCTL_JSON (files whose text `nvme smart-log`, `nvme ocp smart-add-log`, `nvme fdp stats|configs|status`,
`nvme error-log` and `smartctl` print), FAKE_NVME_LATENCY_LOG and FAKE_NVME_C0H_LOG (files whose bytes
`nvme get-log CTRL --log-id=0xc3|0xc0 ... --raw-binary` prints: the OCP C3h and C0h pages; unset, the log is
invalid, exit status 1); the nvme ones may name several files, served one per call; smartctl exits with the
document's smartctl.exit_status),
FAKE_NVME_FDP_FEATURE (feature 1Dh's value), FAKE_NVME_VWC (id-ctrl's VWC field: bit 0 clear, no volatile write
cache, and feature 6 aborts). `nvme set-feature` takes its value as nvme-cli 2.13 does: `--value=N` or `-V N`;
`-v` is --verbose there and a value not given is 0.
"""

import json
import os
import sys
from pathlib import Path

TOOL = sys.argv[1]
ARGS = sys.argv[2:]
ENV = os.environ


def main() -> int:
    log = ENV["FAKEBIN_LOG"]
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(json.dumps([TOOL, *ARGS]) + "\n")
    for entry in filter(None, ENV.get("FAKEBIN_FAIL", "").split(",")):
        tool, _, argument = entry.partition(":")
        if tool == TOOL and (not argument or argument in ARGS):
            print(f"{TOOL}: injected failure ({entry})", file=sys.stderr)
            return 5
    state_path = log + ".state.json"
    state = json.loads(Path(state_path).read_text(encoding="utf-8")) if os.path.exists(state_path) else {}
    if TOOL == "nvme" and ARGS[0] == "set-feature" and "--namespace-id=0" not in ARGS:
        print("NVMe status: Feature Not Namespace Specific: The Feature Identifier specified is not namespace "
              "specific(0x410f)", file=sys.stderr)  # what a real controller answers for feature 6 (VWC)
        return 1
    if TOOL == "nvme" and ARGS[0] in ("get-feature", "set-feature") and "0x1d" not in ARGS and not int(
            ENV.get("FAKE_NVME_VWC", "7"), 0) & 1:  # a controller without a volatile write cache aborts feature 6
        print("NVMe status: Invalid Field in Command: A reserved coded value or an unsupported value in a defined "
              "field(0x4002)", file=sys.stderr)
        return 1
    output = {"nvme": nvme, "hdparm": hdparm, "sdparm": sdparm, "smartctl": smartctl}.get(
        TOOL, lambda _state: "")(state)
    with open(state_path, "w", encoding="utf-8") as handle:
        json.dump(state, handle)
    if isinstance(output, bytes):  # a log page's bytes (`nvme get-log --raw-binary`)
        sys.stdout.buffer.write(output)
        return 0
    sys.stdout.write(output)
    if TOOL == "sg_format":  # like on QEMU's scsi-hd: the LU name (a binary NAA id) printed as raw bytes
        sys.stdout.flush()
        sys.stdout.buffer.write(b"      LU name: \xd8\x43\x5c\x00\x01\nFORMAT UNIT Complete\n")
    return json.loads(output).get("smartctl", {}).get("exit_status", 0) if TOOL == "smartctl" else 0


def _next_file(state: dict, name: str) -> str:
    """The text of the file $name names; with several (os.pathsep between them), the next one each call and the
    last one from then on: counters that grow between readings."""
    return _next_path(state, name).read_text(encoding="utf-8")


def _next_path(state: dict, name: str) -> Path:
    paths = ENV[name].split(os.pathsep)
    calls = state[name] = state.get(name, 0) + 1
    return Path(paths[min(calls, len(paths)) - 1])


def nvme(state: dict) -> str | bytes:
    command = ARGS[0]
    if command == "get-log" and "--raw-binary" in ARGS:  # C3h and C0h pages: $FAKE_NVME_LATENCY_LOG, ..._C0H_LOG
        log_id = next((arg for arg in ARGS if arg.startswith("--log-id=")), "")
        name = {"--log-id=0xc3": "FAKE_NVME_LATENCY_LOG", "--log-id=0xc0": "FAKE_NVME_C0H_LOG"}.get(log_id, "")
        if name not in ENV:  # a drive without the log: nvme-cli's status on stderr
            print("NVMe status: Invalid Log Page: The log page indicated is invalid(0x4109)", file=sys.stderr)
            sys.exit(1)
        return _next_path(state, name).read_bytes()
    if command == "id-ctrl":
        return json.dumps({"mn": "FAKE NVME", "sanicap": int(ENV.get("FAKE_NVME_SANICAP", "3"), 0),
                           "vwc": int(ENV.get("FAKE_NVME_VWC", "7"), 0)})
    if command == "id-ns":
        flbas = state.get("flbas", int(ENV.get("FAKE_NVME_FLBAS", "0"), 0))
        dps = state.get("dps", int(ENV.get("FAKE_NVME_DPS", "0"), 0))
        return json.dumps({"nsze": 1000, "flbas": flbas, "dps": dps})
    if command == "format":  # like nvme-cli: --ms, --pi and --pil not given are 0
        given = dict(arg[2:].split("=", 1) for arg in ARGS if arg.startswith("--") and "=" in arg)
        lbaf, ms = int(given.get("lbaf", "0")), int(given.get("ms", "0"))
        state["flbas"] = (lbaf & 0xF) | ms << 4 | (lbaf >> 4) << 5
        state["dps"] = 0 if ENV.get("FAKE_NVME_FORMAT_DROPS_PI") else int(given.get("pi", "0")) | int(
            given.get("pil", "0")) << 3
    if command == "sanitize":
        state["sanitizing"], state["sanitize_polls"] = True, 0
    if command == "sanitize-log":
        if not state.get("sanitizing", bool(ENV.get("FAKE_SANITIZE_IN_PROGRESS"))):  # never sanitized
            estimate = int(ENV.get("FAKE_SANITIZE_TIME_S", "0xFFFFFFFF"), 0)  # all ones: the drive gives none
            return json.dumps({"nvme0": {"sprog": 65535, "sstat": 0, "cdw10_info": 0, "time_block_erase": estimate,
                                         "time_crypto_erase": estimate, "time_over_write": estimate}})
        polls = state["sanitize_polls"] = state.get("sanitize_polls", 0) + 1
        busy = polls <= int(ENV.get("FAKE_SANITIZE_BUSY_POLLS", "1"))
        sstat = 0x2 if busy else int(ENV.get("FAKE_SANITIZE_SSTAT", "0x101"), 0)
        return json.dumps({"nvme0": {"sprog": 32768 if busy else 65535, "sstat": sstat, "cdw10_info": 2}})
    logs = {"smart-log": "FAKE_NVME_SMART_LOG", "error-log": "FAKE_NVME_ERROR_LOG", "ocp": "FAKE_NVME_OCP_LOG",
            "stats": "FAKE_NVME_FDP_STATS",
            "configs": "FAKE_NVME_FDP_CONFIGS", "status": "FAKE_NVME_FDP_STATUS"}
    name = logs.get(ARGS[1] if command == "fdp" else command, "")
    if name:  # a drive without the log: nothing on stdout (nvme-cli prints its error on stderr)
        return _next_file(state, name) if name in ENV else ""
    if command == "get-feature" and "0x1d" in ARGS:
        return f"get-feature:0x1d (Flexible Data Placement), Current value:{ENV['FAKE_NVME_FDP_FEATURE']}\n" \
            if "FAKE_NVME_FDP_FEATURE" in ENV else ""
    if command == "get-feature":
        value = state.get("write_cache", int(ENV.get("FAKE_WRITE_CACHE", "1")))
        return f"get-feature:0x06 (Volatile Write Cache), Current value:{value:#010x}\n"
    if command == "set-feature":
        given = [arg.removeprefix("--value=") for arg in ARGS if arg.startswith("--value=")]
        given += [ARGS[i + 1] for i, arg in enumerate(ARGS[:-1]) if arg == "-V"]
        value = int(given[-1], 0) if given else 0
        if not ENV.get("FAKE_WRITE_CACHE_STUCK"):
            state["write_cache"] = value
        return f"set-feature:0x06 (Volatile Write Cache), value:{value:#010x}, cdw12:0, save:0\n"
    return "Success\n"


def sdparm(state: dict) -> str:
    """The WCE bit of the caching mode page: --set=WCE=N changes it, --get=WCE prints it."""
    for arg in ARGS:
        if arg.startswith("--set=WCE=") and not ENV.get("FAKE_WRITE_CACHE_STUCK"):
            state["write_cache"] = int(arg[-1])
    value = state.get("write_cache", int(ENV.get("FAKE_WRITE_CACHE", "1")))
    return f"WCE           {value}  [cha: y, def:  1]\n" if "--get=WCE" in ARGS else ""


def smartctl(_state: dict) -> str:
    return Path(ENV["FAKE_SMARTCTL_JSON"]).read_text(encoding="utf-8")


def hdparm(state: dict) -> str:
    device = ARGS[-1]
    if ARGS[0] == "-I":
        lines = ENV.get("FAKE_HDPARM_SECURITY", "supported,not enabled,not locked,not frozen").split(",")
        if "password" in state:  # what the commands below left on the drive
            lines = [("enabled" if state["password"] else "not enabled") if line.endswith("enabled") else line
                     for line in lines]
        security = "".join(f"\t\t{line}\n" if " " not in line else f"\t{line.replace(' ', chr(9))}\n"
                           for line in lines)
        return (f"\n{device}:\n\nATA device, with non-removable media\n\tModel Number:       FAKE SSD\n"
                f"Security: \n\tMaster password revision code = 65534\n{security}"
                "\t2min for SECURITY ERASE UNIT. 2min for ENHANCED SECURITY ERASE UNIT.\n"
                "Logical Unit WWN Device Identifier: 5000000000000000\n")
    if ARGS[0] in ("-W0", "-W1") and not ENV.get("FAKE_WRITE_CACHE_STUCK"):
        state["write_cache"] = int(ARGS[0][2])
    if ARGS[0].startswith("-W"):
        value = state.get("write_cache", int(ENV.get("FAKE_WRITE_CACHE", "1")))
        return f"\n{device}:\n write-caching =  {value} ({'on' if value else 'off'})\n"
    aborted = ENV.get("FAKE_HDPARM_ABORTED", "").split(",")  # the drive aborts these, hdparm still exits 0
    for command, password in (("--security-set-pass", True), ("--security-erase", False),
                              ("--security-disable", False)):
        if command in ARGS and command not in aborted:
            state["password"] = password
    return f"security_password: \"{ARGS[ARGS.index(device) - 1]}\"\n\n{device}:\n Issuing SECURITY command\n"


if __name__ == "__main__":
    sys.exit(main())
