"""`croupier vision ...`: identify cards in images, calibrate the table camera, train and evaluate the card models."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from controller.cli import CliError

DEFAULT_SEED = 20261121


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("vision", help="card recognition from camera images",
                            description="Card recognition: identify cards in images, calibrate the table camera, "
                                        "train and evaluate the models.")
    vs = parser.add_subparsers(dest="vision_command", metavar="ACTION", required=True)

    p = vs.add_parser("identify", help="print the cards found in each image",
                      description="Print the cards found in each image (rank, suit, box in image pixels, "
                                  "confidence).")
    p.add_argument("images", nargs="+", metavar="IMAGE")
    p.add_argument("--json", action="store_true", help="print JSON: [{image, cards: [{card, rank, suit, box, "
                                                       "confidence}]}]")
    p.add_argument("--models", type=Path, default=None, help="folder with detector.onnx and classifier.onnx")
    p.add_argument("--min-confidence", type=float, default=0.0,
                   help="leave out cards named with less confidence (default: report all)")
    p.add_argument("--as-table", action="store_true",
                   help="read each image as the table camera reads its frames (index corners read on their own, as "
                        "a fanned or overlapped card shows): for frames saved from the table's camera")
    p.set_defaults(func=_identify)

    p = vs.add_parser("calibrate", help="find the table in a camera image and save its homography",
                      description="Compute the homography from image pixels to table millimetres, from the four "
                                  "ArUco markers (DICT_4X4_50 ids 0..3 clockwise from top-left) or from four "
                                  "corners given by hand, and write it to the camera config (TOML).")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--image", type=Path, help="a still from the table camera")
    src.add_argument("--camera", help="grab one frame from this source (device index, /dev/v4l/by-id path, "
                                      "video file or rtsp:// URL)")
    src.add_argument("--sim", action="store_true", help="use a frame of the simulated camera")
    p.add_argument("--corners", help="table corners in image pixels, clockwise from top-left: "
                                     "'x,y x,y x,y x,y' (instead of markers)")
    p.add_argument("--table-mm", nargs=2, type=float, metavar=("WIDTH", "HEIGHT"), default=None,
                   help="table size in millimetres (default: from the config, else 1200 675)")
    p.add_argument("--config", type=Path, default=Path("camera.toml"),
                   help="camera config to update (default camera.toml; created if missing)")
    p.set_defaults(func=_calibrate)

    p = vs.add_parser("train", help="train the card models (needs pip install -e '.[train]')",
                      description="Render training data, train the detector and classifier, export ONNX. "
                                  "Seeded: the same seed gives the same models on the same machine.")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    p.add_argument("--out", type=Path, default=None, help="output folder (default: vision/models)")
    p.add_argument("--det-scenes", type=int, default=5000)
    p.add_argument("--cls-scenes", type=int, default=12000)
    p.add_argument("--det-epochs", type=int, default=12)
    p.add_argument("--cls-epochs", type=int, default=8)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--detector-weights", type=Path, default=None,
                   help="reuse this detector.pt (saved by an earlier run) and train only the classifier")
    p.add_argument("--detector-crops", action="store_true",
                   help="also train the classifier on the corners the trained detector cuts from rendered scenes")
    p.add_argument("--finetune-detector", type=Path, default=None, metavar="DETECTOR_ONNX",
                   help="instead: go on training this detector on fresh scenes (--det-scenes, --det-epochs, "
                        "--dealt) and write only detector.onnx")
    p.add_argument("--finetune-classifier", type=Path, default=None, metavar="CLASSIFIER_ONNX",
                   help="instead: go on training this classifier on the corners the detector in --out (else the "
                        "shipped one) cuts from fresh scenes (--cls-scenes, --cls-epochs, --dealt); write only "
                        "classifier.onnx")
    p.add_argument("--finetune-second-reader", type=Path, default=None, metavar="SECOND_READER_ONNX",
                   help="instead: go on training this second reader as --finetune-classifier does a classifier; "
                        "write only second_reader.onnx")
    p.add_argument("--finetune-wide-reader", type=Path, default=None, metavar="WIDE_READER_ONNX",
                   help="instead: go on training this wide reader as --finetune-classifier does a classifier; write "
                        "only wide_reader.onnx")
    p.add_argument("--body", action="store_true",
                   help="instead: train the body reader (whole cards in full sight: rank and suit from pips and "
                        "faces) on --body-scenes fresh scenes for --body-epochs; write only body.onnx")
    p.add_argument("--second-reader", action="store_true",
                   help="instead: train the second index reader (a wider classifier, from scratch) on the corners "
                        "the detector in --out (else the shipped one) cuts from --cls-scenes fresh scenes (--dealt) "
                        "for --cls-epochs; write only second_reader.onnx")
    p.add_argument("--wide-reader", action="store_true",
                   help="instead: train the wide reader (an index and the strip beside it) on the corners the "
                        "detector in --out (else the shipped one) cuts from --cls-scenes fresh scenes (--dealt) for "
                        "--cls-epochs; write only wide_reader.onnx")
    p.add_argument("--locator", action="store_true",
                   help="instead: train the index locator (where an index the detector found lies and which way it "
                        "points) on squares cut around the indices and cards the detector in --out (else the shipped "
                        "one) finds in --locator-scenes fresh scenes (--dealt) for --locator-epochs; write only "
                        "locator.onnx")
    p.add_argument("--sign-reader", action="store_true",
                   help="instead: train the sign reader (a court picture's suit sign: club, spade or none in sight) "
                        "on --sign-scenes fresh close renders of black court cards for --sign-epochs; write only "
                        "sign_reader.onnx")
    p.add_argument("--sign-scenes", type=int, default=40000)
    p.add_argument("--sign-epochs", type=int, default=8)
    p.add_argument("--locator-scenes", type=int, default=8000)
    p.add_argument("--locator-epochs", type=int, default=10)
    p.add_argument("--body-scenes", type=int, default=8000)
    p.add_argument("--body-epochs", type=int, default=10)
    p.add_argument("--dealt", type=float, default=0.6,
                   help="with --finetune-* or --second-reader: share of dealers' layouts among the scenes "
                        "(default 0.6)")
    p.add_argument("--tight-fans", type=float, default=0.0, metavar="SHARE",
                   help="with --finetune-detector/-classifier/-second-reader: share of the scenes that are hands of "
                        "6-13 tightly fanned cards (default 0); --dealt is then the share of the rest")
    p.add_argument("--lr", type=float, default=5e-4, help="with --finetune-*: peak learning rate")
    p.add_argument("--extra-styles", type=float, default=0.0, metavar="SHARE",
                   help="with --finetune-detector/-classifier/-second-reader: this share of the scenes' decks in more "
                        "index styles (TrueType rank glyphs, and the deck in --extra-faces); both readers given are "
                        "fine-tuned on the same corners")
    p.add_argument("--extra-faces", type=Path, action="append", default=None, metavar="DIR",
                   help="with --extra-styles: a folder of another deck's upright faces (6s.png, 10h.png, ...; at most "
                        "2 of 52 missing); again for more decks. A folder vision.training.realfaces wrote from "
                        "photos also gives those photos' index corners")
    p.add_argument("--extra-face-share", type=float, default=1 / 3, metavar="SHARE",
                   help="with --extra-faces: the share of the extra styles' decks drawn from those folders")
    p.set_defaults(func=_train)

    p = vs.add_parser("evaluate", help="the acceptance figures: held-out real photos and a synthetic test set",
                      description="Score the models on the held-out real photos (rank found inside the label "
                                  "box; precision) and on a seeded synthetic test set (rank and suit).")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED + 1)
    p.add_argument("--synthetic", type=int, default=2000, metavar="CARDS",
                   help="cards in the synthetic test set (default 2000; 0 skips it)")
    p.add_argument("--piles", type=int, default=2000, metavar="CARDS",
                   help="cards in the harder synthetic set of random piles (default 2000; 0 skips it)")
    p.add_argument("--tight-fans", type=int, default=0, metavar="CARDS",
                   help="also read a synthetic set of hands of tightly fanned cards with this many readable cards, as "
                        "table frames (default 0: skipped)")
    p.add_argument("--fans-faces", type=Path, action="append", default=None, metavar="DIR",
                   help="with --tight-fans: draw every hand's deck from one of these folders of a real deck's upright "
                        "faces (6s.png, 10h.png, ...; as `train --extra-faces`), not the renderer's decks")
    p.add_argument("--fans-photos", type=float, default=None, metavar="SCALE",
                   help="with --tight-fans: read the fans as photos (as `identify` reads them), each frame laid at "
                        "SCALE of its size in a canvas of its felt (1: as drawn; 0.5: its cards half the size, as "
                        "from across a table)")
    p.add_argument("--no-real", action="store_true", help="skip the real photos")
    p.add_argument("--models", type=Path, default=None)
    p.add_argument("--json", nargs="?", const="", default=None, metavar="PATH",
                   help="also write the figures as JSON (default path: vision-evaluate.json)")
    p.add_argument("--photos", type=Path, action="append", default=None, metavar="DIR",
                   help="instead: score this labelled folder (Pascal VOC xml, YOLO txt with a class list, LabelMe or "
                        "cards.json; repeatable): rank and rank-and-suit recall and precision, a confusion table by "
                        "rank, and the failures as an HTML contact sheet")
    p.add_argument("--sheet", type=Path, default=None, metavar="HTML",
                   help="with --photos: where to write the failures' contact sheet (default: "
                        "vision-failures-<folder>.html)")
    p.add_argument("--enrolled", type=Path, default=None, metavar="DECK_DIR",
                   help="read with this enrolled deck model too (a folder `croupier vision enrol` wrote)")
    p.add_argument("--index-labels", action="store_true",
                   help="with --photos: the labels outline index corners, not cards (a report stands on a label when "
                        "the label's centre is inside the card it found)")
    p.add_argument("--as-table", action="store_true",
                   help="with --photos: read them as the table camera reads its frames (index corners read on their "
                        "own, as a fanned or overlapped card shows), not as photos")
    p.set_defaults(func=_evaluate)

    p = vs.add_parser("enrol", help="learn the house's deck (minutes on the CPU): from a spread, or from play",
                      description="Learn the house's own deck and write an enrolled deck model beside the table's "
                                  "journal (<state_dir>/<table id>.deck/), which the table's camera reader then "
                                  "consults first. A model that reads a held-back part of its examples worse than "
                                  "the base readers is refused (kept in refused/, not used).")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--spread", nargs="+", type=Path, metavar="IMAGE",
                     help="photos of a new deck spread in its factory order (--order), cards apart in rows, read "
                          "left to right, top row first, image after image")
    src.add_argument("--from-play", action="store_true",
                     help="from the corners the table collected as it dealt (each labelled by the shoe)")
    p.add_argument("--order", default=None, metavar="BRAND",
                   help="with --spread: the deck's factory order (a brand in vision/deck_orders.toml, e.g. bicycle)")
    p.add_argument("--orders", type=Path, default=None, metavar="TOML",
                   help="factory orders from this file instead of vision/deck_orders.toml")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--config", type=Path, help="the table's TOML config (its deck folder lies beside its journal)")
    where.add_argument("--deck", type=Path, metavar="DIR", help="the deck folder itself")
    p.add_argument("--models", type=Path, default=None, help="the base readers' folder (default: vision/models)")
    p.add_argument("--json", action="store_true", help="print the model's record (model.json) as JSON")
    p.set_defaults(func=_enrol)


def _recogniser(models: Path | None, photos: bool = False, enrolled: Path | None = None, jokers: bool = False):
    from vision.photos import PhotoReader
    from vision.recognise import TABLE_SIZES, Recogniser

    deck = None
    if enrolled is not None:
        from vision.enrol import load_enrolled

        deck = load_enrolled(enrolled)
        if deck is None:
            raise CliError(f"--enrolled: no usable enrolled deck model in {enrolled} (none there, refused, or "
                           "changed since: see the log)")
    try:
        # Photos: any card size, and no index read on its own (ink on a busy close photo is no index), except a photo
        # of many small cards, read as table frames in tiles (vision/photos.py).
        if photos:
            return PhotoReader(models, enrolled=deck, jokers=jokers)
        return Recogniser(models, det_size=TABLE_SIZES, enrolled=deck, jokers=jokers)
    except FileNotFoundError as exc:
        raise CliError(str(exc)) from None


def _deck_folder(args: argparse.Namespace) -> Path:
    if args.deck is not None:
        return args.deck
    from controller.config import ConfigError, load_config
    from vision.enrol import deck_dir

    try:
        config = load_config(args.config)
    except (ConfigError, OSError) as exc:
        raise CliError(f"--config: {exc}") from None
    if not hasattr(config, "table_id"):
        raise CliError(f"--config: {args.config} is no table's config")
    return deck_dir(config)


def _enrol(args: argparse.Namespace) -> int:
    import shutil

    from vision.enrol import EnrolError, enrol, factory_order, play_examples, spread_examples

    deck = _deck_folder(args)
    rec = _recogniser(args.models)
    try:
        if args.spread:
            if args.order is None:
                raise CliError("--spread needs --order BRAND (the deck's factory order)")
            examples = spread_examples(args.spread, factory_order(args.order, args.orders))
            source = f"spread of {len(args.spread)} image(s), order {args.order}"
        else:
            examples = play_examples(deck)
            if not examples:
                raise CliError(f"--from-play: no corners collected in {deck / 'play'} (a table with a shoe and a "
                               "camera collects them as it deals)")
            source = f"play: {len(examples)} sightings"
        model = enrol(examples, rec, source, say=lambda line: print(line, file=sys.stderr))
    except EnrolError as exc:
        raise CliError(str(exc)) from None
    hb = model.meta["held_back"]
    if not model.meta["accepted"]:
        model.save(deck / "refused")
        raise CliError(f"enrolled deck model {model.id} refused: it reads {hb['enrolled_right']} of its "
                       f"{hb['corners']} held-back corners, the base readers {hb['base_right']}; kept in "
                       f"{deck / 'refused'}, not used")
    model.save(deck)
    shutil.rmtree(deck / "refused", ignore_errors=True)
    if args.json:
        json.dump(model.meta, sys.stdout, indent=2)
        print()
    else:
        print(f"enrolled deck model {model.id}: {model.meta['cards']} cards, {model.meta['corners']} corners, "
              f"{model.meta['seconds']:.1f} s; held back {hb['corners']} corners: enrolled {hb['enrolled_right']}, "
              f"base readers {hb['base_right']} right; wrote {deck}")
    return 0


def _identify(args: argparse.Namespace) -> int:
    import cv2

    rec = _recogniser(args.models, photos=not args.as_table)
    results = []
    for name in args.images:
        image = cv2.imread(name, cv2.IMREAD_COLOR)
        if image is None:
            raise CliError(f"cannot read image {name!r}")
        cards = [d for d in rec.identify(image) if d.card is not None and d.confidence >= args.min_confidence]
        cards.sort(key=lambda d: (d.box[0], d.box[1]))
        results.append({"image": name, "cards": [d.to_json() for d in cards]})
    if args.json:
        json.dump(results, sys.stdout, indent=2)
        print()
    else:
        for r in results:
            found = ", ".join(f"{c['card']} ({c['confidence']:.2f}) at {c['box']}" for c in r["cards"])
            print(f"{r['image']}: {found or 'no cards'}")
    return 0


def _calibrate(args: argparse.Namespace) -> int:
    import cv2

    from vision import geometry

    config = geometry.load_config(args.config) if args.config.exists() else {}
    table_mm = tuple(args.table_mm) if args.table_mm else tuple(config.get("table_mm", (1200.0, 675.0)))
    if args.image:
        frame = cv2.imread(str(args.image), cv2.IMREAD_COLOR)
        if frame is None:
            raise CliError(f"cannot read image {str(args.image)!r}")
    elif args.sim:
        from drivers.camera.sim import SimulatedCamera

        frame = SimulatedCamera(table_mm=table_mm).read()
    else:
        from drivers.camera.capture import CameraError, OpenCVCamera

        try:
            with OpenCVCamera(args.camera, retries=2) as cam:
                frame = cam.read()
        except CameraError as exc:
            raise CliError(str(exc)) from None
    try:
        if args.corners:
            corners = geometry.parse_corners(args.corners)
            calib = geometry.Calibration.from_corners(corners, table_mm, frame.shape[1::-1])
        else:
            calib = geometry.Calibration.from_markers(frame, table_mm)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    geometry.save_calibration(args.config, calib)
    print(f"calibrated from {calib.source}: reprojection error {calib.error_px:.2f} px; wrote {args.config}")
    return 0


def _cutting_detector(out: Path) -> Path:
    """The detector whose corners an index reader learns from: the one in `out` if there is one, else the shipped."""
    from vision.recognise import MODELS_DIR

    return out / "detector.onnx" if (out / "detector.onnx").is_file() else MODELS_DIR / "detector.onnx"


def _train(args: argparse.Namespace) -> int:
    try:
        import vision.training.train  # noqa: F401 - torch and the rest of the train extra
    except ImportError as exc:
        raise CliError(f"training needs the train extra (pip install -e '.[train]'): {exc}") from None
    from controller.progress import progress

    with progress("training steps") as bar:  # each stage's steps in turn; its lines print above the bar
        _train_stage(args, bar)
    return 0


def _train_stage(args: argparse.Namespace, bar: Any) -> None:
    """The training the flags ask for: one model, or (without any) the detector and the classifier."""
    from controller.rng import SeededRng
    from vision.recognise import MODELS_DIR
    from vision.training.train import (finetune_classifier, finetune_detector, train, train_body, train_index_reader,
                                       train_locator, train_sign_reader)

    if args.body:
        train_body(SeededRng(args.seed).numpy(), out=args.out or MODELS_DIR, scenes=args.body_scenes,
                   epochs=args.body_epochs, workers=args.workers, say=bar.say, progress=bar)
        return
    if args.sign_reader:
        train_sign_reader(SeededRng(args.seed).numpy(), out=args.out or MODELS_DIR, scenes=args.sign_scenes,
                          epochs=args.sign_epochs, workers=args.workers, say=bar.say, progress=bar)
        return
    if args.locator:
        out = args.out or MODELS_DIR
        train_locator(SeededRng(args.seed).numpy(), detector=_cutting_detector(out), out=out,
                      scenes=args.locator_scenes, epochs=args.locator_epochs, dealt=args.dealt, workers=args.workers,
                      say=bar.say, progress=bar)
        return
    # The index readers trained from scratch learn from the same corners (--cls-scenes, --cls-epochs, --dealt).
    for reader in ("second_reader", "wide_reader"):
        if getattr(args, reader):
            out = args.out or MODELS_DIR
            train_index_reader(SeededRng(args.seed).numpy(), reader, detector=_cutting_detector(out), out=out,
                               scenes=args.cls_scenes, epochs=args.cls_epochs, dealt=args.dealt, workers=args.workers,
                               say=bar.say, progress=bar)
            return
    for folder in args.extra_faces or []:
        if not folder.is_dir():
            raise CliError(f"--extra-faces: no folder {folder}")
    if not 0 <= args.tight_fans <= 1:
        raise CliError(f"--tight-fans must be a share between 0 and 1, not {args.tight_fans}")
    if args.finetune_detector is not None:
        if not args.finetune_detector.is_file():
            raise CliError(f"no detector at {args.finetune_detector}")
        try:
            finetune_detector(SeededRng(args.seed).numpy(), start=args.finetune_detector, out=args.out or MODELS_DIR,
                              scenes=args.det_scenes, epochs=args.det_epochs, dealt=args.dealt, lr=args.lr,
                              workers=args.workers, fans=args.tight_fans, extra_styles=args.extra_styles,
                              extra_faces=args.extra_faces or [], face_share=args.extra_face_share, say=bar.say,
                              progress=bar)
        except FileNotFoundError as exc:
            raise CliError(str(exc)) from None
        return
    starts = {r: p for r, p in (("classifier", args.finetune_classifier),
                                ("second_reader", args.finetune_second_reader)) if p is not None}
    if starts and (len(starts) > 1 or args.extra_styles > 0 or args.tight_fans > 0):
        from vision.training.train import finetune_readers

        for reader, start in starts.items():
            if not start.is_file():
                raise CliError(f"no {reader.replace('_', ' ')} at {start}")
        out = args.out or MODELS_DIR
        try:
            finetune_readers(SeededRng(args.seed).numpy(), starts, detector=_cutting_detector(out), out=out,
                             scenes=args.cls_scenes, epochs=args.cls_epochs, dealt=args.dealt, lr=args.lr,
                             workers=args.workers, extra_styles=args.extra_styles, extra_faces=args.extra_faces,
                             face_share=args.extra_face_share, fans=args.tight_fans, say=bar.say, progress=bar)
        except FileNotFoundError as exc:
            raise CliError(str(exc)) from None
        return
    if args.tight_fans > 0:  # the wide reader's crops and a whole training run draw no fans
        raise CliError("--tight-fans is for --finetune-detector, --finetune-classifier and --finetune-second-reader")
    for reader, start in (("classifier", args.finetune_classifier), ("second_reader", args.finetune_second_reader),
                          ("wide_reader", args.finetune_wide_reader)):
        if start is None:
            continue
        if not start.is_file():
            raise CliError(f"no {reader.replace('_', ' ')} at {start}")
        out = args.out or MODELS_DIR
        finetune_classifier(SeededRng(args.seed).numpy(), start=start, detector=_cutting_detector(out), out=out,
                            scenes=args.cls_scenes, epochs=args.cls_epochs, dealt=args.dealt, lr=args.lr,
                            workers=args.workers, reader=reader, say=bar.say, progress=bar)
        return
    train(SeededRng(args.seed).numpy(), out=args.out or MODELS_DIR, det_scenes=args.det_scenes,
          cls_scenes=args.cls_scenes, det_epochs=args.det_epochs, cls_epochs=args.cls_epochs, workers=args.workers,
          detector_weights=args.detector_weights, detector_crops=args.detector_crops, say=bar.say, progress=bar)


def _evaluate(args: argparse.Namespace) -> int:
    from functools import partial

    from controller.progress import progress
    from controller.rng import SeededRng
    from vision import evaluate

    figures: dict = {}
    if args.fans_faces and (args.tight_fans <= 0 or args.photos):
        raise CliError("--fans-faces draws the --tight-fans set's decks: give --tight-fans CARDS (and no --photos)")
    if args.fans_photos is not None and (args.tight_fans <= 0 or args.photos or not 0 < args.fans_photos <= 1):
        raise CliError("--fans-photos SCALE reads the --tight-fans set as photos: give --tight-fans CARDS (and no "
                       "--photos), and a SCALE above 0 and at most 1")
    if args.photos:
        with progress("labelled photos", quiet=args.json is not None) as bar:
            figures["photos"] = _evaluate_photos(args, bar.say, bar)
        args.no_real, args.synthetic, args.piles, args.tight_fans = True, 0, 0, 0
    # Photos are read as `identify` reads them; the synthetic table frames as the table camera's are.
    if not args.no_real:
        with progress("real photos", quiet=args.json is not None) as bar:
            figures["real"] = evaluate.real_photos(_recogniser(args.models, photos=True), say=bar.say, progress=bar)
    if args.synthetic > 0:
        with progress("synthetic cards", quiet=args.json is not None) as bar:
            # The renderer deals a 53-card deck, the joker a card to read (as at pai gow).
            figures["synthetic"] = evaluate.synthetic(_recogniser(args.models, jokers=True), SeededRng(args.seed).numpy(),
                                                      args.synthetic, say=bar.say, progress=bar)
        figures["synthetic"]["seed"] = args.seed
    if args.piles > 0:
        with progress("synthetic piles", quiet=args.json is not None) as bar:
            figures["synthetic_piles"] = evaluate.synthetic(_recogniser(args.models, jokers=True),
                                                            SeededRng(args.seed).numpy(),
                                                            args.piles, say=bar.say, scene=evaluate.piles_scene,
                                                            name="harder synthetic set (random piles)", goal=None,
                                                            progress=bar)
        figures["synthetic_piles"]["seed"] = args.seed
    if args.tight_fans > 0:
        from vision import faces

        decks = args.fans_faces or []
        try:
            faces.use_extra_styles(1.0 if decks else 0.0, None, decks or None, 1.0, faces.FACES_MISSING)
        except FileNotFoundError as exc:
            raise CliError(f"--fans-faces: {exc}") from None
        try:
            scale = args.fans_photos
            with progress("synthetic tight fans", quiet=args.json is not None) as bar:
                figures["synthetic_fans"] = evaluate.synthetic(
                    _recogniser(args.models, photos=scale is not None), SeededRng(args.seed).numpy(), args.tight_fans,
                    say=bar.say, progress=bar, goal=None,
                    scene=evaluate.fans_scene if scale is None else partial(evaluate.fans_photo_scene, scale=scale),
                    name="synthetic tight fans" + (f" read as photos at {scale:g} of their size" if scale else "")
                         + (f", decks drawn from {', '.join(d.name for d in decks)}" if decks else ""))
        finally:
            faces.use_extra_styles(0.0)
        figures["synthetic_fans"].update(seed=args.seed, decks=[d.name for d in decks] or None, photos_scale=scale)
    if args.json is not None:
        path = Path(args.json or "vision-evaluate.json")
        path.write_text(json.dumps(figures, indent=2) + "\n")
        print(f"wrote {path}", file=sys.stderr)
    return 0


def _evaluate_photos(args: argparse.Namespace, say: Any, bar: Any) -> list[dict]:
    """`evaluate --photos DIR...`: each labelled folder read as `identify` reads photos, and scored."""
    from vision.labelled import LabelError, Report, evaluate_folder

    rec = _recogniser(args.models, photos=not args.as_table, enrolled=args.enrolled)

    def read(image: Any) -> list[Report]:
        return [Report(d.card.rank, int(d.card.suit), tuple(d.box), d.confidence, d.unsure) for d in rec.identify(image)
                if d.card is not None and not d.card.joker]

    results = []
    for folder in args.photos:
        sheet = args.sheet if args.sheet is not None and len(args.photos) == 1 else \
            Path(f"vision-failures-{folder.resolve().name}.html")
        try:
            results.append(evaluate_folder(folder, read, say=say, sheet=sheet, progress=bar, index=args.index_labels))
        except LabelError as exc:
            raise CliError(str(exc)) from None
    return results
