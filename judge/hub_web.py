"""The hall's pages: the scoreboard of every table (pushed live over a WebSocket) and a page per table listing its
calls, with its dispute report (the table's shots, records and rulings as the hub stored them, JSON) and, where
the table serves one, its own spectators' page. Everything is served from here: nothing from the internet.
(No ``from __future__ import annotations``: FastAPI reads the WebSocket handler's annotation at run time.)
"""

import asyncio
import json
from typing import Any

from .overlay import STATIC, HostCheck, OverlayHub
from .i18n import _

__all__ = ["create_hall_app", "dispute_report", "dispute_page"]


def dispute_report(hub, table: str) -> dict[str, Any] | None:
    """A table's current match as the hub holds it: per shot the record and the ruling (docs/schemas), and the
    referee's actions, in the order the table journaled them; None for a table the hub has not heard of."""
    info = hub.tables.get(table)
    if info is None:
        return None
    have = hub.haves.get((table, info["match"]), 0)
    entries = hub.store.entries(table, info["match"], have)
    shots = [{"game_no": e["game_no"], "shot_no": e["shot_no"], "record": e["payload"]["record"],
              "ruling": e["payload"]["ruling"], "journaled_s": e["wall_time"]} for e in entries if e["kind"] == "shot"]
    actions = [{"seq": e["seq"], "kind": e["kind"], "game_no": e["game_no"], "shot_no": e["shot_no"],
                "payload": e["payload"]} for e in entries if e["kind"] not in ("shot", "match")]
    return {"table": table, "match": info["match"], "have": have, "info": info,
            "standing": hub.standings.get((table, info["match"])), "shots": shots, "actions": actions}


def dispute_page(hub, table: str) -> str | None:
    """The table's dispute report as the printable page ``shotjudge report`` makes (``judge.dispute_page``), from the
    entries the hub stored; None for a table the hub has not heard of."""
    from .dispute_page import render_page
    from .dispute_report import from_entries
    from .i18n import language, translator

    info = hub.tables.get(table)
    if info is None:
        return None
    entries = hub.store.entries(table, info["match"], hub.haves.get((table, info["match"]), 0))
    game = next((e["payload"].get("game") for e in entries if e["kind"] == "match"), None) or info.get("game") or "novuss"
    report = from_entries(game, entries, _("table {table} in the hall").format(table=table))
    return render_page(report, language(), translate=translator(language()))


def create_hall_app(hub, hosts=()):
    """The FastAPI app over ``hub`` (a ``judge.hub.Hub``); it joins the hub's listeners to push to browsers."""
    from fastapi import FastAPI, HTTPException, WebSocket, WebSocketDisconnect
    from fastapi.responses import FileResponse
    from fastapi.staticfiles import StaticFiles

    push = OverlayHub()  # its WebSocket fan-out: each browser has a queue on the server's loop
    hub.listeners.append(push.broadcast)
    app = FastAPI(title="shotjudge hall", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.hub = push  # ``OverlayServer.stop`` ends the browsers' sockets first
    app.add_middleware(HostCheck, names=hosts)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    no_store = {"Cache-Control": "no-store"}

    @app.get("/", include_in_schema=False)
    def hall_page():
        return FileResponse(STATIC / "hall.html", headers=no_store)

    @app.get("/tables/{table}", include_in_schema=False)
    def table_page(table: str):
        if table not in hub.tables:
            raise HTTPException(404, _("no table {table} has published to this hub").format(table=repr(table)))
        return FileResponse(STATIC / "hall.html", headers=no_store)  # its table view

    @app.get("/api/hall")
    def hall():
        return hub.hall()

    @app.get("/tables/{table}/report", include_in_schema=False)
    def report_page(table: str):
        from fastapi.responses import HTMLResponse

        page = dispute_page(hub, table)
        if page is None:
            raise HTTPException(404, _("no table {table} has published to this hub").format(table=repr(table)))
        return HTMLResponse(page, headers=no_store)

    @app.get("/api/tables/{table}/report")
    def report(table: str):
        doc = dispute_report(hub, table)
        if doc is None:
            raise HTTPException(404, _("no table {table} has published to this hub").format(table=repr(table)))
        return doc

    @app.websocket("/ws")
    async def ws(socket: WebSocket):
        await socket.accept()
        queue = push.subscribe()
        try:
            await socket.send_text(json.dumps({"type": "hello", **hub.hall()}, ensure_ascii=False))
            while True:
                text = await queue.get()
                if text is None:  # the hub is stopping
                    await socket.close()
                    break
                await socket.send_text(text)
        except (WebSocketDisconnect, RuntimeError, asyncio.CancelledError):
            pass
        finally:
            push.unsubscribe(queue)

    return app
