"""The dispute report as one self-contained HTML page: what a referee prints, shows at a hearing or files.

Everything is inside the page (the crops as data URIs, each instant's board drawn as SVG from the profile,
the style sheet), so it opens on any machine, offline, without the files it was made from. Per shot: the
calls with their clause and the clause's text (the original language prevails, and the page says which
text is the original), the actions the referee must carry out, why the shot is flagged, the key instants
with their uncertainty and the two frames around each, a labelled crop and a diagram of each, and the
referee's decisions. Printing keeps a shot on one page where it fits (``break-inside: avoid``).
"""
from __future__ import annotations

import base64
import html
import time
from typing import Any, Callable, Mapping

from .dispute_report import Decision, Instant, MatchReport, ShotPage
from .i18n import N_

__all__ = ["render_page", "instant_label"]

GAME_NAMES = {"novuss": "Novuss", "cvrnkana": "Cvrnkaná"}
NOT_JUDGED, FOR_REVIEW, UNDONE = N_("not judged"), N_("for review"), N_("undone")
COLOURS = {"A": "#ff8c00", "B": "#00aaff"}

STYLE = """
body { font: 11pt/1.4 "DejaVu Sans", Arial, sans-serif; margin: 1.5em; color: #111; }
h1 { font-size: 18pt; margin: 0 0 .3em; } h2 { font-size: 13pt; margin: 1.2em 0 .3em; }
table { border-collapse: collapse; margin: .4em 0; } td, th { border: 1px solid #999; padding: .15em .4em; text-align: left; vertical-align: top; }
th { background: #eee; } .meta td:first-child { font-weight: bold; }
section.shot { border-top: 2px solid #333; margin-top: 1.2em; padding-top: .4em; break-inside: avoid; }
.flag { background: #ffe08a; padding: 0 .3em; font-weight: bold; } .refused { background: #ffb3b3; padding: 0 .3em; font-weight: bold; }
.undone { background: #ccc; padding: 0 .3em; font-weight: bold; } .clause { color: #333; font-size: 9.5pt; margin: .1em 0 .4em 1em; }
.clause .orig { font-style: italic; } figure { display: inline-block; margin: .3em .6em .3em 0; vertical-align: top; width: 250px; }
figure img, figure svg { width: 240px; height: 240px; border: 1px solid #666; display: block; }
figcaption { font-size: 9pt; } .none { width: 240px; height: 240px; border: 1px dashed #999; display: flex; align-items: center;
justify-content: center; text-align: center; font-size: 9pt; color: #555; padding: .5em; box-sizing: border-box; }
@media print { body { margin: 0; } a { color: inherit; text-decoration: none; } }
"""


def _identity(text: str) -> str:
    return text


def render_page(report: MatchReport, lang: str = "en", *, translate: Callable[[str], str] | None = None,
                clause_text: Callable[[str, str], Any] | None = None, made_at: float | None = None) -> str:
    """The page. ``translate``: the user-facing texts' translation (English in, the language out);
    ``clause_text(clause, lang)``: the rule's wording (``rules.clauses``), or None where it is not known."""
    _ = translate or _identity
    page = _Page(report, lang, _, clause_text)
    made = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(made_at if made_at is not None else time.time()))
    game = GAME_NAMES.get(report.game, report.game)
    title = _("Dispute report — {game} match").format(game=game)
    parts = [f"<!doctype html><html lang=\"{html.escape(lang)}\"><head><meta charset=\"utf-8\">",
             f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>",
             f"<h1>{html.escape(title)}</h1>", page.meta(made), page.score(), page.summary()]
    parts += [page.shot(s) for s in report.shots]
    parts.append(page.loose())
    parts.append("</body></html>\n")
    return "".join(p for p in parts if p)


def _e(value: Any) -> str:
    return html.escape(str(value))


class _Page:
    def __init__(self, report: MatchReport, lang: str, translate: Callable[[str], str], clause_text):
        self.r, self.lang, self._, self.clause_text = report, lang, translate, clause_text

    def meta(self, made: str) -> str:
        _ = self._
        shots = self.r.shots
        counts = _("{judged} judged, {refused} refused by the rules (the referee decided), {flagged} flagged for review, "
                   "{undone} undone").format(judged=sum(1 for s in shots if s.ruling is not None),
                                             refused=sum(1 for s in shots if s.ruling is None),
                                             flagged=sum(1 for s in shots if s.review), undone=sum(1 for s in shots if s.undone))
        made_from = _("the replay report") if self.r.made_from == "replay" else _("the match journal")
        rows = [(_("Judged from"), self.r.source or "—"), (_("Made from"), made_from), (_("Made at"), made),
                (_("Shots"), counts)]
        if self.r.truncated:
            rows.append((_("Video"), _("breaks off at frame {frame}: a shot in progress there was not judged").format(
                frame=self.r.truncated.get("last_frame"))))
        body = "".join(f"<tr><td>{_e(k)}</td><td>{_e(v)}</td></tr>" for k, v in rows)
        notes = "".join(f"<li>{_e(n)}</li>" for n in self.r.notes)
        return f"<table class=\"meta\">{body}</table>" + (f"<ul>{notes}</ul>" if notes else "")

    def score(self) -> str:
        _ = self._
        s = self.r.score
        if not s:
            return ""
        if "error" in s:
            title, unknown = _("Match score"), _("not known: {why}").format(why=s["error"])
            return f"<h2>{_e(title)}</h2><p>{_e(unknown)}</p>"
        rows = []
        for res in s.get("results", []):
            winner = res.get("winner")
            what = {"win": _("won by {player}").format(player=winner), "draw": _("draw"),
                    "replay": _("replayed")}.get(res.get("result"), str(res.get("result")))
            name = _("Game {n}").format(n=res.get("game_no", "?"))
            rows.append(f"<tr><td>{_e(name)}</td><td>{_e(what)}</td></tr>")
        won = s.get("games_won") or {}
        lines = [_("Games won: A {a}, B {b}").format(a=won.get("A", 0), b=won.get("B", 0))]
        if s.get("marbles"):
            lines.append(_("Marbles in the pit: A {a}, B {b}").format(a=s["marbles"].get("A", 0), b=s["marbles"].get("B", 0)))
        if s.get("points"):
            lines.append(_("Points (clause 8): A {a}, B {b}").format(a=s["points"].get("A", 0), b=s["points"].get("B", 0)))
        status = _("the match is over") if s.get("over") else _("the match is not over")
        title = _("Match score")
        return (f"<h2>{_e(title)}</h2><table>{''.join(rows)}</table>"
                f"<p>{'<br>'.join(_e(x) for x in lines)}<br>{_e(status)}</p>")

    def summary(self) -> str:
        _ = self._
        head = "".join(f"<th>{_e(h)}</th>" for h in (_("Game"), _("Shot"), _("Player"), _("Calls"), _("Referee")))
        rows = []
        for s in self.r.shots:
            calls = "; ".join(c.get("text") or c["code"] for c in (s.ruling or {}).get("calls", [])) or (s.error or "")
            marks = " ".join(m for m in (self._marks(s), _("{n} decision(s)").format(n=len(s.decisions)) if s.decisions else "") if m)
            rows.append(f"<tr><td>{s.game_no}</td><td><a href=\"#{_anchor(s)}\">{_e(self._shot_name(s))}</a></td>"
                        f"<td>{_e(s.player or '—')}</td><td>{_e(calls)}</td><td>{marks}</td></tr>")
        title = _("Shots")
        return f"<h2>{_e(title)}</h2><table><tr>{head}</tr>{''.join(rows)}</table>"

    def _shot_name(self, s: ShotPage) -> str:
        _ = self._
        return _("shot {n}").format(n=s.shot_no) if s.shot_no is not None else _("refused at {t} s").format(t=f"{s.t0_s:.2f}")

    def _marks(self, s: ShotPage) -> str:
        _ = self._
        out = []
        if s.ruling is None:
            out.append(f"<span class=\"refused\">{_e(_(NOT_JUDGED))}</span>")
        elif s.review:
            out.append(f"<span class=\"flag\">{_e(_(FOR_REVIEW))}</span>")
        if s.undone:
            out.append(f"<span class=\"undone\">{_e(_(UNDONE))}</span>")
        return " ".join(out)

    def shot(self, s: ShotPage) -> str:
        _ = self._
        head = _("Game {g} · {shot} · player {p}").format(g=s.game_no, shot=self._shot_name(s), p=s.player or "—")
        times = _("from {t0} s to {t1} s of the video").format(t0=f"{s.t0_s:.3f}", t1=f"{s.t1_s:.3f}")
        out = [f"<section class=\"shot\" id=\"{_anchor(s)}\"><h2>{_e(head)} {self._marks(s)}</h2><p>{_e(times)}</p>"]
        if s.ruling is None:
            label = _("The rules could not judge this shot")
            out.append(f"<p><b>{_e(label)}:</b> {_e(s.error or '')}</p>")
        else:
            out.append(self._calls(s.ruling))
        reasons = [f"{c.get('text') or c['code']} ({c['clause']})" for c in (s.ruling or {}).get("calls", []) if c.get("review")]
        reasons += [_("vision: {note}").format(note=n) for n in s.vision_notes]
        if reasons:
            label = _("Why the referee should look")
            out.append(f"<p><b>{_e(label)}:</b></p><ul>"
                       + "".join(f"<li>{_e(r)}</li>" for r in reasons) + "</ul>")
        if s.instants:
            out.append(self._instants(s.instants, s.before_mm))
        if s.decisions:
            label = _("Referee decisions")
            out.append(f"<p><b>{_e(label)}:</b></p><ul>"
                       + "".join(f"<li>{_e(self._decision(d))}</li>" for d in s.decisions) + "</ul>")
        out.append("</section>")
        return "".join(out)

    def _calls(self, ruling: Mapping[str, Any]) -> str:
        _ = self._
        items = []
        for c in ruling.get("calls", []):
            text = f"<b>{_e(c.get('text') or c['code'])}</b> <code>{_e(c['clause'])}</code>"
            items.append(f"<li>{text}{self._clause(c['clause'])}</li>")
        for a in ruling.get("actions", []):
            items.append(f"<li>{_e(self._action(a))}</li>")
        nxt = ruling.get("next_player")
        if nxt:
            line = _("Next to play: {player}").format(player=nxt)
            items.append(f"<li>{_e(line)}</li>")
        return f"<ul>{''.join(items)}</ul>"

    def _clause(self, clause: str) -> str:
        if self.clause_text is None:
            return ""
        c = self.clause_text(clause, self.lang)
        if c is None:
            return ""
        _ = self._
        tag = _("the original text, which prevails") if c.is_original else _("working translation; the original prevails")
        original = _("Original")
        orig = "" if c.is_original or not c.original_text else \
            f"<div class=\"orig\">{_e(original)}: {_e(c.original_text)}</div>"
        return f"<div class=\"clause\"><b>{_e(c.title)}</b> ({_e(tag)}): {_e(c.text)}{orig}</div>"

    def _action(self, a: Mapping[str, Any]) -> str:
        _ = self._
        at = a.get("at")
        where = _(" at x {x} mm, y {y} mm").format(x=f"{at[0]:.0f}", y=f"{at[1]:.0f}") if at else ""
        fields = {"piece": a.get("piece") or "", "player": a.get("player") or "", "amount": a.get("amount") or 1,
                  "where": where}
        texts = {"place_penalty": _("To do: place a penalty pawn of {player}{where}"),
                 "return": _("To do: put {piece} back{where}"),
                 "debt": _("To do: nothing now; {player} owes {amount} penalty pawn(s), placed once they have pocketed a pawn"),
                 "settle_debt": _("To do: place a penalty pawn {player} owed{where}"),
                 "to_start_line": _("To do: {piece} goes back behind the start line"),
                 "replace": _("To do: replace {piece}{where}")}
        text = texts.get(a["kind"])
        return text.format(**fields) if text else _("To do: {kind}").format(kind=a["kind"])

    def _instants(self, instants: tuple[Instant, ...], before: Mapping[str, Any]) -> str:
        _ = self._
        head = "".join(f"<th>{_e(h)}</th>" for h in (_("Instant"), _("Time"), _("Frames"), _("Where"), _("Pieces")))
        rows, figures = [], []
        where_caption = _("{label}: where the pieces were (board diagram)")
        for k in instants:
            if not k.timed:
                when = _("{t} s, not timed by the camera (the pieces were touching before the shot)").format(t=f"{k.t_s:.3f}")
            elif k.t_err_s > 0:
                when = _("{t} s ± {err} ms (1-sigma)").format(t=f"{k.t_s:.4f}", err=f"{k.t_err_s * 1000:.2f}")
            else:
                when = _("{t} s (the end of the shot)").format(t=f"{k.t_s:.3f}")
            frames = _("between frames {a} and {b} ({f} of the way)").format(a=k.frame_before, b=k.frame_after, f=f"{k.sub_frame:.2f}") \
                if k.frame_before is not None else "—"
            where = _("x {x} mm, y {y} mm").format(x=f"{k.at_mm[0]:.1f}", y=f"{k.at_mm[1]:.1f}")
            label = instant_label(k, _)
            rows.append(f"<tr><td>{_e(label)}</td><td>{_e(when)}</td><td>{_e(frames)}</td><td>{_e(where)}</td>"
                        f"<td>{_e(', '.join(k.pieces))}</td></tr>")
            missing = _("no picture: {why}").format(why=_(k.no_picture) if k.no_picture else "—")
            picture = (f"<img alt=\"{_e(label)}\" src=\"data:image/png;base64,{base64.b64encode(k.png).decode()}\">" if k.png
                       else f"<div class=\"none\">{_e(missing)}</div>")
            caption = _("{label} at {t} s: the camera's frame around x {x}, y {y} mm").format(
                label=label, t=f"{k.t_s:.3f}", x=f"{k.at_mm[0]:.0f}", y=f"{k.at_mm[1]:.0f}")
            figures.append(f"<figure>{picture}<figcaption>{_e(caption)}</figcaption></figure>")
            figures.append(f"<figure>{_diagram(self.r.board, k, before)}<figcaption>"
                           f"{_e(where_caption.format(label=label))}</figcaption></figure>")
        return f"<table><tr>{head}</tr>{''.join(rows)}</table><div>{''.join(figures)}</div>"

    def _decision(self, d: Decision) -> str:
        _ = self._
        at = time.strftime("%H:%M:%S", time.gmtime(d.wall_time))
        detail = d.detail
        codes = ", ".join(str(x.get("code")) + (f" ({x['note']})" if x.get("note") else "")
                          for x in detail.get("referee", []) if isinstance(x, dict)) or "—"
        what = {"override": _("override: {code}").format(code=codes),
                "undo": _("the referee undid this shot"),
                "settle": _("settled by the referee ({how})").format(how=detail.get("how", "confirm")),
                "set_state": _("the referee set the game state"),
                "next_game": _("the referee opened the next game"),
                "gap": _("the camera's frames were missing ({why})").format(why=detail.get("reason", "")),
                "note": str(detail.get("text", detail))}.get(d.kind, d.kind)
        by = _(" (by {who})").format(who=_(detail["by"])) if detail.get("by") else ""
        game = _("game {n}").format(n=d.game_no)
        return f"{at} UTC · {game} · {what}{by}"

    def loose(self) -> str:
        if not self.r.decisions:
            return ""
        _ = self._
        title = _("Other referee decisions and events")
        return (f"<h2>{_e(title)}</h2><ul>"
                + "".join(f"<li>{_e(self._decision(d))}</li>" for d in self.r.decisions) + "</ul>")


def _anchor(s: ShotPage) -> str:
    return f"g{s.game_no}-s{s.shot_no}" if s.shot_no is not None else f"g{s.game_no}-r{s.t0_s:.3f}".replace(".", "_")


def instant_label(k: Instant, _: Callable[[str], str]) -> str:
    """What an instant is, in words (``_``: the translation)."""
    names = {"first_contact": _("first contact"), "second_contact": _("second contact of the striker")}
    if k.name in names:
        return names[k.name]
    if k.kind == "rest":
        return _("where the striker came to rest") + (f" ({k.note})" if k.note else "")
    kinds = {"cushion": _("cushion"), "pocket": _("pocketed"), "pit": _("into the pit"), "off": _("over the cushion"),
             "touch": _("touched"), "external": _("moved from outside"), "lost": _("lost from sight")}
    return f"{kinds.get(k.kind, k.kind)}: {', '.join(k.pieces)}" + (f" ({k.note})" if k.note else "")


def _diagram(board: Mapping[str, Any], k: Instant, before: Mapping[str, Any]) -> str:
    """The board (from the profile) with the pieces where the fits put them at this instant, the others
    faded where they stood before the shot, and a ring round the place the instant happened; +y away from
    player A, as on the spectators' page."""
    if not board.get("extent_mm"):
        return ""
    x0, y0, x1, y1 = board["extent_mm"]
    w = x1 - x0
    line = f"fill=\"none\" stroke=\"#3b2a14\" stroke-width=\"{w / 250:.2f}\""
    out = [f"<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"{x0} {-y1} {w} {y1 - y0}\" role=\"img\">",
           f"<rect x=\"{x0}\" y=\"{-y1}\" width=\"{w}\" height=\"{y1 - y0}\" fill=\"#c8a165\"/>"]
    for z in board.get("zones", []):
        a, b, c, d = z["rect"]
        out.append(f"<rect x=\"{a}\" y=\"{-d}\" width=\"{c - a}\" height=\"{d - b}\" {line}/>")
    out += [f"<circle cx=\"{c['x']}\" cy=\"{-c['y']}\" r=\"{c['r']}\" {line}/>" for c in board.get("circles", [])]
    out += [f"<line x1=\"{l0}\" y1=\"{-l1}\" x2=\"{l2}\" y2=\"{-l3}\" {line}/>" for l0, l1, l2, l3 in board.get("lines", [])]
    out += [f"<circle cx=\"{h['x']}\" cy=\"{-h['y']}\" r=\"{h['r']}\" fill=\"#111\"/>" for h in board.get("holes", [])]
    r = float(board.get("piece_r_mm", 15))
    faded = {p: xy for p, xy in before.items() if p not in k.positions_mm}
    for layer, opacity in ((faded, 0.35), (k.positions_mm, 1.0)):
        for piece, xy in sorted(layer.items()):
            px, py = float(xy[0]), float(xy[1])
            pr = float(board.get("bat_r_mm", r)) if piece == "bat" else r
            fill = COLOURS.get(piece[:1], "#eeeeee")
            out.append(f"<g opacity=\"{opacity}\"><circle cx=\"{px:.1f}\" cy=\"{-py:.1f}\" r=\"{pr}\" fill=\"{fill}\" "
                       f"stroke=\"#222\" stroke-width=\"{r / 8:.2f}\"/><text x=\"{px:.1f}\" y=\"{-py + r * 1.9:.1f}\" "
                       f"font-size=\"{r * 1.2:.1f}\" text-anchor=\"middle\">{_e(piece)}</text></g>")
    ax, ay = k.at_mm
    out.append(f"<circle cx=\"{ax:.1f}\" cy=\"{-ay:.1f}\" r=\"{r * 2.5:.1f}\" fill=\"none\" stroke=\"#d00\" stroke-width=\"{r / 4:.2f}\"/>")
    out.append("</svg>")
    return "".join(out)
