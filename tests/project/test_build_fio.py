"""scripts/build-fio.sh builds fio from a release tarball it downloads and runs as root in the tests: it must take
only what Debian signed. A mirror on loopback serving an InRelease whose signature does not hold (or none) is refused in
one line, and nothing is built or kept; so is Debian's real InRelease beside a Sources index it does not list. (The
signed path is the sprandom tests' fixture: a real build.)"""

import contextlib
import functools
import http.server
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "build-fio.sh"


@contextlib.contextmanager
def mirror(folder: Path) -> Iterator[str]:
    """An HTTP server on 127.0.0.1 serving `folder`, its URL."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the overridden method's name
            pass

    handler = functools.partial(Quiet, directory=str(folder))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            server.shutdown()


def build(tmp_path: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PTSBENCH_FIO_CACHE": str(tmp_path / "cache"), "PTSBENCH_DEBIAN_MIRROR": url}
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.parametrize("release", [b"not signed at all\n", None])
def test_an_index_without_debians_signature_is_refused(tmp_path: Path, release: bytes | None) -> None:
    if not Path("/usr/share/keyrings/debian-archive-keyring.gpg").exists():
        pytest.fail("debian-archive-keyring is missing (Debian's apt has it)")
    served = tmp_path / "served"
    (served / "dists" / "sid").mkdir(parents=True)
    if release is not None:
        (served / "dists" / "sid" / "InRelease").write_bytes(release)
    with mirror(served) as url:
        done = build(tmp_path, url, "fio-3.41")
    assert done.returncode == 1, done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("build-fio:")]
    if release is None:
        assert said[-1] == "build-fio: fio-3.41 not built: a Debian index could not be read (above)", said
        assert f"could not download {url}/dists/sid/InRelease" in done.stderr
    else:
        assert said[0].startswith(f"build-fio: fio-3.41 not built: the signature of {url}/dists/sid/InRelease does "
                                  "not hold"), said
    assert not list((tmp_path / "cache").glob("fio-*"))


def test_an_index_that_does_not_match_debians_signed_inrelease_is_refused(tmp_path: Path) -> None:
    """Debian's real InRelease (its signature holds) beside a Sources index that is not the one it lists: refused
    before the index is read, nothing kept."""
    import lzma

    suite = tmp_path / "served" / "dists" / "sid"
    (suite / "main" / "source").mkdir(parents=True)
    got = subprocess.run(["curl", "-fsS", "-m", "120", "-o", str(suite / "InRelease"),
                          "http://deb.debian.org/debian/dists/sid/InRelease"], capture_output=True, text=True)
    if got.returncode != 0 and os.environ.get("CI") == "true":  # as the sprandom tests' fixture, CI needs the mirror
        pytest.fail(f"Debian's mirror cannot be reached: {got.stderr.strip()}")
    if got.returncode != 0:
        pytest.skip(f"Debian's mirror cannot be reached: {got.stderr.strip()}")
    (suite / "main" / "source" / "Sources.xz").write_bytes(lzma.compress(b"Package: fio\nVersion: 3.41-1\n"))
    with mirror(tmp_path / "served") as url:
        done = build(tmp_path, url, "fio-3.41")
    assert done.returncode == 1, done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("build-fio:")]
    assert said[0] == "build-fio: fio-3.41 not built: sid's Sources index does not match its checksum in the signed " \
                      "InRelease", said
    assert not list((tmp_path / "cache").glob("fio-*"))


def test_a_tag_that_is_not_a_release_is_refused(tmp_path: Path) -> None:
    done = build(tmp_path, "http://127.0.0.1:9", "master; rm -rf /")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "not a fio release tag" in done.stderr
