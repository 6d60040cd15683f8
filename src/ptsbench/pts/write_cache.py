"""run: the write cache of a PTS run: set as the profile requires at every start, read again at the end of every
round (a change is a deviation), and put back at the end. On a drive whose cache ptsbench sets, the run holds the
controller's cache (device/controller.py): shared with runs on sibling namespaces that want the same, refused when
another run holds it the other way, put back by the last one out."""

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ptsbench.device.target import Target
from ptsbench.pts.store import PtsStore
from ptsbench.store import utc_now

if TYPE_CHECKING:
    from ptsbench.device.controller import CacheHold


class RunWriteCache:
    """One PTS run's write cache, from `apply` (at the start) to `restore` (at the end, also after a failure)."""

    def __init__(self, pts: PtsStore, target: Target, facts: dict[str, object], wanted: str, on_hosts: bool,
                 event: Callable[[str], None]) -> None:
        self.pts, self.target, self.facts, self.wanted, self.on_hosts = pts, target, facts, wanted, on_hosts
        self.event = event
        self.hold: CacheHold | None = None

    def apply(self) -> None:
        """Set the cache as wanted (at every start: a power cycle resets it), and record it in the manifest. Raises
        UnsafeTargetError, changing nothing, when another run holds the controller's cache the other way."""
        from ptsbench.device.cache import read_write_cache, set_write_cache
        from ptsbench.device.controller import controller_of, hold_write_cache

        wanted = self.wanted == "enabled"
        extra: dict[str, Any] = {}
        controller = None if self.on_hosts else controller_of(self.target, self.facts)
        if self.on_hosts:  # the local tools would read (and set) the controller's device of the same name
            before, after, done, message = None, None, False, "not read or set on the remote hosts"
        elif controller is not None:
            hold = self.hold = hold_write_cache(self.target, self.facts, controller, wanted, self.pts.root)
            before, after, done, message = hold.before, hold.after, hold.done, hold.message
            extra = {"controller": controller.name, "original": hold.original,
                     "shared_with": [{"target": each.get("target"), "pid": each.get("pid"),
                                      "run_dir": each.get("run_dir")} for each in hold.others]}
        else:
            before = read_write_cache(self.target, self.facts)
            done, message = set_write_cache(self.target, self.facts, wanted)
            after = read_write_cache(self.target, self.facts) if done else before
        record = {"utc": utc_now(), "wanted": self.wanted, "before": before, "after": after, "set": done,
                  "message": message, **extra}
        store = self.pts.store
        store.update_manifest(write_cache=[*store.manifest.get("write_cache", []), record])
        self.event(f"write cache: {message}")
        if after is not wanted:
            self.pts.add_compliance_reason(f"write cache not {self.wanted}: {message}")

    def restore(self) -> None:
        """Put the cache back as it was before the run first changed it; on a controller held by other runs too,
        the last one out puts back what was there before the first."""
        from ptsbench.device.cache import set_write_cache
        from ptsbench.device.controller import release_write_cache

        if self.hold is not None:
            hold, self.hold = self.hold, None
            action, done, message = release_write_cache(hold, self.target, self.facts)
            to = hold.wanted if action == "left" else hold.original
            self.pts.store.update_manifest(write_cache_restored={"utc": utc_now(), "to": to, "done": done,
                                                                 "action": action, "message": message})
            self.event(f"write cache: {message}" if done else f"write cache NOT restored: {message}")
            return
        records = self.pts.store.manifest.get("write_cache") or []
        original = records[0].get("before") if records else None
        if self.on_hosts or not isinstance(original, bool) or not any(record.get("set") for record in records):
            return
        done, message = set_write_cache(self.target, self.facts, original)
        self.pts.store.update_manifest(write_cache_restored={"utc": utc_now(), "to": original, "done": done,
                                                             "message": message})
        self.event(f"write cache restored: {message}" if done else f"write cache NOT restored: {message}")

    def check(self, what: str) -> dict[str, Any] | None:
        """The cache read again at the end of a round (`what`: "IOPS round 3"): what it really was while the round
        ran (another program, or a drive that forgot the setting, may have changed it), for the round's record and
        the manifest's write_cache_rounds. A reading other than wanted, once the run had set it as wanted, is a
        deviation."""
        from ptsbench.device.cache import read_write_cache

        if self.on_hosts or self.target.kind != "block":
            return None
        wanted = self.wanted == "enabled"
        now = read_write_cache(self.target, self.facts)
        reading = {"utc": utc_now(), "wanted": self.wanted, "read": now}
        store = self.pts.store
        records = store.manifest.get("write_cache") or []
        if isinstance(now, bool) and now is not wanted and records and records[-1].get("after") is wanted:
            word = "on" if now else "off"
            self.pts.add_compliance_reason(f"write cache read {word} at the end of {what} (wanted {self.wanted})")
            self.event(f"write cache read {word} at the end of {what}, wanted {self.wanted}: a deviation")
        return reading
