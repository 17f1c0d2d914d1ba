"""``shotjudge hub``: the hall's hub: every table's calls from the MQTT broker, stored, with the standings and
the hall's pages.

Tables publish with ``shotjudge live --table NAME --mqtt HOST[:PORT]``. The hub stores what they publish in
SQLite (``--db``, default hub.sqlite, or ``sqlite:///path``) or PostgreSQL (``--db postgresql://...``), keeps
each match's score and points (Cvrnkaná clause 8; Novuss the organiser's, ``--points-novuss``), and serves
the scoreboard of all tables, live, and a page per table with its calls and dispute report (docs/hub.md).
Stop it with Ctrl-C; it can be killed any time: what it acknowledged is stored, the rest comes again.
"""
from __future__ import annotations

import argparse
import signal
import threading

from .options import count, mqtt_address
from .standings import NOVUSS_POINTS, novuss_points
from .i18n import _

__all__ = ["register", "run"]


def register(sub) -> None:
    p = sub.add_parser("hub", help=_("the hall's hub: every table's calls over MQTT, stored, standings, scoreboard page"),
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mqtt", required=True, type=mqtt_address, metavar="HOST[:PORT]", help=_("the MQTT broker (port 1883 by default)"))
    p.add_argument("--db", default="hub.sqlite", metavar="URL",
                   help=_("where to keep matches and standings: a file or sqlite:///path (SQLite, default hub.sqlite), "
                          "or postgresql://user@host:port/db"))
    p.add_argument("--host", default="127.0.0.1", help=_("address of the hall's pages (default: this machine only)"))
    p.add_argument("--port", type=count(0, 65535), default=8090,
                   help=_("port of the hall's pages (default 8090; 0: a free one, printed)"))
    p.add_argument("--points-novuss", type=novuss_points, default=dict(NOVUSS_POINTS), metavar="win=2,draw=1,loss=0",
                   help=_("the organiser's points for a Novuss match won, drawn and lost on games (default win=2,draw=1,loss=0)"))
    p.add_argument("--client-id", default="shotjudge-hub",
                   help=_("the hub's MQTT session (kept by the broker while the hub is away); one per hub"))
    p.set_defaults(func=run)


def run(args) -> int:
    from .errors import UserError
    from .hub import Hub
    from .hub_store import open_store
    from .hub_web import create_hall_app
    from .overlay import OverlayServer

    store = open_store(args.db)
    host, mqtt_port = args.mqtt
    hub = Hub(store, host, mqtt_port, points_novuss=args.points_novuss, client_id=args.client_id)
    try:
        server = OverlayServer(create_hall_app(hub, hosts=(args.host,)), args.host, args.port).start()
    except OSError as exc:
        store.close()
        raise UserError(_("hall page: {error}; use --port").format(error=exc)) from None
    hub.start()
    print(_("hub: broker {host}:{port}, store {store}; hall page {url}").format(host=host, port=mqtt_port, store=store.name, url=server.url), flush=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: done.set())
    try:
        while not done.wait(1.0):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        hub.stop()
        server.stop()
        store.close()
    print(_("hub stopped: {counts}").format(counts=hub.counts()), flush=True)
    return 0
