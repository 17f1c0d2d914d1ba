"""``shotjudge report``: the dispute report of a match as one printable HTML page, and its PDF.

From a replay report (``--replay-report report.json``, with the crops ``replay --report`` put beside it) or
from a live match's journal (``--journal match.sqlite``, read only, also while the match goes on; its clips
with ``--clips`` give the crops, cut with the journal's calibration or ``--calibration``). Per shot: the
calls and the text of each call's clause (the original language prevails; the page says which text is the
original), the actions, why the shot is flagged, the key instants with their uncertainty and frames, a
labelled crop and a board diagram of each, and the referee's decisions. ``--pdf`` prints the same page
through Debian's Chromium (Playwright drives it; nothing is downloaded). Written all or nothing.
"""
from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from .errors import UserError
from .i18n import _, add_lang_arg

__all__ = ["register", "run", "write_pdf", "report_html"]


def register(sub) -> None:
    p = sub.add_parser("report", help=_("the dispute report of a match: one printable HTML page (and PDF)"),
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--replay-report", metavar="REPORT.json", help=_("the report `replay --report` wrote"))
    src.add_argument("--journal", metavar="MATCH.sqlite", help=_("a live match's journal"))
    p.add_argument("--clips", help=_("with --journal: the folder of the per-shot clips (`live --clips`), for the crops"))
    p.add_argument("--calibration", help=_("with --journal: the calibration to cut the crops with (default: the journal's)"))
    p.add_argument("--html", required=True, metavar="OUT.html", help=_("write the page here"))
    p.add_argument("--pdf", metavar="OUT.pdf", help=_("also print it to this PDF (needs Debian's chromium)"))
    add_lang_arg(p)
    p.set_defaults(func=run)


def report_html(lang: str, *, replay_report: str | None = None, journal: str | None = None, clips: str | None = None,
                calibration: str | None = None) -> str:
    """The page from a replay report, or from a journal (with its clips and calibration for the crops)."""
    from rules.clauses import clause_text

    from .dispute_page import render_page
    from .dispute_report import from_journal, from_replay_report
    from .i18n import translator

    report = from_journal(journal, clips, calibration) if journal else from_replay_report(replay_report)

    def clause(clause_id: str, lang: str):
        try:
            return clause_text(clause_id, lang)
        except ValueError:
            return None

    return render_page(report, lang, translate=translator(lang), clause_text=clause)


def write_pdf(page_html: str, out: str | Path) -> None:
    """Print ``page_html`` to ``out`` (A4, backgrounds kept) in headless Chromium (``out``: a staged
    temporary path; ``run`` renames it into place with the page)."""
    chromium = shutil.which("chromium")
    if chromium is None:
        raise UserError(_("--pdf needs Debian's chromium (apt-get install chromium); the HTML page was not written either"))
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            page.set_content(page_html, wait_until="load")
            page.pdf(path=str(out), format="A4", print_background=True,
                     margin={"top": "12mm", "bottom": "12mm", "left": "12mm", "right": "12mm"})
        finally:
            browser.close()


def run(args) -> int:
    from calibration.atomic import staged_files

    for option, path in (("--html", args.html), ("--pdf", args.pdf)):
        if path and not Path(path).parent.is_dir():
            raise UserError(_("{option} {path}: folder {folder} does not exist").format(option=option, path=path, folder=Path(path).parent))
    if args.journal is None and (args.clips or args.calibration):
        raise UserError(_("--clips and --calibration go with --journal (a replay report has its crops beside it)"))
    page = report_html(args.lang, replay_report=args.replay_report, journal=args.journal, clips=args.clips, calibration=args.calibration)
    with staged_files() as stage:
        if args.pdf:
            stage.file(args.pdf, lambda tmp: write_pdf(page, tmp))
        stage.file(args.html, lambda tmp: Path(tmp).write_text(page, encoding="utf-8"))
    print(_("report: {path}").format(path=args.html + (f", {args.pdf}" if args.pdf else "")), file=sys.stderr)
    return 0
