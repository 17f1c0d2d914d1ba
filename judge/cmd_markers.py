"""``shotjudge markers``: print the table's ArUco markers (or the lens-calibration ChArUco board) at true
scale, with a 100 mm ruler to check the printer."""
from __future__ import annotations

from judge.i18n import _

__all__ = ["register", "run"]


def register(subparsers) -> None:
    p = subparsers.add_parser("markers", help=_("write printable marker sheets (PDF or PNG, true scale)"),
                              description=_("Write A4 sheets with the profile's ArUco markers at true size, each "
                                            "labelled with its id and where it goes in words and millimetres, a plan "
                                            "of the board with every marker numbered, and a 100 mm ruler."))
    p.add_argument("--game", choices=("novuss", "cvrnkana"), required=True)
    p.add_argument("--profile", help=_("profile name or JSON file (default: the game's default profile)"))
    p.add_argument("--out", required=True, help=_("output file, .pdf or .png"))
    p.add_argument("--dpi", type=int, default=300, help=_("page resolution written into the file (default 300)"))
    p.add_argument("--charuco", action="store_true", help=_("write the ChArUco board for lens calibration instead"))
    p.set_defaults(func=run)


def run(args) -> int:
    from calibration.intrinsics import CharucoSpec
    from calibration.marker_places import marker_places
    from calibration.profile import profile_for
    from calibration.sheets import charuco_pages, marker_pages, save_pages, sheet_subject, sheet_title
    from judge.errors import UserError
    from judge.options import output_path

    if not 72 <= args.dpi <= 1200:
        raise UserError(_("--dpi must be 72-1200, got {dpi}").format(dpi=args.dpi))
    profile = profile_for(args.game, args.profile)
    output_path("--out", args.out)  # its folder made, or one line saying why it cannot be
    if args.charuco:
        pages = charuco_pages(CharucoSpec(), args.dpi)
        paths = save_pages(pages, args.out, args.dpi, sheet_title(profile, charuco=True))
    else:
        pages = marker_pages(profile, args.dpi)
        paths = save_pages(pages, args.out, args.dpi, sheet_title(profile), sheet_subject(profile))
    what = _("ChArUco board") if args.charuco else _("{n} markers of {profile}").format(
        n=len(profile.markers["centres_mm"]), profile=profile.name)
    print(_("wrote {what} on {value} page(s): {value2}").format(
        what=what, value=len(pages), value2=', '.join((str(p) for p in paths))))
    if not args.charuco:
        for place in marker_places(profile):
            print(place.text)
    print(_("print at 100% / actual size and check the ruler measures 100 mm"))
    return 0
