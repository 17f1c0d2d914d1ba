"""The spectators' page, served by the judge: live video, board diagram, score, the last call.

FastAPI in a background uvicorn thread. The video is an MJPEG stream of the latest annotated
frame; calls and state go to every browser over a WebSocket as JSON. Spectators can only
watch; referee actions (undo, override, next game, a Cvrnkaná flick out of view, confirming or
correcting the start state read from the board) are POSTs with
``Authorization: Bearer <token>`` (compared in constant time) and land in the journal like
everything else. The page (``judge/static/``) loads nothing from the internet, so it works at a
club without Wi-Fi.
"""

import asyncio
import hmac
import json
import secrets
import threading
import time
from pathlib import Path
from typing import Any, Mapping

from pydantic import BaseModel, Field


from .i18n import N_, _, language, page_strings
from .board_view import board_for
from .overlay_draw import OverlayModel, draw_overlay

__all__ = ["OverlayHub", "OverlayServer", "create_app", "board_for", "new_token"]

STATIC = Path(__file__).with_name("static")
#: the score's words on the page (Novuss, Cvrnkaná), looked up there in the catalogue
SCORE_WORDS = (N_("pocketed"), N_("on table"), N_("debt"), N_("pit"), N_("field"), N_("behind"), N_("flicks"),
               N_("marbles"))


def new_token() -> str:
    return secrets.token_urlsafe(18)


class OverlayHub:
    """Latest frame and state, shared between the judging thread and the server's event loop.

    It is also a match listener: call it with a match event and every browser gets it.
    """

    def __init__(self, board: "Mapping[str, Any] | None" = None, jpeg_quality: int = 80):
        self.board = dict(board or {})
        self.jpeg_quality = jpeg_quality
        self.state: dict = {}
        self.last_call: dict | None = None
        self.placement: dict | None = None  # the placement assistant's last message (judge.placement_live)
        self._jpeg: bytes | None = None
        self._frame_no = 0
        self._lock = threading.Lock()
        self._clients: set[tuple[asyncio.AbstractEventLoop, asyncio.Queue]] = set()
        self._frame_waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()
        self.closed = False

    def close(self, text: str) -> None:
        """The judge is stopping: every browser is told why (and stops trying to reconnect), the video
        streams end and the WebSockets close, so the server can stop without cutting anything off."""
        self.broadcast({"type": "ended", "text": text})
        with self._lock:
            self.closed = True
            clients, waiters = list(self._clients), list(self._frame_waiters)
        for loop, queue in clients:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, None)
            except RuntimeError:
                pass
        for loop, event in waiters:
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:
                pass

    # ----- from the judging thread ---------------------------------------------------------------
    def publish_frame(self, image, model: OverlayModel | None = None) -> None:
        import cv2

        annotated = draw_overlay(image, model) if model is not None else image
        ok, buf = cv2.imencode(".jpg", annotated, [cv2.IMWRITE_JPEG_QUALITY, self.jpeg_quality])
        if not ok:
            return
        with self._lock:
            self._jpeg = buf.tobytes()
            self._frame_no += 1
            waiters = list(self._frame_waiters)
        for loop, event in waiters:
            loop.call_soon_threadsafe(event.set)

    def __call__(self, event: dict) -> None:
        with self._lock:
            if "state" in event:
                self.state = event["state"]
            if event.get("type") == "call" or (event.get("type") == "referee" and "ruling" in event):
                self.last_call = event
            if event.get("type") == "placement":
                self.placement = event
        self.broadcast(event)

    def broadcast(self, message: dict) -> None:
        text = json.dumps(message, ensure_ascii=False)
        with self._lock:
            clients = list(self._clients)
        for loop, queue in clients:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, text)
            except RuntimeError:  # that client's loop is gone
                pass

    def hello(self) -> dict:
        with self._lock:
            return {"type": "hello", "board": self.board, "state": self.state, "last": self.last_call,
                    "placement": self.placement}

    # ----- from the server's loop ----------------------------------------------------------------
    def subscribe(self) -> asyncio.Queue:
        queue: asyncio.Queue = asyncio.Queue(maxsize=256)
        with self._lock:
            self._clients.add((asyncio.get_running_loop(), queue))
            if self.closed:  # came after the judge stopped: told so, then closed
                queue.put_nowait(json.dumps({"type": "ended", "text": _("The judge has stopped.")}))
                queue.put_nowait(None)
        return queue

    def unsubscribe(self, queue: asyncio.Queue) -> None:
        with self._lock:
            self._clients = {c for c in self._clients if c[1] is not queue}

    def latest_jpeg(self) -> tuple[bytes | None, int]:
        with self._lock:
            return self._jpeg, self._frame_no

    async def next_jpeg(self, seen: int) -> tuple[bytes, int]:
        event = asyncio.Event()
        key = (asyncio.get_running_loop(), event)
        with self._lock:
            self._frame_waiters.add(key)
        try:
            while True:
                if self.closed:
                    raise HubClosed
                jpeg, number = self.latest_jpeg()
                if jpeg is not None and number != seen:
                    return jpeg, number
                event.clear()
                await event.wait()
        finally:
            with self._lock:
                self._frame_waiters.discard(key)


class HubClosed(Exception):
    """The judge stopped: no more frames."""


class Override(BaseModel):
    """Body of POST /api/referee/override."""

    shot_no: int = Field(ge=1)
    code: str = Field(min_length=1, max_length=40)
    note: str = Field(default="", max_length=200)


class Confirm(BaseModel):
    """Body of POST /api/referee/confirm: the flagged shot whose call stands."""

    shot_no: int = Field(ge=1)


class Decide(BaseModel):
    """Body of POST /api/referee/decide: the referee's decision on a call the camera could not make."""

    shot_no: int = Field(ge=1)
    code: str = Field(min_length=1, max_length=40)
    value: str = Field(min_length=1, max_length=40)


class Settle(BaseModel):
    """Body of POST /api/referee/settle: the review item (a refused shot) whose state stands as it is."""

    review: int = Field(ge=1)


class SetState(BaseModel):
    """Body of POST /api/referee/set-state: the game state to go on from (the engine's JSON form), and the
    review item it settles, if any."""

    state: dict
    review: int | None = Field(default=None, ge=1)


class StartState(BaseModel):
    """Body of POST /api/referee/start-state: null confirms the start proposed from the board as it is; a state
    document (the engine's JSON form) corrects it. Live waits for this before judging (``--start-from-board``)."""

    state: dict | None = None


class UnseenFlick(BaseModel):
    """Body of POST /api/referee/unseen-flick (optional): the marble flicked, default the next one of the
    player to move behind the start line."""

    piece: str | None = Field(default=None, max_length=10)


class HostCheck:
    """ASGI middleware: a request whose ``Host`` names another site than this machine is refused (DNS
    rebinding: a page on a name made to resolve to this machine would otherwise read the spectators' data
    from the visitor's browser). An IP address, ``localhost``, this machine's name (and ``NAME.local``) and
    the ``names`` given pass; so does a request with no ``Host`` (HTTP/1.0), which no browser sends."""

    def __init__(self, app, names=()):
        import socket

        self.app = app
        host = socket.gethostname().lower()
        short = host.split(".")[0]
        self.names = {"localhost", host, short, f"{short}.local", *(str(n).lower() for n in names)}

    def allowed(self, host: str) -> bool:
        import ipaddress

        host = host.strip().lower()
        name = host[1:host.find("]")] if host.startswith("[") else host.rsplit(":", 1)[0] if host.count(":") == 1 else host
        if not name:
            return True
        try:
            ipaddress.ip_address(name)
            return True
        except ValueError:
            return name in self.names

    async def __call__(self, scope, receive, send):
        if scope["type"] in ("http", "websocket"):
            host = dict(scope.get("headers") or ()).get(b"host", b"").decode("latin-1")
            if not self.allowed(host):
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1008})
                else:
                    await send({"type": "http.response.start", "status": 421,
                                "headers": [(b"content-type", b"text/plain; charset=utf-8")]})
                    await send({"type": "http.response.body", "body": b"this server does not answer for that Host"})
                return
        await self.app(scope, receive, send)


def create_app(hub: OverlayHub, referee, token: str, hosts=(), start=None, report=None,  # noqa: C901 - one handler per endpoint
               evidence=None):
    """The FastAPI app. ``referee`` has ``undo()``, ``override(shot_no, code, note)``, ``next_game()``,
    ``unseen_flick(piece)``, ``open_reviews()``, ``settle(review)`` and ``set_state(state, review)``.
    ``hosts``: names besides this machine's that the page may be reached by (``HostCheck``). ``start``: the
    start state proposed from the board, waiting for the referee (``judge.start_state.StartGate``), if any.
    ``report``: makes the match's dispute report page as it stands (``judge.cmd_report.report_html``).
    ``evidence``: a shot's key instants with their crops, for the console's queue
    (``judge.dispute_report.clip_evidence``)."""
    from fastapi import Depends, FastAPI, Header, HTTPException, WebSocket, WebSocketDisconnect
    from fastapi.responses import FileResponse, HTMLResponse, Response, StreamingResponse
    from fastapi.staticfiles import StaticFiles
    from .match import RefereeError

    if not token:
        raise ValueError("the referee token must not be empty")
    expected = token.encode()
    app = FastAPI(title="shotjudge overlay", docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(HostCheck, names=hosts)
    app.state.hub = hub  # ``OverlayServer.stop`` ends its streams first
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    def require_referee(authorization: str | None = Header(default=None)) -> None:
        scheme, _space, given = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), expected):
            raise HTTPException(401, _("referee token required"), headers={"WWW-Authenticate": "Bearer"})

    def act(fn, *args):
        try:
            return fn(*args)
        except RefereeError as exc:
            raise HTTPException(409, str(exc)) from None

    @app.get("/", include_in_schema=False)
    def index():
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    @app.get("/strings.js", include_in_schema=False)
    def strings():
        """The page's words in the match's language, before the page's script runs (it reads no catalogue)."""
        body = "window.SHOTJUDGE_LANG = " + json.dumps(language()) + ";\nwindow.SHOTJUDGE_STRINGS = " \
            + json.dumps(page_strings(language()), ensure_ascii=False, sort_keys=True) + ";\n"
        return Response(body, media_type="text/javascript; charset=utf-8", headers={"Cache-Control": "no-store"})

    @app.get("/api/state")
    def state():
        return hub.hello()

    @app.get("/snapshot.jpg")
    def snapshot():
        jpeg = hub.latest_jpeg()[0]
        if jpeg is None:
            raise HTTPException(404, _("no frame yet"))
        return Response(jpeg, media_type="image/jpeg", headers={"Cache-Control": "no-store"})

    @app.get("/video.mjpg")
    async def video():
        def part(jpeg: bytes) -> bytes:
            return (b"Content-Type: image/jpeg\r\nContent-Length: " + str(len(jpeg)).encode()
                    + b"\r\n\r\n" + jpeg + b"\r\n--frame\r\n")

        async def parts():
            # Chromium shows a part only when the next one starts: the first frame goes out twice,
            # and a still picture is repeated every second (which also keeps the connection alive).
            yield b"--frame\r\n"
            try:
                jpeg, seen = await hub.next_jpeg(-1)
                yield part(jpeg) + part(jpeg)
                while True:
                    try:
                        jpeg, seen = await asyncio.wait_for(hub.next_jpeg(seen), timeout=1.0)
                    except asyncio.TimeoutError:
                        pass
                    yield part(jpeg)
            except HubClosed:
                return  # the judge stopped: the browser keeps the last picture
        return StreamingResponse(parts(), media_type="multipart/x-mixed-replace; boundary=frame",
                                 headers={"Cache-Control": "no-store"})

    @app.websocket("/ws")
    async def ws(socket: WebSocket):
        await socket.accept()
        queue = hub.subscribe()
        try:
            await socket.send_text(json.dumps(hub.hello(), ensure_ascii=False))
            while True:
                text = await queue.get()
                if text is None:  # the judge stopped (``OverlayHub.close``)
                    await socket.close()
                    break
                await socket.send_text(text)
        except (WebSocketDisconnect, RuntimeError, asyncio.CancelledError):
            pass  # browser gone, or the server is shutting down
        finally:
            hub.unsubscribe(queue)

    @app.post("/api/referee/undo", dependencies=[Depends(require_referee)])
    def undo():
        return act(referee.undo)

    @app.post("/api/referee/override", dependencies=[Depends(require_referee)])
    def override(body: Override):
        return act(referee.override, body.shot_no, body.code, body.note)

    @app.post("/api/referee/next-game", dependencies=[Depends(require_referee)])
    def next_game():
        return act(referee.next_game)

    @app.get("/api/referee/queue", dependencies=[Depends(require_referee)])
    def queue():
        from .console import review_queue

        return {"queue": review_queue(referee, evidence)}

    @app.post("/api/referee/confirm", dependencies=[Depends(require_referee)])
    def confirm(body: Confirm):
        return act(referee.confirm, body.shot_no)

    @app.post("/api/referee/decide", dependencies=[Depends(require_referee)])
    def decide(body: Decide):
        return act(referee.decide, body.shot_no, body.code, body.value)

    @app.get("/api/referee/reviews", dependencies=[Depends(require_referee)])
    def reviews():
        return {"reviews": referee.open_reviews()}

    @app.post("/api/referee/settle", dependencies=[Depends(require_referee)])
    def settle(body: Settle):
        return act(referee.settle, body.review)

    @app.post("/api/referee/set-state", dependencies=[Depends(require_referee)])
    def set_state(body: SetState):
        return act(referee.set_state, body.state, body.review)

    @app.get("/api/referee/start-state", dependencies=[Depends(require_referee)])
    def start_state():
        if start is None:
            raise HTTPException(404, _("this match did not start from the board"))
        return {"pending": start.pending, "proposal": start.proposal_doc, "confirmed": start.confirmed,
                "text": start.text}

    @app.post("/api/referee/start-state", dependencies=[Depends(require_referee)])
    def confirm_start(body: StartState | None = None):
        if start is None:
            raise HTTPException(409, _("no start state is waiting: this match did not start from the board"))
        return act(start.confirm, body.state if body is not None else None)

    @app.get("/api/referee/report", dependencies=[Depends(require_referee)])
    def dispute_report():
        if report is None:
            raise HTTPException(404, _("this judge keeps no journal to make the dispute report from"))
        return HTMLResponse(report(), headers={"Cache-Control": "no-store"})

    @app.post("/api/referee/unseen-flick", dependencies=[Depends(require_referee)])
    def unseen_flick(body: UnseenFlick | None = None):
        return act(referee.unseen_flick, body.piece if body is not None else None)

    return app


class OverlayServer:
    """uvicorn in a daemon thread; ``port=0`` picks a free port (see ``.url`` after start)."""

    def __init__(self, app, host: str = "127.0.0.1", port: int = 8080):
        self.app, self.host, self.port = app, host, port
        self._server = None
        self._thread: threading.Thread | None = None

    def start(self, timeout_s: float = 10.0) -> "OverlayServer":
        import uvicorn

        config = uvicorn.Config(self.app, host=self.host, port=self.port, log_level="warning", lifespan="off",
                                timeout_graceful_shutdown=1)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="overlay", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise OSError(f"overlay server could not start on {self.host}:{self.port} (port in use?)")
            time.sleep(0.02)
        self.port = self._server.servers[0].sockets[0].getsockname()[1]
        return self

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"

    def stop(self) -> None:
        """Stop serving: the hub's streams are ended first (``OverlayHub.close``, unless the caller closed it
        with its own words), so the server stops gracefully; forcibly only if connections are still open
        after a moment."""
        if self._server is None or self._thread is None:
            return
        hub = getattr(getattr(self.app, "state", None), "hub", None)
        if hub is not None and not hub.closed:
            hub.close(_("The judge has stopped."))
        self._server.should_exit = True
        self._thread.join(timeout=2.0)
        if self._thread.is_alive():
            self._server.force_exit = True
            self._thread.join(timeout=5.0)
