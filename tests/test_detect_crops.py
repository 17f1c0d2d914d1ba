"""The learned path's crops (vision.detect_crops): the whole frame only to (re)acquire, crops where the picture
changed. The logic runs here against a stand-in network that finds white discs (no ultralytics needed); the
shipped networks are checked on simulator frames of a strike, where the crops must find what whole frames find."""
from __future__ import annotations

import importlib.util
import math

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.detect_crops import CroppedDetector, _tiles, changed_boxes
from vision.detect_learned import DEFAULT_CLASSES, one_box_per_disc
from vision.types import Detections, VisionError

W, H = 640, 384
R_PX = 10  # the discs' radius


class _Plane:
    """One board mm per pixel."""
    image_size = (W, H)

    def to_board_mm(self, px):
        return np.asarray(px, float).reshape(-1, 2)

    def mm_per_px(self, mm):
        return np.ones(len(np.asarray(mm).reshape(-1, 2)))


class _Boxes:
    def __init__(self, xyxy):
        self.xyxy = np.asarray(xyxy, float).reshape(-1, 4)
        self.conf = np.full(len(self.xyxy), 0.9)
        self.cls = np.zeros(len(self.xyxy))

    def __len__(self):
        return len(self.xyxy)


class _Result:
    names = {0: "pawn_a"}

    def __init__(self, xyxy):
        self.boxes = _Boxes(xyxy)


class DiscNet:
    """A stand-in for the learned detector: boxes round the white blobs of an image, any size."""
    position_sigma_mm = None
    classes = dict(DEFAULT_CLASSES)

    def __init__(self):
        self.plane = _Plane()
        self.batches: list[int] = []
        self.whole = 0

    def _boxes(self, image):
        grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        n, _, stats, _ = cv2.connectedComponentsWithStats((grey > 128).astype(np.uint8))
        return _Result([(x, y, x + w, y + h) for x, y, w, h, _ in stats[1:n]])

    def predict_batch(self, images, imgsz):
        assert all(im.shape[:2] == (imgsz, imgsz) for im in images)
        self.batches.append(len(images))
        return [self._boxes(im) for im in images]

    def detections_of(self, result, frame, t_s):
        return one_box_per_disc(Detections.from_ultralytics(result, self.plane.to_board_mm, frame, t_s, self.classes))

    def refined(self, image, dets):
        return dets

    def detect(self, image, frame=0, t_s=0.0):
        self.whole += 1
        return self.detections_of(self._boxes(image), frame, t_s)

    def expect(self, layout):
        pass


def _picture(centres, level=0):
    image = np.full((H, W, 3), level, np.uint8)
    for x, y in centres:
        cv2.circle(image, (int(round(x)), int(round(y))), R_PX, (255, 255, 255), -1)
    return image


def _centres(dets):
    return sorted((round(d.centre_mm[0], 1), round(d.centre_mm[1], 1)) for d in dets.pieces())


def _detector(**kw):
    net = DiscNet()
    return net, CroppedDetector(net, net, piece_mm=2 * R_PX + 2, crop_px=128, shrink=4, **kw)


SPOTS = [(100, 100), (300, 200), (500, 300), (200, 320)]


def test_pieces_at_rest_keep_their_detections_and_no_network_runs():
    net, det = _detector()
    first = det.detect(_picture(SPOTS), 0, 0.0)
    assert net.whole == 1 and len(first.pieces()) == 4
    for k in range(1, 30):
        dets = det.detect(_picture(SPOTS), k, k / 60)
        assert (dets.frame, dets.t_s) == (k, k / 60)
        assert all((d.frame, d.t_s) == (k, k / 60) for d in dets)  # stamped with the frame they stand for
        assert _centres(dets) == _centres(first)
    assert net.whole == 1 and net.batches == []


def test_a_moving_piece_is_found_again_in_a_crop_and_the_others_are_kept():
    net, det = _detector()
    det.detect(_picture(SPOTS), 0, 0.0)
    moved = [(130, 110)] + SPOTS[1:]
    dets = det.detect(_picture(moved), 1, 1 / 60)
    assert net.whole == 1 and net.batches == [1]  # one crop holds the old and the new place
    assert _centres(dets) == _centres(Detections(1, 0, tuple(DiscNet().detect(_picture(moved)).items)))
    assert (130.0, 110.0) in [(round(x), round(y)) for x, y in _centres(dets)]


def test_a_piece_creeping_under_the_change_level_is_never_left_behind():
    """A disc moving a third of a pixel a frame barely changes one frame from the next; compared with the
    picture as it was when last detected, it is looked at again before it is a pixel away."""
    net, det = _detector(level=12)
    det.detect(_picture(SPOTS), 0, 0.0)
    worst = 0.0
    for k in range(1, 90):
        x = 100 + k / 3
        dets = det.detect(_picture([(x, 100)] + SPOTS[1:]), k, k / 60)
        near = [d for d in dets.pieces() if math.dist(d.centre_mm, (x, 100)) < 2 * R_PX]
        assert len(near) == 1, k
        worst = max(worst, math.dist(near[0].centre_mm, (round(x), 100)))
    assert worst <= 2.5  # the drawn disc sits on whole pixels
    assert net.batches and net.whole == 1


def test_a_piece_on_a_crops_seam_is_reported_once_whole():
    """A change wider than one crop is covered by overlapping crops; a disc on their seam is cut in one and
    whole in the other: one detection, its centre as the whole frame gives it."""
    net, det = _detector()
    det.detect(_picture([(100, 100)]), 0, 0.0)
    spots = [(100, 100), (150, 100), (175, 100), (250, 100)]  # a change 170 px wide, wider than a 128 px crop
    dets = det.detect(_picture(spots), 1, 1 / 60)
    assert net.batches == [2]
    assert _centres(dets) == _centres(DiscNet().detect(_picture(spots)))


def test_the_whole_frame_runs_again_when_the_light_changes_on_a_refresh_and_when_time_goes_back():
    net, det = _detector(refresh_s=2.0)
    det.detect(_picture(SPOTS), 0, 0.0)
    det.detect(_picture(SPOTS, level=40), 1, 1 / 60)  # every place changed: no crops can cover it
    assert net.whole == 2 and net.batches == []
    det.detect(_picture(SPOTS, level=40), 2, 1.0)
    assert net.whole == 2
    det.detect(_picture(SPOTS, level=40), 3, 2.1)  # two seconds since the last whole frame
    assert net.whole == 3
    det.detect(_picture(SPOTS, level=40), 4, 0.5)  # a clock that went back (a restarted stream)
    assert net.whole == 4
    det.expect({"A1": (0.0, 0.0)})  # a new layout: look at everything again
    det.detect(_picture(SPOTS, level=40), 5, 0.6)
    assert net.whole == 5


def test_too_many_crops_run_the_whole_frame_instead():
    net, det = _detector(max_crops=3)
    det.detect(_picture([]), 0, 0.0)
    det.detect(_picture([(80 + 120 * k, 60 + 60 * (k % 3)) for k in range(5)]), 1, 1 / 60)
    assert net.whole == 2 and net.batches == []


def test_a_crop_side_off_the_networks_stride_is_refused():
    net = DiscNet()
    with pytest.raises(VisionError, match="multiple of 32"):
        CroppedDetector(net, net, piece_mm=20, crop_px=100)


def test_changed_boxes_grow_and_merge():
    ref = np.zeros((96, 160), np.uint8)
    now = ref.copy()
    now[10:14, 10:14] = 200
    now[12:16, 20:24] = 200  # within the growth of the first: one box
    now[80:84, 140:144] = 30  # a weak change of 30 grey levels: counted above 12, not above 40
    # the changes dilated by a pixel (joining specks), grown by 4, the first two joined
    assert changed_boxes(now, ref, 12, 4) == [(5, 5, 29, 21), (135, 75, 149, 89)]
    assert changed_boxes(now, ref, 40, 4) == [(5, 5, 29, 21)]
    assert changed_boxes(ref, ref, 12, 4) == []


@settings(max_examples=200, deadline=None)
@given(lo=st.integers(0, 900), span=st.integers(1, 600), size=st.sampled_from([64, 96, 128]),
       half=st.integers(8, 16), centre=st.floats(0, 1))
def test_tiles_hold_every_piece_centred_in_the_box_whole(lo, span, size, half, centre):
    width = 1280
    hi = min(lo + span, width)
    box = (lo - half, 0, hi + half, 10)
    xs = sorted({x for x, _ in _tiles(box, size, width, 720, 2 * half)})
    assert all(0 <= x <= width - size for x in xs)
    c = lo + centre * (hi - lo)
    a, b = max(c - half, 0), min(c + half, width)  # the piece's extent, as far as the image goes
    assert any(x <= a and b <= x + size for x in xs), (xs, a, b)


# -- the shipped networks on simulator frames ---------------------------------------------------------------
needs_ultralytics = pytest.mark.skipif(importlib.util.find_spec("ultralytics") is None,
                                       reason="ultralytics not installed (pip install '.[learned]')")


@needs_ultralytics
def test_the_shipped_crops_find_what_whole_frames_find_through_a_strike():
    from bench.learned_track import match, truth_of
    from bench.vision_detect import setup
    from calibration import default_profile
    from judge.weights import crop_weights_for, shipped_weights
    from sim.scenarios_novuss import SCENARIOS
    from vision.detectors import make_detector

    profile = default_profile("novuss")
    clip = SCENARIOS["opening"][0](profile, 1).clip()
    renderer, classical = setup(profile, clip, 60.0, 1, colours="appearance")
    plane = classical.plane
    whole = make_detector("learned", plane, profile, weights=shipped_weights())
    crops = make_detector("learned", plane, profile, weights=shipped_weights(),
                          crop_weights=crop_weights_for(shipped_weights()))
    assert isinstance(crops, CroppedDetector)
    found = {"whole": 0, "crops": 0}
    on_view = 0
    for k in range(120, 150):  # the bat through the far row: pieces struck, the cue and a hand over the board
        fr = clip.frame(k, 60.0)
        image = renderer.render(fr, clip.states_at)
        truth = truth_of(profile, fr)
        on_view += len(truth)
        for name, det in (("whole", whole), ("crops", crops)):
            dets = det.detect(image, k, fr.t_s)
            found[name] += len(match([(None, d.centre_mm) for d in dets.pieces()], truth))
    assert crops.whole_frames == 1
    assert 0 < crops.crops_run <= 6 * 30
    assert found["crops"] >= found["whole"] - 3, (found, on_view)  # the same recall, within a piece in ten frames
    assert found["whole"] >= 0.8 * on_view, (found, on_view)


@needs_ultralytics
def test_fixed_size_weights_for_the_crops_are_refused_in_one_line():
    from calibration import default_profile
    from judge.weights import shipped_weights
    from vision.detectors import make_detector

    from calibration.plane import PlaneMap
    from sim.render_settings import RenderSettings, make_camera

    profile = default_profile("novuss")
    cam = make_camera(profile, 1280, 720, RenderSettings())
    plane = PlaneMap((cam.width, cam.height), cam.K, np.array(cam.dist), np.linalg.inv(cam.board_to_undistorted()))
    with pytest.raises(VisionError, match="takes only whole frames, not crops.*onnx-crops"):
        make_detector("learned", plane, profile, weights=shipped_weights(), crop_weights=shipped_weights())


def test_crop_weights_sit_beside_the_whole_frame_weights(tmp_path):
    from judge.weights import crop_weights_for, shipped_weights

    assert crop_weights_for(None) == shipped_weights().with_name("shotjudge-det-crops.onnx")
    assert crop_weights_for(None).is_file()  # shipped: the judge's learned path runs in real time
    own = tmp_path / "mine.onnx"
    own.write_bytes(b"x")
    assert crop_weights_for(own) is None
    (tmp_path / "mine-crops.onnx").write_bytes(b"x")
    assert crop_weights_for(own) == tmp_path / "mine-crops.onnx"
    assert crop_weights_for(tmp_path / "mine.pt") == tmp_path / "mine.pt"  # PyTorch takes any input size itself


@needs_ultralytics
def test_the_judges_learned_path_runs_crops_or_says_it_cannot(tmp_path, capsys):
    """``--detector learned`` runs the crops beside the shipped model; weights with no crops file beside them
    run whole frames, and the referee's terminal is told it is too slow to judge live."""
    import shutil
    from types import SimpleNamespace

    from calibration import default_profile
    from calibration.plane import PlaneMap
    from judge.setup import make_vision
    from judge.weights import shipped_weights
    from sim.render_settings import RenderSettings, make_camera
    from vision.detect_learned import LearnedDetector

    profile = default_profile("novuss")
    cam = make_camera(profile, 1280, 720, RenderSettings())
    plane = PlaneMap((cam.width, cam.height), cam.K, np.array(cam.dist), np.linalg.inv(cam.board_to_undistorted()))
    cal = SimpleNamespace(plane=plane, profile=profile, piece_appearance=lambda: None, camera=None)
    vision = make_vision(cal, [], detector="learned", fallback=False)
    assert isinstance(vision.detector, CroppedDetector) and capsys.readouterr().err == ""
    alone = tmp_path / "alone.onnx"
    shutil.copy(shipped_weights(), alone)
    vision = make_vision(cal, [], detector="learned", weights=alone, fallback=False)
    assert isinstance(vision.detector, LearnedDetector)
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"shotjudge: warning: no alone-crops.onnx beside {alone}: the learned detector runs on every whole "
                   f"frame (about 8 frames/s on one core, too slow to judge live)"]


@needs_ultralytics
def test_train_exports_the_crops_network_for_any_input_size(tmp_path):
    from judge.training.train import export
    from judge.weights import shipped_weights
    from vision.detectors import _fixed_input

    written = export(shipped_weights().with_suffix(".pt"), tmp_path, "mine", formats=("onnx-crops",))
    assert written == {"onnx-crops": tmp_path / "mine-crops.onnx"} and sorted(p.name for p in tmp_path.iterdir()) == ["mine-crops.onnx"]
    assert not _fixed_input(written["onnx-crops"]) and _fixed_input(shipped_weights())
