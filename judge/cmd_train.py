"""``shotjudge train``: render a domain-randomised dataset, train the YOLO detector, export it to models/.

The defaults are the run shipped in ``models/`` (sized for a shared 2-core CPU, see models/README.md); a
GPU run is the same command with bigger numbers and ``SHOTJUDGE_DEVICE=0``. Interrupted? Run the same
command again: the dataset is reused and training resumes from ``runs/train/NAME/weights/last.pt``.
"""
from __future__ import annotations

from judge.errors import UserError
from judge.i18n import _

__all__ = ["register", "run", "check_learned_extra"]


def register(sub) -> None:
    p = sub.add_parser("train", help=_("train the learned detector on simulator frames and export it to models/"),
                       description=_("Render a domain-randomised dataset of both games, train an ultralytics YOLO "
                                     "detector from a model YAML (nothing is downloaded), export ONNX (and NCNN)."))
    p.add_argument("--data-dir", default="datasets/shotjudge", help=_("dataset folder (reused if the spec matches)"))
    p.add_argument("--games", default="novuss,cvrnkana", help=_("comma-separated games"))
    p.add_argument("--renderers", type=int, default=40, help=_("randomised renderers (looks) per game for training"))
    p.add_argument("--frames", type=int, default=10, help=_("random layouts per renderer"))
    p.add_argument("--tiles", type=int, default=6, help=_("training tiles cut from each layout"))
    p.add_argument("--val-renderers", type=int, default=4, help=_("renderers per game for validation (other seeds)"))
    p.add_argument("--moving", type=float, default=0.12, help=_("share of pawns and marbles moving, smeared by the "
                                                                "exposure (default 0.12, as in the evaluation frames)"))
    p.add_argument("--also-train", action="append", default=[], metavar="DIR",
                   help=_("also train on this finished dataset folder's images (repeatable; validation stays --data-dir's)"))
    p.add_argument("--data-only", action="store_true", help=_("render the dataset and stop (e.g. for --also-train)"))
    p.add_argument("--tile-px", type=int, default=320, help=_("tile size = training image size, px"))
    p.add_argument("--model", default=None, help=_("model YAML (default models/shotjudge-yolo.yaml), or a local .pt to "
                                                   "fine-tune (e.g. models/shotjudge-det.pt)"))
    p.add_argument("--lr0", type=float, default=0.01, help=_("initial learning rate (cosine schedule to 1%%)"))
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--time-h", type=float, default=0.9, help=_("stop training after this many hours (0: no bound)"))
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--name", default="shotjudge", help=_("run name under runs/train/"))
    p.add_argument("--no-resume", dest="resume", action="store_false", help=_("start over even if last.pt exists"))
    p.add_argument("--export-to", default="models", help=_("folder for the exported model ('' to skip export)"))
    p.add_argument("--stem", default="shotjudge-det", help=_("exported file name without extension"))
    p.add_argument("--formats", default="pt,onnx,onnx-crops",
                   help=_("comma-separated export formats: pt, onnx, onnx-crops (any input size: the learned path's "
                          "crops), ncnn (ncnn needs 'pip install pnnx ncnn')"))
    p.add_argument("--export-size", default="1280x736", help=_("inference size WIDTHxHEIGHT of the exported model"))
    p.set_defaults(func=run, resume=True)


def check_learned_extra(find_spec=None) -> None:
    """``train`` needs ultralytics (the ``learned`` extra) for its last step: refuse at once, before the dataset
    is rendered (minutes to hours), not with a traceback at the end."""
    if find_spec is None:
        from importlib.util import find_spec
    if find_spec("ultralytics") is None:
        raise UserError(_("train needs the learned detector's packages (ultralytics): pip install '.[learned]'"))


def run(args) -> int:
    from judge.training.train import DataSpec, TrainSpec, build_dataset, export, merge_datasets, train

    try:
        ew, eh = (int(v) for v in args.export_size.lower().split("x"))
    except ValueError:
        raise UserError(_("--export-size must be WIDTHxHEIGHT, got {export_size}").format(
            export_size=repr(args.export_size))) from None
    if ew % 32 or eh % 32:
        raise UserError(_("--export-size sides must be multiples of 32, got {ew}x{eh}").format(ew=ew, eh=eh))
    if not args.data_only:
        check_learned_extra()  # after the options are checked, before anything is rendered
    games = tuple(g.strip() for g in args.games.split(",") if g.strip())
    data = DataSpec(games=games, settings_per_game=args.renderers, frames_per_setting=args.frames,
                    val_settings_per_game=args.val_renderers, tile_px=args.tile_px, tiles_per_frame=args.tiles,
                    seed=args.seed, moving_share=args.moving)
    yaml = build_dataset(data, args.data_dir)
    if args.data_only:
        print(_("dataset: {yaml}").format(yaml=yaml))
        return 0
    if args.also_train:
        yaml = merge_datasets(yaml, args.also_train)
    spec = TrainSpec(imgsz=args.tile_px, epochs=args.epochs, batch=args.batch, time_h=args.time_h or None,
                     workers=args.workers, seed=args.seed, name=args.name, lr0=args.lr0,
                     **({"model": args.model} if args.model else {}))
    best = train(spec, yaml, resume=args.resume)
    print(_("trained: {best}").format(best=best))
    if args.export_to:
        formats = tuple(f.strip() for f in args.formats.split(",") if f.strip())
        for fmt, path in export(best, args.export_to, args.stem, (eh, ew), formats).items():
            print(_("exported {fmt}: {path}").format(fmt=fmt, path=path))
    return 0
