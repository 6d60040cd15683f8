"""Gate verdicts as JUnit XML, so Jenkins or GitLab show each gate on each value as a test case."""

from collections.abc import Sequence
from pathlib import Path
from xml.etree import ElementTree

from ptsbench.catalog.gates import Verdict

JUNIT_MARK = "<testsuites name=\"ptsbench gates\""  # what an earlier JUnit file of ptsbench holds


def junit_xml(run_name: str, verdicts: Sequence[Verdict]) -> bytes:
    """One test suite named after the run; a test case per verdict line, with a <failure> when it failed."""
    failures = sum(not verdict.passed for verdict in verdicts)
    counts = {"tests": str(len(verdicts)), "failures": str(failures), "errors": "0"}
    suites = ElementTree.Element("testsuites", {"name": "ptsbench gates", **counts})
    suite = ElementTree.SubElement(suites, "testsuite", {"name": f"ptsbench gates: {run_name}", **counts})
    for verdict in verdicts:
        case = ElementTree.SubElement(suite, "testcase", {"classname": f"ptsbench.gates.{run_name}",
                                                          "name": f"{verdict.gate} [{verdict.subject}]"})
        text = f"value {verdict.value}, limit {verdict.limit}" + (f"; {verdict.note}" if verdict.note else "")
        if verdict.passed:
            ElementTree.SubElement(case, "system-out").text = text
        else:
            ElementTree.SubElement(case, "failure", {"type": "gate" if verdict.measured else "not measured",
                                                      "message": text}).text = text
    return ElementTree.tostring(suites, encoding="utf-8", xml_declaration=True)


def write_junit(path: Path, run_name: str, verdicts: Sequence[Verdict]) -> None:
    """The JUnit file, written atomically (a CI job never reads half of it)."""
    from ptsbench.atomic import atomic_write_bytes

    atomic_write_bytes(Path(path), junit_xml(run_name, verdicts))
