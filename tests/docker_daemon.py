"""A Docker daemon for the container tests: the one already running, or one started here.

`connect()` answers with a `Daemon` (the daemon's version, and the process when
this module started it) or a reason why there is none. A daemon started here
leaves the host's network as it is (no bridge, no iptables rules: every
container of the tests runs with `--network none`), and `Daemon.stop()` stops
it again; a daemon that was already running is never stopped.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

START_SECONDS = 60  # dockerd also starts its containerd: a few seconds on a quiet machine
STOP_SECONDS = 30
DAEMON_FLAGS = ["--iptables=false", "--ip6tables=false", "--bridge=none"]


class Daemon:
    def __init__(self, version: str, process: subprocess.Popen | None = None, log: Path | None = None):
        self.version, self.process, self.log = version, process, log

    @property
    def started_here(self) -> bool:
        return self.process is not None

    def stop(self) -> None:
        """Stop the daemon if this module started it (SIGTERM: it stops its containerd too)."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def server_version() -> str | None:
    """The version of the daemon the docker client reaches, or None."""
    try:
        done = subprocess.run(["docker", "version", "--format", "{{.Server.Version}}"], capture_output=True,
                              text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None


def connect() -> tuple[Daemon | None, str]:
    """(the daemon, "") or (None, why there is none)."""
    if shutil.which("docker") is None:
        return None, "no docker client (install Debian's docker.io: bash ci/system_deps.sh)"
    version = server_version()
    if version:
        return Daemon(version), ""
    dockerd = shutil.which("dockerd") or shutil.which("dockerd", path="/usr/sbin:/usr/bin")
    if dockerd is None:
        return None, "no Docker daemon runs and dockerd is not installed (bash ci/system_deps.sh installs it)"
    if os.geteuid() != 0:
        return None, "the docker client reaches no daemon (none runs, or this user may not use it), and starting one needs root"
    log = Path(tempfile.mkdtemp(prefix="attn-dockerd-")) / "dockerd.log"
    with open(log, "wb") as handle:
        process = subprocess.Popen([dockerd, *DAEMON_FLAGS], stdout=handle, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline and process.poll() is None:
        version = server_version()
        if version:
            return Daemon(version, process, log), ""
        time.sleep(0.5)
    daemon = Daemon("", process, log)
    daemon.stop()
    said = log.read_text(errors="replace").strip().splitlines()
    last = said[-1] if said else "no output"
    when = f"within {START_SECONDS} s" if process.returncode in (None, -15) else f"(exit status {process.returncode})"
    return None, f"dockerd did not start {when}: {last}"
