"""Verdicts as OCP Test & Validation (OCPTV) output, schema version 2.0: the JSON-lines stream OCP's ocp-diag
diagnostics write (opencomputeproject/ocp-diag-core, json_spec), so OCP tooling and a fleet's CI read ptsbench's
verdicts like any other diagnostic's.

The stream: schemaVersion; testRunStart (the run, the profile, the drive as dutInfo); per gate or target one test
step (testStepStart, per value judged a measurement with the value in stored units and its limit as a validator,
and a diagnosis PASS, FAIL or UNKNOWN for not measured; testStepEnd); testRunEnd (PASS only when every line passed).
"""

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ptsbench.catalog.gates import Verdict
from ptsbench.catalog.values import STORED_UNITS

RUN_NAME = "ptsbench check"
OCPTV_MARK = f'{{"testRunStart": {{"name": "{RUN_NAME}"'  # what an earlier --ocptv file of ptsbench holds
VALIDATORS = {">=": "GREATER_THAN_OR_EQUAL", ">": "GREATER_THAN", "<=": "LESS_THAN_OR_EQUAL", "<": "LESS_THAN"}
DIAGNOSES = {"pass": ("PASS", "ptsbench-target-pass"), "FAIL": ("FAIL", "ptsbench-target-fail"),
             "NOT MEASURED": ("UNKNOWN", "ptsbench-target-not-measured")}


def _dut(run_name: str, facts: Mapping[str, Any]) -> dict[str, Any]:
    """dutInfo: the drive as the run's manifest names it (model, serial, firmware when known)."""
    hardware = {"hardwareInfoId": "drive", "name": str(facts.get("model") or "unknown drive")}
    for key, field in (("serial", "serialNumber"), ("firmware", "version"), ("vendor", "manufacturer")):
        if facts.get(key):
            hardware[field] = str(facts[key])
    return {"dutInfoId": str(facts.get("serial") or run_name), "name": run_name, "hardwareInfos": [hardware]}


def _step(step_id: str, gate: str, verdicts: Sequence[Verdict]) -> list[dict[str, Any]]:
    artifacts: list[dict[str, Any]] = [{"testStepStart": {"name": gate}}]
    for verdict in verdicts:
        if verdict.number is not None and verdict.limit_number is not None:
            artifacts.append({"measurement": {
                "name": verdict.subject, "value": verdict.number, "unit": STORED_UNITS[verdict.quantity],
                "validators": [{"type": VALIDATORS[verdict.operator], "value": verdict.limit_number}],
                "hardwareInfoId": "drive", "metadata": {"shown": verdict.value, "note": verdict.note}}})
        kind, name = DIAGNOSES[verdict.outcome]
        message = f"{verdict.subject}: value {verdict.value}, limit {verdict.limit}" + \
            (f"; {verdict.note}" if verdict.note else "")
        artifacts.append({"diagnosis": {"verdict": name, "type": kind, "message": message,
                                        "hardwareInfoId": "drive"}})
    artifacts.append({"testStepEnd": {"status": "COMPLETE"}})
    return [{"testStepArtifact": {"testStepId": step_id, **artifact}} for artifact in artifacts]


def ocptv_artifacts(run_name: str, parameters: Mapping[str, str], facts: Mapping[str, Any],
                    verdicts: Sequence[Verdict], command_line: str) -> list[dict[str, Any]]:
    """The whole stream, in order, each artifact with its sequence number and time."""
    from ptsbench import __version__

    steps: dict[str, list[Verdict]] = {}
    for verdict in verdicts:
        steps.setdefault(verdict.gate, []).append(verdict)
    body: list[dict[str, Any]] = [
        {"schemaVersion": {"major": 2, "minor": 0}},
        {"testRunArtifact": {"testRunStart": {"name": RUN_NAME, "version": __version__, "commandLine": command_line,
                                              "parameters": dict(parameters), "dutInfo": _dut(run_name, facts)}}},
    ]
    for index, (gate, judged) in enumerate(steps.items()):
        body += _step(str(index), gate, judged)
    result = "PASS" if verdicts and all(verdict.passed for verdict in verdicts) else "FAIL"
    body.append({"testRunArtifact": {"testRunEnd": {"status": "COMPLETE", "result": result}}})
    now = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return [{**artifact, "sequenceNumber": number, "timestamp": now} for number, artifact in enumerate(body)]


def write_ocptv(path: Path, artifacts: Sequence[Mapping[str, Any]]) -> None:
    """One JSON object a line, written atomically (a reader never sees half a stream)."""
    from ptsbench.atomic import atomic_write_bytes

    text = "".join(json.dumps(artifact, ensure_ascii=False) + "\n" for artifact in artifacts)
    atomic_write_bytes(Path(path), text.encode())
