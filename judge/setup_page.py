"""The set-up's progress in a browser (``shotjudge setup --page PORT``): its status lines and its latest
pictures (the view with the markers found and the board drawn back, the empty board, the pieces), for a
camera on a computer without a screen. Read-only: the terminal or the script drives the set-up; the page
reloads itself every two seconds while the set-up runs."""
from __future__ import annotations

import html
import io
import sys
import threading
from contextlib import contextmanager
from typing import Iterator

from judge.i18n import _, language

__all__ = ["SetupBoard", "create_app", "serving"]


class SetupBoard:
    """What the page shows: the status lines so far and the latest picture of each kind (PNG bytes)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.lines: list[str] = []
        self.pictures: dict[str, bytes] = {}
        self.version = 0

    def say(self, line: str) -> None:
        with self._lock:
            self.lines.append(line)
            self.version += 1

    def show(self, name: str, image) -> None:
        import cv2

        ok, png = cv2.imencode(".png", image)
        if ok:
            with self._lock:
                self.pictures[name] = png.tobytes()
                self.version += 1

    def snapshot(self) -> dict:
        with self._lock:
            return {"lines": list(self.lines), "pictures": sorted(self.pictures), "version": self.version}


def create_app(board: SetupBoard):
    from fastapi import FastAPI, HTTPException
    from fastapi.responses import HTMLResponse, Response

    app = FastAPI(title="shotjudge setup", docs_url=None, redoc_url=None, openapi_url=None)

    @app.get("/status")
    def status() -> dict:
        return board.snapshot()

    @app.get("/pictures/{name}")
    def picture(name: str) -> Response:
        data = board.pictures.get(name)
        if data is None:
            raise HTTPException(404, _("no picture {name} yet").format(name=repr(name)))
        return Response(data, media_type="image/png", headers={"Cache-Control": "no-store"})

    @app.get("/", response_class=HTMLResponse)
    def page() -> str:
        snap = board.snapshot()
        lines = "".join(f"<li>{html.escape(line)}</li>" for line in snap["lines"])
        pictures = "".join(f'<figure><img src="/pictures/{html.escape(n)}?v={snap["version"]}" alt="{html.escape(n)}">'
                           f"<figcaption>{html.escape(n)}</figcaption></figure>" for n in snap["pictures"])
        return (f'<!doctype html><html lang="{language()}"><head><meta charset="utf-8">'
                '<meta http-equiv="refresh" content="2">'
                "<title>shotjudge setup</title><style>body{font-family:sans-serif;margin:1em}"
                "img{max-width:100%;border:1px solid #888}figure{margin:1em 0}</style></head><body>"
                f"<h1>shotjudge setup</h1><ol>{lines}</ol>{pictures}</body></html>")

    return app


class _Tee(io.TextIOBase):
    """Standard output that also hands every finished line to the board."""

    def __init__(self, out, board: SetupBoard):
        self.out, self.board, self._part = out, board, ""

    def write(self, text: str) -> int:
        self.out.write(text)
        self._part += text
        *done, self._part = self._part.split("\n")
        for line in done:
            if line.strip():
                self.board.say(line)
        return len(text)

    def flush(self) -> None:
        self.out.flush()


@contextmanager
def serving(port: int | None, host: str = "127.0.0.1") -> Iterator[SetupBoard | None]:
    """The page on ``host:port`` for the duration of the block, fed with what the block prints (None and
    nothing served when ``port`` is None)."""
    if port is None:
        yield None
        return
    from .errors import UserError
    from .overlay import OverlayServer

    board = SetupBoard()
    try:
        server = OverlayServer(create_app(board), host, port).start()
    except OSError as exc:
        raise UserError(_("--page: {exc}; use another --page port").format(exc=exc)) from None
    print(_("set-up page: {url}").format(url=server.url))
    real = sys.stdout
    sys.stdout = _Tee(real, board)
    try:
        yield board
    finally:
        sys.stdout = real
        server.stop()
