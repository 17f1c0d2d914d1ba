"""Real servers for the hall's tests and bench: a Mosquitto broker (with persistence, killable and restartable on
its port) and a PostgreSQL server in a temporary folder. PostgreSQL refuses to run as root: as root it is run as
the unprivileged user ``nobody`` (``subprocess``' ``user=``, so signals reach it directly). A missing program is ``ServerMissing`` (the tests skip, saying
why); a server that does not start is an error, with its log."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

__all__ = ["Broker", "Postgres", "ServerMissing", "free_port"]

MOSQUITTO = shutil.which("mosquitto") or ("/usr/sbin/mosquitto" if os.path.exists("/usr/sbin/mosquitto") else None)
PG_BIN = next((p for p in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True) if (p / "initdb").exists()),
              None) if Path("/usr/lib/postgresql").is_dir() else None


class ServerMissing(RuntimeError):
    """The server's program is not installed here."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen, log: Path, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}: {log.read_text(errors='replace')[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"server not listening on {port} after {timeout_s} s: {log.read_text(errors='replace')[-2000:]}")


class Broker:
    """Mosquitto on a loopback port, persisting to its folder every second (``autosave_interval 1``)."""

    def __init__(self, folder: Path):
        if MOSQUITTO is None:
            raise ServerMissing("mosquitto is not installed (apt-get install mosquitto)")
        self.folder, self.port = folder, free_port()
        folder.mkdir(parents=True, exist_ok=True)
        self.log = folder / "mosquitto.log"
        (folder / "mosquitto.conf").write_text("\n".join([
            f"listener {self.port} 127.0.0.1", "allow_anonymous true", "persistence true",
            f"persistence_location {folder}/", "autosave_interval 1", "max_queued_messages 1000000",
            "max_inflight_messages 100", f"log_dest file {self.log}", "log_type error", "log_type warning",
            "log_type notice", "user root" if os.geteuid() == 0 else ""]) + "\n")
        self.proc: subprocess.Popen | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> "Broker":
        self.proc = subprocess.Popen([MOSQUITTO, "-c", str(self.folder / "mosquitto.conf")],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        wait_port(self.port, self.proc, self.log)
        return self

    def kill(self) -> None:
        """SIGKILL: whatever it had not saved yet is lost, as in a power cut."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.kill()


class Postgres:
    """A throwaway PostgreSQL cluster (trust auth, loopback only), run as ``nobody`` when we are root."""

    def __init__(self):
        if PG_BIN is None:
            raise ServerMissing("PostgreSQL server binaries are not installed (apt-get install postgresql)")
        self.folder = Path(tempfile.mkdtemp(prefix="shotjudge-pg-"))
        self.port = free_port()
        self.log = self.folder / "postgres.log"
        self.data = self.folder / "data"
        self.as_user: dict = {}
        if os.geteuid() == 0:
            uid, gid = _nobody()
            os.chown(self.folder, uid, gid)
            self.as_user = {"user": uid, "group": gid, "extra_groups": [],
                            "env": {**os.environ, "HOME": str(self.folder), "USER": "nobody"}}
        self.proc: subprocess.Popen | None = None

    def start(self) -> "Postgres":
        init = subprocess.run([str(PG_BIN / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E",
                               "UTF8", "--no-instructions"], capture_output=True, text=True, timeout=120, cwd=self.folder,
                              **self.as_user)
        if init.returncode != 0:
            raise RuntimeError(f"initdb failed: {init.stdout[-1500:]} {init.stderr[-1500:]}")
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen([str(PG_BIN / "postgres"), "-D", str(self.data), "-p", str(self.port), "-k",
                                          str(self.folder), "-c", "listen_addresses=127.0.0.1", "-c", "fsync=on"],
                                         stdout=log, stderr=subprocess.STDOUT, cwd=self.folder, **self.as_user)
        wait_port(self.port, self.proc, self.log, timeout_s=60)
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        import psycopg

        deadline = time.monotonic() + 30
        while True:  # listening is not yet accepting: "the database system is starting up"
            try:
                psycopg.connect(self.url, connect_timeout=5).close()
                return self
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # fast shutdown
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        shutil.rmtree(self.folder, ignore_errors=True)


def _nobody() -> tuple[int, int]:
    import pwd

    entry = pwd.getpwnam("nobody")
    return entry.pw_uid, entry.pw_gid
