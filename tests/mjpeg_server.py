"""A small MJPEG-over-HTTP server for tests: a list of JPEG images served as ``multipart/x-mixed-replace``
on loopback, paced in real time by a schedule, the way an IP camera or a phone's webcam app streams.

The schedule is a list of sends, ``(frame index, seconds after the stream starts)``: a frame left out
is dropped (never sent), a frame listed twice is sent twice, and the times carry the jitter. Like a
camera, the server streams the present: the schedule's clock starts with the first client, and a client
that connects later gets the sends from then on (a judge that probes the stream and connects again
misses what was sent in between). When the schedule is done the server closes every connection (the
stream ends as a camera that goes away) and answers no further client. ``sent`` records, per send to
the client that received the most, the frame index and the ``time.monotonic()`` at which its part was
written (the same clock another process on this machine stamps with), so a test can tell which frame a
receiver's time belongs to.
"""
from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterable

__all__ = ["MjpegServer", "Schedule", "jittered_schedule"]

BOUNDARY = "shotjudgeframe"


@dataclass
class Schedule:
    """What the server sends: ``sends`` in order, and what was done to the regular stream to get them."""

    sends: list[tuple[int, float]]
    dropped: list[int] = field(default_factory=list)
    repeated: list[int] = field(default_factory=list)
    jitter_s: float = 0.0

    def describe(self) -> str:
        return (f"{len(self.sends)} sends, jitter ±{self.jitter_s * 1000:g} ms, frames dropped {self.dropped}, "
                f"sent twice {self.repeated}")


def jittered_schedule(n: int, fps: float, *, jitter_s: float = 0.003, drop: Iterable[int] = (),
                      repeat: Iterable[int] = (), repeat_after: float = 0.5, seed: int = 0) -> Schedule:
    """Frame i sent at i/fps plus a uniform jitter of ±``jitter_s``; the frames in ``drop`` not sent; those
    in ``repeat`` sent again ``repeat_after`` of a frame interval later (jittered too). Send times never
    go back (a stream is written in order)."""
    rng = random.Random(seed)
    drop, repeat = set(drop), set(repeat)
    interval = 1.0 / fps
    sends: list[tuple[int, float]] = []
    last = 0.0
    for i in range(n):
        if i in drop:
            continue
        copies = [i * interval] + ([(i + repeat_after) * interval] if i in repeat else [])
        for t in copies:
            t = max(last, t + rng.uniform(-jitter_s, jitter_s), 0.0)
            sends.append((i, t))
            last = t
    return Schedule(sends, sorted(drop), sorted(repeat), jitter_s)


class MjpegServer:
    """Serves ``jpegs`` (encoded JPEG images) at ``http://127.0.0.1:PORT/stream.mjpg`` by ``schedule``.

    Use as a context manager; ``url`` is known once started. Connections after the schedule's end are
    refused (the listening socket is closed when it ends).
    """

    def __init__(self, jpegs: list[bytes], schedule: Schedule, *, path: str = "/stream.mjpg"):
        self.jpegs = jpegs
        self.schedule = schedule
        self.path = path
        self.clients: list[dict] = []  # per client: the sends it got, and how its stream ended
        self.finished = threading.Event()  # the schedule has been written to its end
        self._t0: float | None = None
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._httpd is not None, "start the server first"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}{self.path}"

    def start(self) -> "MjpegServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # the stream ends when the connection closes

            def do_GET(self):  # noqa: N802 - http.server's name
                if self.path.split("?")[0] != server.path:
                    self.send_error(404)
                    return
                if server.finished.is_set():
                    self.send_error(503, "the stream has ended")
                    return
                client = {"sent": [], "error": None}
                with server._lock:
                    server.clients.append(client)
                    if server._t0 is None:
                        server._t0 = time.monotonic()
                try:
                    server._stream(self, client)
                except (BrokenPipeError, ConnectionResetError) as exc:
                    client["error"] = exc  # the client went away before the end
                    return
                if not server.finished.is_set():  # the schedule's end: no one else, connections refused
                    server.finished.set()
                    threading.Thread(target=server._close, daemon=True).start()

            def log_message(self, *args):  # quiet
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="mjpeg-server", daemon=True)
        self._thread.start()
        return self

    @property
    def _main(self) -> dict:
        return max(self.clients, key=lambda c: len(c["sent"]), default={"sent": [], "error": None})

    @property
    def sent(self) -> list[tuple[int, float]]:
        """The sends to the client that received the most (the judge's connection)."""
        return self._main["sent"]

    @property
    def error(self) -> BaseException | None:
        """How that client's stream broke off (None: it got every send from its first to the end)."""
        return self._main["error"]

    def _stream(self, handler: BaseHTTPRequestHandler, client: dict) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", f"multipart/x-mixed-replace; boundary={BOUNDARY}")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Connection", "close")
        handler.end_headers()
        out = handler.wfile
        start = self._t0
        now = time.monotonic() - start
        for index, t in self.schedule.sends:
            if t < now:  # sent before this client connected
                continue
            delay = start + t - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            data = self.jpegs[index]
            out.write(f"--{BOUNDARY}\r\nContent-Type: image/jpeg\r\nContent-Length: {len(data)}\r\n\r\n".encode()
                      + data + b"\r\n")
            out.flush()
            client["sent"].append((index, time.monotonic()))
        out.write(f"--{BOUNDARY}--\r\n".encode())
        out.flush()

    def _close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def stop(self) -> None:
        if self._httpd is not None:
            self._close()
        if self._thread is not None:
            self._thread.join(timeout=5.0)

    def __enter__(self) -> "MjpegServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
