"""Train the card detector and classifier from rendered scenes plus the real photos' training split; export ONNX.

Run through `croupier vision train` (needs `pip install -e '.[train]'`), which passes the seeded generator
from `controller.rng`. Steps, all seeded:

1. render detector scenes and classifier crops (two worker processes);
2. train the detector on rendered scenes and the real training photos (heatmap and visible box from
   every label; card rectangles where the classical finder agrees with the label);
3. run that detector over the real training photos and cut corner crops of every labelled card it
   finds (the suit is unknown there, so only the rank head learns from them);
4. train the classifier on rendered crops plus those real crops;
5. export both as ONNX, check OpenCV's DNN module gives the same outputs, write them with the NOTICE.

`train_body` (`croupier vision train --body`) trains the body reader on its own, from renders only; so does
`train_sign_reader` (`--sign-reader`) the sign reader.
"""

from __future__ import annotations

import contextlib
import json
import math
import multiprocessing as mp
import time
from pathlib import Path
from typing import Callable, Iterator, Sequence

import cv2
import numpy as np
import torch
import torch.nn.functional as F

from vision import realdata
from vision.recognise import (BACK, BODY_H, BODY_NONE, BODY_RANKS, BODY_W, CROP_H, CROP_W, DET_CHANNELS, I_HEAT,
                              LOCATOR_SIZE, MODELS_DIR, NONE, RANK_CLASSES, SIGN_NONE, SIGN_SIZE, WIDE_H, WIDE_W, decode,
                              load_net)
from vision.training import data
from vision.training.nets import (SECOND_READER_WIDTH, BodyReader, Classifier, ClassifierExport, Detector,
                                  DetectorExport, Locator, LocatorExport, SignReader, SignReaderExport)

# progress(done, total) in training steps, called as each step is done (croupier vision train draws a bar with it)
Progress = Callable[[int, int], None]

__all__ = ["train", "finetune_detector", "finetune_classifier", "finetune_readers", "train_body", "train_locator",
           "train_sign_reader", "load_onnx_weights", "NOTICE"]

NOTICE = """Card models for Croupier (detector.onnx, classifier.onnx, body.onnx)

Trained by `croupier vision train` on synthetic renders (vision/render.py) and on the training split of
real card photos taken from the `images/train` folder of the public repository
EdjeElectronics/TensorFlow-Object-Detection-API-Tutorial-Train-Multiple-Objects-Windows-10, which is
licensed under the Apache License, Version 2.0:

    Licensed under the Apache License, Version 2.0 (the "License"); you may not use these files except in
    compliance with the License. You may obtain a copy of the License at
    http://www.apache.org/licenses/LICENSE-2.0
    Unless required by applicable law or agreed to in writing, software distributed under the License is
    distributed on an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
    See the License for the specific language governing permissions and limitations under the License.

These model files are derived from those photos. The photos themselves are not in this repository.

classifier.onnx and second_reader.onnx also learnt from renders of another deck design whose 52 card faces come from
the `data/cards` folder (commit e5d0f17f6bf1560ea09158abf48d26fad37e9266) of the public repository
geaxgx/playing-card-detection, licensed under the MIT License:

    MIT License

    Copyright (c) 2018 geaxgx

    Permission is hereby granted, free of charge, to any person obtaining a copy of this software and associated
    documentation files (the "Software"), to deal in the Software without restriction, including without limitation
    the rights to use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies of the Software, and
    to permit persons to whom the Software is furnished to do so, subject to the following conditions:

    The above copyright notice and this permission notice shall be included in all copies or substantial portions
    of the Software.

    THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT NOT LIMITED TO
    THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
    AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF
    CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS
    IN THE SOFTWARE.

and of rank glyphs drawn from the DejaVu fonts (Bitstream Vera Fonts license; DejaVu changes public domain) and the
Liberation fonts (SIL Open Font License 1.1), vision/training/glyphs.npz. Those faces and fonts are not in these
model files or in this repository beyond that glyph atlas.
"""


# ------------------------------------------------------------------------------------------- generation

_BACKGROUNDS: list[np.ndarray] = []
_DETECT = None
_INIT_ERROR: BaseException | None = None
# The renderer's extra index styles for the scenes rendered now: `render.use_extra_styles`' arguments, or None.
_EXTRA_STYLES: tuple[float, Path, list[Path] | None, float, int] | None = None


@contextlib.contextmanager
def _extra_styles(share: float, folders: list[Path], face_share: float) -> Iterator[None]:
    """The scenes rendered inside draw a share `share` of their decks in the renderer's extra index styles (TrueType
    rank glyphs, and with chance `face_share` one of the decks in `folders`, a folder a deck); off again after."""
    global _EXTRA_STYLES
    from vision import render
    from vision.faces import FACES_MISSING
    from vision.training.glyphs import ATLAS

    _EXTRA_STYLES = (share, ATLAS, folders or None, face_share, FACES_MISSING) if share > 0 else None
    try:
        yield
    finally:
        _EXTRA_STYLES = None
        render.use_extra_styles(0.0)  # rendered here with one worker: off again for what follows


def _init_worker(backgrounds: list[np.ndarray], detector_onnx: str | None = None, locate: bool = True,
                 extra: tuple[float, Path, list[Path] | None, float, int] | None = None) -> None:
    # An initializer that raises makes a Pool restart workers forever: keep the error, raise it per task.
    global _BACKGROUNDS, _DETECT, _INIT_ERROR
    _BACKGROUNDS = backgrounds
    cv2.setNumThreads(1)
    from vision import render

    render.use_extra_styles(*(extra or (0.0,)))
    if detector_onnx:
        try:
            from vision.recognise import Recogniser

            # The detector's corners as the recogniser reads them: located, when its folder has a locator
            # (`locate`: the locator itself learns from the detector's own).
            _DETECT = Recogniser(Path(detector_onnx).parent, threads=1, detector_only=True, locate=locate).detect_all
        except Exception as exc:  # noqa: BLE001 - re-raised in the task
            _INIT_ERROR = exc


def _det_chunk(args: tuple[int, int, int] | tuple[int, int, int, float] | tuple[int, int, int, float, float]
               ) -> tuple[np.ndarray, list]:
    seed, count, size = args[:3]
    dealt = args[3] if len(args) > 3 else 0.0
    fans = args[4] if len(args) > 4 else 0.0
    rng = np.random.default_rng(seed)
    images, objects = [], []
    for _ in range(count):
        img, obs = data.detector_scene(rng, size, _BACKGROUNDS, dealt, fans)
        images.append(img)
        objects.append(obs)
    return np.stack(images), objects


Crops = tuple[np.ndarray, np.ndarray, np.ndarray]  # crops, rank labels, suit labels


def _cls_chunk(args: tuple[int, int] | tuple[int, int, float] | tuple[int, int, float, bool]
               | tuple[int, int, float, bool, float]) -> Crops:
    seed, count = args[:2]
    dealt = args[2] if len(args) > 2 else 0.0
    wide = len(args) > 3 and bool(args[3])
    fans = args[4] if len(args) > 4 else 0.0
    return _crop_chunk(lambda rng: data.classifier_scene(rng, _BACKGROUNDS, _DETECT, dealt, wide, fans), seed, count)


def _locator_chunk(args: tuple[int, int, float]) -> tuple[np.ndarray, np.ndarray]:
    seed, count, dealt = args
    if _INIT_ERROR is not None:
        raise _INIT_ERROR
    rng = np.random.default_rng(seed)
    parts = [data.locator_scene(rng, _BACKGROUNDS, _DETECT, dealt) for _ in range(count)]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def _body_chunk(args: tuple[int, int, float]) -> Crops:
    seed, count, dealt = args
    return _crop_chunk(lambda rng: data.body_scene(rng, _BACKGROUNDS, dealt), seed, count)


def _sign_chunk(args: tuple[int, int]) -> Crops:
    seed, count = args
    return _crop_chunk(lambda rng: data.sign_scene(rng, _BACKGROUNDS), seed, count)


def _crop_chunk(scene: Callable[[np.random.Generator], Crops], seed: int, count: int) -> Crops:
    """The crops and labels of `count` scenes rendered from a generator seeded with `seed`."""
    if _INIT_ERROR is not None:
        raise _INIT_ERROR
    rng = np.random.default_rng(seed)
    return _joined([scene(rng) for _ in range(count)])


def _joined(parts: list[Crops]) -> Crops:
    return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]))


def _generate(fn: Callable, jobs: list, backgrounds: list[np.ndarray], workers: int,
              detector_onnx: str | None = None, locate: bool = True) -> list:
    if workers <= 1:
        _init_worker(backgrounds, detector_onnx, locate, _EXTRA_STYLES)
        return [fn(j) for j in jobs]
    with mp.get_context("spawn").Pool(workers, _init_worker, (backgrounds, detector_onnx, locate,
                                                              _EXTRA_STYLES)) as pool:
        return pool.map(fn, jobs)


# ------------------------------------------------------------------------------------------- losses

def _det_loss(out: torch.Tensor, t: torch.Tensor) -> tuple[torch.Tensor, dict[str, float]]:
    heat_w, box_m, geo_m = t[:, DET_CHANNELS], t[:, DET_CHANNELS + 1], t[:, DET_CHANNELS + 2]
    gt = t[:, 0]
    p = torch.sigmoid(out[:, 0]).clamp(1e-4, 1 - 1e-4)
    pos = (gt >= 1.0).float()
    # CenterNet's focal loss: positives at centres, negatives softened near them.
    lpos = -(torch.log(p) * (1 - p) ** 2 * pos)
    lneg = -(torch.log(1 - p) * p ** 2 * (1 - gt) ** 4 * (1 - pos))
    n = pos.sum().clamp(min=1)
    heat = ((lpos + lneg) * heat_w).sum() / n
    nb = box_m.sum().clamp(min=1)
    ng = geo_m.sum().clamp(min=1)
    box = (F.l1_loss(out[:, 1:5], t[:, 1:5], reduction="none").sum(1) * box_m).sum() / nb
    off = (F.l1_loss(out[:, 5:7], t[:, 5:7], reduction="none").sum(1) * geo_m).sum() / ng
    ang = (F.l1_loss(out[:, 7:9], t[:, 7:9], reduction="none").sum(1) * geo_m).sum() / ng
    size = (F.l1_loss(out[:, 9:11], t[:, 9:11], reduction="none").sum(1) * geo_m).sum() / ng
    # Index corners: the same focal loss on their heatmap, then position, direction and size around each.
    iheat_w, idx_m = t[:, DET_CHANNELS + 3], t[:, DET_CHANNELS + 4]
    igt = t[:, I_HEAT]
    ip = torch.sigmoid(out[:, I_HEAT]).clamp(1e-4, 1 - 1e-4)
    ipos = (igt >= 1.0).float()
    il = -(torch.log(ip) * (1 - ip) ** 2 * ipos) - torch.log(1 - ip) * ip ** 2 * (1 - igt) ** 4 * (1 - ipos)
    iheat = (il * iheat_w).sum() / (ipos * iheat_w).sum().clamp(min=1)
    ni = idx_m.sum().clamp(min=1)
    ireg = (F.l1_loss(out[:, I_HEAT + 1:], t[:, I_HEAT + 1:DET_CHANNELS], reduction="none") *
            torch.tensor([2.0, 2.0, 3.0, 3.0, 2.0]).view(1, 5, 1, 1)).sum(1)
    ireg = (ireg * idx_m).sum() / ni
    total = heat + box + 2 * off + 3 * ang + 2 * size + iheat + ireg
    return total, {k: float(v.detach()) for k, v in (("heat", heat), ("box", box), ("off", off), ("ang", ang),
                                                    ("size", size), ("iheat", iheat), ("ireg", ireg))}


# ------------------------------------------------------------------------------------------- training

def _to_tensor(images: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(images)).permute(0, 3, 1, 2).float() / 255


def _one_cycle(net: torch.nn.Module, lr: float, total_steps: int
               ) -> tuple[torch.optim.Optimizer, torch.optim.lr_scheduler.OneCycleLR]:
    """AdamW (light weight decay) under a one-cycle rate peaking at `lr`, a tenth of the way through: every net here
    learns so."""
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-4)
    return opt, torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=total_steps, pct_start=0.1)


class _Epochs:
    """How each net here trains: iterated, `epochs` passes (their numbers) over `count` examples, each pass in a fresh
    random order `batch` at a time (`batches`: their indices), a `step` down each batch's loss (its gradient's norm
    clipped to `clip` where given) under one one-cycle rate; `net` in train mode (batch-norm statistics frozen where
    `frozen`), in eval mode at the end."""

    def __init__(self, net: torch.nn.Module, rng: np.random.Generator, count: int, epochs: int, batch: int, lr: float,
                 progress: Progress | None, frozen: bool = False, clip: float | None = None) -> None:
        self.net, self.rng, self.count, self.epochs, self.batch = net, rng, count, epochs, batch
        self.progress, self.frozen, self.clip, self.done = progress, frozen, clip, 0
        self.steps = math.ceil(count / batch)
        self.opt, self.sched = _one_cycle(net, lr, epochs * self.steps)

    def __iter__(self) -> Iterator[int]:
        for epoch in range(self.epochs):
            self.net.train()
            if self.frozen:
                _freeze_batch_norm(self.net)
            self.epoch, self.order = epoch, torch.from_numpy(self.rng.permutation(self.count))
            self.t0, self.loss_sum = time.time(), 0.0
            yield epoch
        self.net.eval()

    def batches(self) -> Iterator[torch.Tensor]:
        return (self.order[b * self.batch:(b + 1) * self.batch] for b in range(self.steps))

    def step(self, loss: torch.Tensor) -> None:
        self.opt.zero_grad()
        loss.backward()
        if self.clip is not None:
            torch.nn.utils.clip_grad_norm_(self.net.parameters(), self.clip)
        self.opt.step()
        self.sched.step()
        self.loss_sum += float(loss.detach())
        self.done += 1
        if self.progress is not None:
            self.progress(self.done, self.epochs * self.steps)

    def report(self, name: str, figures: str) -> str:
        """The line said at the end of a pass: `name`'s `figures`, the seconds the pass took."""
        return f"{name} epoch {self.epoch + 1}/{self.epochs}: {figures} ({time.time() - self.t0:.0f} s)"

    @property
    def mean_loss(self) -> float:
        return self.loss_sum / self.steps


def _lit(rng: np.random.Generator, x: torch.Tensor, shift: bool = True) -> torch.Tensor:
    """Crops (bytes) as 0..1 under light varied per crop: scaled by 0.7 to 1.3 and (`shift`) shifted by up to 0.08."""
    gain = torch.from_numpy(rng.uniform(0.7, 1.3, (len(x), 1, 1, 1)).astype(np.float32))
    lit = x.float() / 255 * gain
    if shift:
        lit = lit + torch.from_numpy(rng.uniform(-0.08, 0.08, (len(x), 1, 1, 1)).astype(np.float32))
    return lit.clamp(0, 1)


def _train_detector(say: Callable[[str], None], rng: np.random.Generator, images: np.ndarray, targets: np.ndarray,
                    real: list[tuple[np.ndarray, realdata.Photo, list]], epochs: int, batch: int,
                    real_share: float, start: Detector | None = None, lr: float = 2e-3,
                    progress: Progress | None = None) -> Detector:
    """Train a detector (or go on training `start`, with its batch-norm statistics frozen)."""
    net = start if start is not None else Detector()
    fit = _Epochs(net, rng, len(images), epochs, batch, lr, progress, frozen=start is not None, clip=5.0)
    n_real = int(round(batch * real_share)) if real else 0
    size = images.shape[1]
    for _ in fit:
        logs: dict[str, float] = {}
        for batch_idx in fit.batches():
            idx = batch_idx[: batch - n_real].tolist()
            x = [images[i] for i in idx]
            y = [targets[i] for i in idx]
            if rng.random() < 0.5:  # mirror half the synthetic batches (geometry mirrors with them)
                x = [im[:, ::-1] for im in x]
                y = [data.mirror_targets(tt) for tt in y]
            for _ in range(n_real):
                img, photo, rects = real[int(rng.integers(len(real)))]
                im, obs = data.real_detector_sample(rng, img, photo, rects, size)
                x.append(im)
                y.append(data.detector_targets(obs, (size, size)))
            xt = _to_tensor(np.stack(x))
            yt = torch.from_numpy(np.stack(y))
            loss, parts = _det_loss(net(xt), yt)
            fit.step(loss)
            for k, v in parts.items():
                logs[k] = logs.get(k, 0.0) + v / fit.steps
        say(fit.report("detector", " ".join(f"{k} {v:.3f}" for k, v in logs.items())))
    return net


def _harvest_real(net: Detector, real: list[tuple[np.ndarray, realdata.Photo, list]], rng: np.random.Generator,
                  copies: int, say: Callable[[str], None]) -> tuple[np.ndarray, np.ndarray]:
    """Corner crops of the real training cards, cut where the trained detector puts them."""
    from vision.recognise import letterbox

    crops, labels = [], []
    found = 0
    total = 0
    with torch.no_grad():
        for img, photo, classical in real:
            small, s = letterbox(img, 320)
            out = net(_to_tensor(small[None]))[0].numpy()
            out[0] = 1 / (1 + np.exp(-out[0]))
            dets = decode(out, s, 0.2)
            for n, (card, known) in enumerate(zip(photo.cards, classical)):
                others = [c.box for m, c in enumerate(photo.cards) if m != n]
                total += 1
                x0, y0, x1, y1 = card.box
                best = None
                for score, box, rect in dets:
                    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
                    if x0 <= cx <= x1 and y0 <= cy <= y1:
                        best = rect
                        break
                rects = [r for r in (best, known) if r is not None]
                if best is not None:
                    found += 1
                for r in rects:
                    c, lab = data.real_classifier_crops(rng, img, r, card.rank, copies, others)
                    crops.append(c)
                    labels.append(lab)
    say(f"real training cards located by the detector: {found}/{total}")
    return np.concatenate(crops), np.concatenate(labels)


def _train_classifier(say: Callable[[str], None], rng: np.random.Generator, crops: np.ndarray, ranks: np.ndarray,
                      suits: np.ndarray, epochs: int, batch: int, start: Classifier | None = None,
                      lr: float = 3e-3, fresh: torch.nn.Module | None = None,
                      progress: Progress | None = None) -> torch.nn.Module:
    """Train a classifier (or `fresh`, another net with a rank and a suit head: the body reader), or go on
    training `start`, with its batch-norm statistics frozen."""
    net = start if start is not None else fresh if fresh is not None else Classifier()
    # On a GPU where there is one (the same steps, each batch moved there); the CPU otherwise.
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net.to(dev)
    fit = _Epochs(net, rng, len(crops), epochs, batch, lr, progress, frozen=start is not None)
    x_all = torch.from_numpy(crops).permute(0, 3, 1, 2).contiguous()
    r_all = torch.from_numpy(ranks)
    s_all = torch.from_numpy(suits)
    for _ in fit:
        tot = right = 0
        for idx in fit.batches():
            r_logit, s_logit = net(_lit(rng, x_all[idx]).to(dev))
            rt, st = r_all[idx].to(dev), s_all[idx].to(dev)
            loss = F.cross_entropy(r_logit, rt, label_smoothing=0.05)
            has_suit = st >= 0
            if has_suit.any():
                loss = loss + F.cross_entropy(s_logit[has_suit], st[has_suit], label_smoothing=0.05)
            fit.step(loss)
            tot += len(idx)
            right += int((r_logit.argmax(1) == rt).sum())
        say(fit.report(type(net).__name__, f"loss {fit.mean_loss:.4f} rank acc {right / tot:.4f}"))
    return net.cpu()


def _freeze_batch_norm(net: torch.nn.Module) -> None:
    for m in net.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.eval()


def _bias(b: np.ndarray | None, path: Path, k: int) -> torch.Tensor:
    """Layer `k`'s folded bias (the export gives every layer one) as a tensor."""
    if b is None:
        raise ValueError(f"{path}: layer {k} has no bias")
    return torch.from_numpy(b.copy())


def load_onnx_weights(net: torch.nn.Module, path: Path) -> None:
    """Load a shipped ONNX model's weights into its PyTorch network, to train it further. The export folded
    each batch norm into its convolution, so the convolution gets the folded weight and the batch norm
    becomes the identity plus the folded bias (train it with `_freeze_batch_norm`)."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(path))
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    params = [(inits[n.input[1]], inits[n.input[2]] if len(n.input) > 2 else None)
              for n in model.graph.node if n.op_type in ("Conv", "Gemm")]
    layers = [m for m in net.modules() if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear, torch.nn.BatchNorm2d))]
    k = 0
    with torch.no_grad():
        for i, m in enumerate(layers):
            if isinstance(m, torch.nn.BatchNorm2d):
                continue
            w, b = params[k]
            k += 1
            if tuple(m.weight.shape) != w.shape:
                # The last layer may have grown output channels since (new heads): keep the old ones.
                grown = k == len(params) and m.weight.shape[0] > w.shape[0] and tuple(m.weight.shape[1:]) == w.shape[1:]
                if not grown:
                    raise ValueError(f"{path}: layer {k} has shape {w.shape}, the network wants "
                                     f"{tuple(m.weight.shape)}")
                m.weight[:w.shape[0]] = torch.from_numpy(w.copy())
                m.bias[:w.shape[0]] = _bias(b, path, k)
                continue
            m.weight.copy_(torch.from_numpy(w.copy()))
            bn = layers[i + 1] if i + 1 < len(layers) and isinstance(layers[i + 1], torch.nn.BatchNorm2d) else None
            if bn is not None:
                bn.weight.fill_(1.0)
                bn.bias.copy_(_bias(b, path, k))
                bn.running_mean.zero_()
                bn.running_var.fill_(1.0 - bn.eps)
            elif m.bias is not None:
                m.bias.copy_(_bias(b, path, k))
    if k != len(params):
        raise ValueError(f"{path}: {len(params)} layers, the network has {k}")


# ------------------------------------------------------------------------------------------- export

def _export_detector(det: Detector, path: Path) -> None:
    torch.onnx.export(DetectorExport(det).eval(), torch.zeros(1, 3, 192, 320), str(path), input_names=["image"],
                      output_names=["maps"], dynamic_axes={"image": {2: "h", 3: "w"}, "maps": {2: "h4", 3: "w4"}},
                      opset_version=13, dynamo=False)


# The index readers, by name (their file's stem): the network's widths (None: the classifier's) and whether it reads
# `wide_crops` rather than index crops.
_INDEX_READERS: dict[str, tuple[tuple[int, int, int, int] | None, bool]] = {
    "classifier": (None, False), "second_reader": (SECOND_READER_WIDTH, False), "wide_reader": (None, True)}


def _index_reader_net(reader: str) -> Classifier:
    width, _ = _INDEX_READERS[reader]
    return Classifier() if width is None else Classifier(width)


def _export(det: Detector | None, cls: Classifier | None, out: Path, say: Callable[[str], None],
            body: BodyReader | None = None, locator: Locator | None = None,
            readers: dict[str, Classifier] | None = None, sign: SignReader | None = None) -> None:
    """Write the given models as ONNX to `out` (the index `readers` by name, the classifier `cls` among them) and
    check ONNX Runtime agrees with PyTorch on them."""
    out.mkdir(parents=True, exist_ok=True)
    det_path = out / "detector.onnx"
    checks = []
    if det is not None:
        _export_detector(det, det_path)
        checks.append((det_path, DetectorExport(det).eval(), (1, 3, 192, 320)))

    def batched(model: torch.nn.Module, path: Path, chw: tuple[int, int, int], inputs: str, outputs: str) -> None:
        # A net read a batch at a time: any batch size at run time, checked at 5.
        torch.onnx.export(model.eval(), torch.zeros(2, *chw), str(path), input_names=[inputs], output_names=[outputs],
                          dynamic_axes={inputs: {0: "n"}, outputs: {0: "n"}}, opset_version=13, dynamo=False)
        checks.append((path, model, (5, *chw)))

    for name, net in {"classifier": cls, **(readers or {})}.items():
        if net is not None:
            batched(ClassifierExport(net), out / f"{name}.onnx",
                    (3, WIDE_H, WIDE_W) if _INDEX_READERS[name][1] else (3, CROP_H, CROP_W), "crops", "probs")
    if body is not None:
        batched(ClassifierExport(body), out / "body.onnx", (3, BODY_H, BODY_W), "cards", "probs")
    if sign is not None:
        batched(SignReaderExport(sign), out / "sign_reader.onnx", (3, SIGN_SIZE, SIGN_SIZE), "squares", "probs")
    if locator is not None:
        batched(LocatorExport(locator), out / "locator.onnx", (3, LOCATOR_SIZE, LOCATOR_SIZE), "squares", "where")
    for path, model, shape in checks:
        x = np.random.default_rng(0).random(shape, dtype=np.float32)
        got = load_net(path)(x)
        with torch.no_grad():
            want = model(torch.from_numpy(x)).numpy()
        err = float(np.abs(got - want).max())
        say(f"{path.name}: {path.stat().st_size / 1e6:.2f} MB, ONNX Runtime vs PyTorch max difference {err:.2e}")
        if err > 1e-3:
            raise RuntimeError(f"{path.name}: ONNX Runtime's output differs from PyTorch's by {err}")
    (out / "NOTICE").write_text(NOTICE)


# ------------------------------------------------------------------------------------------- entry

def _real_training(say: Callable[[str], None]) -> tuple[list[tuple[np.ndarray, realdata.Photo, list]],
                                                         list[np.ndarray]]:
    """The real photos' training split (image, photo, classical card rectangles) and background patches."""
    root = realdata.photos_dir()
    real: list[tuple[np.ndarray, realdata.Photo, list]] = []
    if root is None:
        say("real card photos not found: training on renders only")
        return real, []
    train_photos, held = realdata.split(realdata.load_photos(root))
    say(f"real photos: {len(train_photos)} for training, {len(held)} held out (never read here)")
    for p in train_photos:
        img = cv2.imread(str(p.path))
        if img is None:
            raise ValueError(f"{p.path}: not an image")
        real.append((img, p, [data.classical_rect(img, c.box) for c in p.cards]))
    known = sum(r is not None for _, _, rs in real for r in rs)
    say(f"card rectangles found the classical way on {known}/{sum(len(p.cards) for p in train_photos)} "
        "real training cards")
    return real, data.background_patches(train_photos)


def _begin(rng: np.random.Generator, workers: int, say: Callable[[str], None]
           ) -> tuple[list[tuple[np.ndarray, realdata.Photo, list]], list[np.ndarray]]:
    """What every training run does first: seed torch from `rng`, give it `workers` threads, read the real
    training photos (and the backgrounds cut from them)."""
    torch.manual_seed(int(rng.integers(2**31)))
    torch.set_num_threads(max(1, workers))
    return _real_training(say)


def _classifier_crops(jobs: list[tuple], backgrounds: list[np.ndarray], workers: int, detector: str | None,
                      say: Callable[[str], None], fans: float = 0.0) -> Crops:
    """Render the classifier's scenes (`jobs`: seed, scenes, ...), cutting their corners also with `detector`
    (an ONNX path) when given: crops, rank labels, suit labels. `fans`: the jobs' share of tight fans, for the log."""
    t = time.time()
    crops, ranks, suits = _joined(_generate(_cls_chunk, jobs, backgrounds, workers, detector))
    share = f" ({fans:.0%} tight fans)" if fans > 0 else ""
    say(f"rendered {len(crops)} classifier crops from {sum(job[1] for job in jobs)} scenes{share} in "
        f"{time.time() - t:.0f} s ({int((ranks == NONE).sum())} none, {int((ranks == BACK).sum())} backs)")
    return crops, ranks, suits


def train(rng: np.random.Generator, *, out: Path = MODELS_DIR, det_scenes: int = 5000, cls_scenes: int = 12000,
          det_epochs: int = 12, cls_epochs: int = 8, workers: int = 2, real_share: float = 0.25,
          detector_weights: Path | None = None, detector_crops: bool = False,
          say: Callable[[str], None] = print,
          progress: Progress | None = None) -> dict:
    """Train both models from `rng` (seeded by the caller) and write them to `out`; returns a summary.
    With `detector_weights` (a detector.pt an earlier run saved), only the classifier is trained."""
    started = time.time()
    real, backgrounds = _begin(rng, workers, say)
    t = time.time()
    chunk = 200
    out.mkdir(parents=True, exist_ok=True)
    if detector_weights is not None:
        det = Detector()
        det.load_state_dict(torch.load(detector_weights))
        det.eval()
        say(f"detector loaded from {detector_weights}")
    else:
        jobs = [(int(rng.integers(2**63)), min(chunk, det_scenes - i), 256) for i in range(0, det_scenes, chunk)]
        parts = _generate(_det_chunk, jobs, backgrounds, workers)
        images = np.concatenate([p[0] for p in parts])
        targets = np.stack([data.detector_targets(obs, (256, 256)) for p in parts for obs in p[1]])
        say(f"rendered {len(images)} detector scenes in {time.time() - t:.0f} s")
        det = _train_detector(say, rng, images, targets, real, det_epochs, 32, real_share, progress=progress)
        torch.save(det.state_dict(), out / "detector.pt")  # for a classifier-only run; not shipped
        del images, targets
    cls_jobs = [(int(rng.integers(2**63)), min(chunk, cls_scenes - i)) for i in range(0, cls_scenes, chunk)]
    onnx_for_crops = None
    if detector_crops:
        # The classifier also learns from the corners the detector itself cuts (needs it as ONNX now).
        _export_detector(det, out / "detector.onnx")
        onnx_for_crops = str(out / "detector.onnx")
    crops, ranks, suits = _classifier_crops(cls_jobs, backgrounds, workers, onnx_for_crops, say)
    if real:
        rc, rr = _harvest_real(det, real, rng, 8, say)
        crops = np.concatenate([crops, rc])
        ranks = np.concatenate([ranks, rr])
        suits = np.concatenate([suits, np.full(len(rr), -1, np.int64)])
        say(f"added {len(rc)} real corner crops")
    assert ranks.max() < RANK_CLASSES
    cls = _train_classifier(say, rng, crops, ranks, suits, cls_epochs, 256, progress=progress)
    torch.save(cls.state_dict(), out / "classifier.pt")
    _export(det, cls, out, say)
    summary = {"seconds": round(time.time() - started), "det_scenes": det_scenes, "cls_scenes": cls_scenes,
               "det_epochs": det_epochs, "cls_epochs": cls_epochs, "classifier_crops": int(len(crops)),
               "real_training_photos": len(real)}
    (out / "training.json").write_text(json.dumps(summary, indent=2) + "\n")
    say(f"trained in {summary['seconds']} s; models in {out}")
    return summary


def finetune_detector(rng: np.random.Generator, *, start: Path = MODELS_DIR / "detector.onnx", out: Path = MODELS_DIR,
                      scenes: int = 3000, epochs: int = 3, dealt: float = 0.6, lr: float = 5e-4, workers: int = 2,
                      real_share: float = 0.25, fans: float = 0.0, extra_styles: float = 0.0,
                      extra_faces: Sequence[Path] = (), face_share: float = 1 / 3,
                      say: Callable[[str], None] = print, progress: Progress | None = None) -> dict:
    """Go on training a shipped detector (`start`, ONNX) on fresh scenes, a share `fans` of them hands of tightly
    fanned cards (`render.render_fans`) and a share `dealt` of the rest dealers' layouts (`render.render_dealt`), plus
    the real training photos; a share `extra_styles` of the scenes' decks in the renderer's extra styles (with chance
    `face_share` one of the decks photographed in `extra_faces`, as `finetune_readers`); write `out/detector.onnx`."""
    started = time.time()
    real, backgrounds = _begin(rng, workers, say)
    net = Detector()
    load_onnx_weights(net, start)
    t = time.time()
    jobs = [(int(rng.integers(2**63)), min(200, scenes - i), 256, dealt, fans) for i in range(0, scenes, 200)]
    with _extra_styles(extra_styles, list(extra_faces), face_share):
        parts = _generate(_det_chunk, jobs, backgrounds, workers)
    images = np.concatenate([p[0] for p in parts])
    targets = np.stack([data.detector_targets(obs, (256, 256)) for p in parts for obs in p[1]])
    say(f"rendered {len(images)} detector scenes ({fans:.0%} tight fans, {dealt:.0%} of the rest dealt layouts) in "
        f"{time.time() - t:.0f} s")
    det = _train_detector(say, rng, images, targets, real, epochs, 32, real_share, start=net, lr=lr,
                          progress=progress)
    _export(det, None, out, say)
    summary = {"seconds": round(time.time() - started), "from": start.name, "scenes": scenes, "epochs": epochs,
               "dealt": dealt, "tight_fans": fans, "lr": lr, "extra_styles": extra_styles,
               "extra_faces": [f.name for f in extra_faces] or None, "face_share": face_share}
    say(f"detector fine-tuned in {summary['seconds']} s; written to {out / 'detector.onnx'}")
    return summary


def _detector_corners(rng: np.random.Generator, real: list[tuple[np.ndarray, realdata.Photo, list]],
                      backgrounds: list[np.ndarray], scenes: int, dealt: float, workers: int, detector: Path,
                      say: Callable[[str], None], wide: bool = False, fans: float = 0.0) -> Crops:
    """What an index reader learns from: the corners `detector` (ONNX) cuts from `scenes` fresh scenes (a share
    `fans` of them hands of tightly fanned cards, a share `dealt` of the rest dealers' layouts), the true corners
    jittered, and the corners of the `real` training cards. With `wide`, the scenes' corners are cut as the wide
    reader sees them, and `real` must be empty (its crops are the index readers')."""
    if wide and real:
        raise ValueError("the real training cards' crops are index crops: the wide reader learns without them")
    jobs = [(int(rng.integers(2**63)), min(100, scenes - i), dealt, wide, fans) for i in range(0, scenes, 100)]
    crops, ranks, suits = _classifier_crops(jobs, backgrounds, workers, str(detector), say, fans)
    if real:
        det = Detector()
        load_onnx_weights(det, detector)
        det.eval()
        rc, rr = _harvest_real(det, real, rng, 8, say)
        crops = np.concatenate([crops, rc])
        ranks = np.concatenate([ranks, rr])
        suits = np.concatenate([suits, np.full(len(rr), -1, np.int64)])
        say(f"added {len(rc)} real corner crops")
    return crops, ranks, suits


def _reader_corners(rng: np.random.Generator, reader: str, real: list[tuple[np.ndarray, realdata.Photo, list]],
                    backgrounds: list[np.ndarray], scenes: int, dealt: float, workers: int, detector: Path,
                    say: Callable[[str], None]) -> Crops:
    """`_detector_corners` as `reader` sees them: the wide reader's cut wide, without the real training cards (their
    labels name no suit, which is what it is for)."""
    wide = _INDEX_READERS[reader][1]
    return _detector_corners(rng, [] if wide else real, backgrounds, scenes, dealt, workers, detector, say, wide)


def finetune_classifier(rng: np.random.Generator, *, start: Path = MODELS_DIR / "classifier.onnx",
                        detector: Path = MODELS_DIR / "detector.onnx", out: Path = MODELS_DIR, scenes: int = 3000,
                        epochs: int = 3, dealt: float = 0.6, lr: float = 1e-3, workers: int = 2,
                        reader: str = "classifier", say: Callable[[str], None] = print,
                        progress: Progress | None = None) -> dict:
    """Go on training a shipped index reader (`start`, ONNX: the `reader` "classifier", "second_reader" or
    "wide_reader") on the corners `detector` cuts from fresh scenes (a share `dealt` of them dealers' layouts:
    both corners of each card found and each index corner found, labelled from the card they land on), the true
    corners jittered, and (but for the wide reader, as `_reader_corners`) the real training cards; write
    `out/<reader>.onnx`."""
    started = time.time()
    real, backgrounds = _begin(rng, workers, say)
    net = _index_reader_net(reader)
    load_onnx_weights(net, start)
    crops, ranks, suits = _reader_corners(rng, reader, real, backgrounds, scenes, dealt, workers, detector, say)
    net = _train_classifier(say, rng, crops, ranks, suits, epochs, 256, start=net, lr=lr, progress=progress)
    _export(None, None, out, say, readers={reader: net})
    summary = {"seconds": round(time.time() - started), "from": start.name, "detector": str(detector.name),
               "scenes": scenes, "epochs": epochs, "dealt": dealt, "lr": lr, "crops": int(len(crops))}
    say(f"{reader} fine-tuned in {summary['seconds']} s; written to {out / (reader + '.onnx')}")
    return summary


def finetune_readers(rng: np.random.Generator, starts: dict[str, Path], *,
                     detector: Path = MODELS_DIR / "detector.onnx", out: Path = MODELS_DIR, scenes: int = 3000,
                     epochs: int = 3, dealt: float = 0.6, lr: float = 1e-3, workers: int = 2,
                     extra_styles: float = 0.0, extra_faces: Path | Sequence[Path] | None = None,
                     face_share: float = 1 / 3, real_copies: int = 16, fans: float = 0.0,
                     say: Callable[[str], None] = print, progress: Progress | None = None) -> dict:
    """`finetune_classifier` for several index readers at once (`starts`: reader name -> its ONNX; the classifier
    and the second reader read the same corners, so they are rendered once), with a share `extra_styles` of the
    scenes' decks in the renderer's extra index styles (`render.use_extra_styles`: TrueType rank glyphs, and with
    chance `face_share` one of the decks in `extra_faces`, a folder a deck, where given). A face folder that
    `vision.training.realfaces` wrote from photos also gives its cards' real index corners, cut from those photos
    (`real_copies` jittered crops a corner, labelled with rank and suit). A share `fans` of the scenes are hands of
    tightly fanned cards (`data.classifier_scene`). Writes `out/<reader>.onnx` for each."""
    from vision.training.realfaces import real_corners

    if any(_INDEX_READERS[r][1] for r in starts):
        raise ValueError("the wide reader reads other crops: fine-tune it on its own")
    folders = [extra_faces] if isinstance(extra_faces, Path) else list(extra_faces or [])
    started = time.time()
    real, backgrounds = _begin(rng, workers, say)
    with _extra_styles(extra_styles, folders, face_share):
        crops, ranks, suits = _detector_corners(rng, real, backgrounds, scenes, dealt, workers, detector, say,
                                                fans=fans)
    rc, rr, rs = real_corners(rng, folders if real_copies > 0 else [], real_copies)
    if len(rc):
        crops, ranks, suits = np.concatenate([crops, rc]), np.concatenate([ranks, rr]), np.concatenate([suits, rs])
        say(f"added {len(rc)} index corners of the real decks' photos ({len(rc) // (2 * real_copies)} cards)")
    nets = {}
    for i, (reader, start) in enumerate(starts.items()):
        net = _index_reader_net(reader)
        load_onnx_weights(net, start)
        # One bar over all the readers' steps, each reader's in turn.
        step = None if progress is None else \
            (lambda done, total, i=i: progress(i * total + done, len(starts) * total))
        nets[reader] = _train_classifier(say, rng, crops, ranks, suits, epochs, 256, start=net, lr=lr, progress=step)
    _export(None, None, out, say, readers=nets)
    summary = {"seconds": round(time.time() - started), "from": {r: p.name for r, p in starts.items()},
               "detector": str(detector.name), "scenes": scenes, "epochs": epochs, "dealt": dealt, "lr": lr,
               "extra_styles": extra_styles, "extra_faces": [f.name for f in folders] or None,
               "face_share": face_share, "tight_fans": fans, "real_deck_corners": int(len(rc)),
               "crops": int(len(crops))}
    say(f"{', '.join(starts)} fine-tuned in {summary['seconds']} s; written to {out}")
    return summary


def train_index_reader(rng: np.random.Generator, reader: str, *, detector: Path = MODELS_DIR / "detector.onnx",
                       out: Path = MODELS_DIR, scenes: int = 5000, epochs: int = 8, dealt: float = 0.8,
                       workers: int = 2, say: Callable[[str], None] = print,
                       progress: Progress | None = None) -> dict:
    """Train an index reader from scratch: the second reader (the classifier's network twice as wide,
    `SECOND_READER_WIDTH`) or the wide reader (the classifier's network on `wide_crops`: an index and the strip
    beside it), on the corners `detector` cuts from fresh scenes (as `finetune_classifier`'s; located, when
    `detector`'s folder has a locator) and, but for the wide reader, the real training cards; write
    `out/<reader>.onnx`."""
    started = time.time()
    real, backgrounds = _begin(rng, workers, say)
    crops, ranks, suits = _reader_corners(rng, reader, real, backgrounds, scenes, dealt, workers, detector, say)
    net = _train_classifier(say, rng, crops, ranks, suits, epochs, 256, fresh=_index_reader_net(reader),
                            progress=progress)
    _export(None, None, out, say, readers={reader: net})
    summary = {"seconds": round(time.time() - started), "detector": str(detector.name), "scenes": scenes,
               "epochs": epochs, "dealt": dealt, "crops": int(len(crops))}
    width, _ = _INDEX_READERS[reader]
    if width is not None:
        summary["width"] = list(width)
    say(f"{reader} trained in {summary['seconds']} s; written to {out / (reader + '.onnx')}")
    return summary


def train_body(rng: np.random.Generator, *, out: Path = MODELS_DIR, scenes: int = 8000, epochs: int = 10,
               dealt: float = 0.8, workers: int = 2, say: Callable[[str], None] = print,
               progress: Progress | None = None) -> dict:
    """Train the body reader on whole cards cut from fresh rendered scenes (a share `dealt` of them dealers'
    layouts at a table camera's scale), and "none" for covered and face-down cards and felt; write
    `out/body.onnx`. It learns from renders only (the real photos' labels give no suits)."""
    started = time.time()
    _, backgrounds = _begin(rng, workers, say)
    t = time.time()
    jobs = [(int(rng.integers(2**63)), min(100, scenes - i), dealt) for i in range(0, scenes, 100)]
    crops, ranks, suits = _joined(_generate(_body_chunk, jobs, backgrounds, workers))
    # Covered cards outnumber whole ones in a dealer's cascades: keep a share of them.
    keep = (ranks != BODY_NONE) | (rng.random(len(ranks)) < 0.5)
    crops, ranks, suits = crops[keep], ranks[keep], suits[keep]
    say(f"rendered {len(crops)} whole-card crops from {scenes} scenes in {time.time() - t:.0f} s "
        f"({int((ranks == BODY_NONE).sum())} none)")
    assert ranks.max() < BODY_RANKS
    body = _train_classifier(say, rng, crops, ranks, suits, epochs, 256, fresh=BodyReader(), progress=progress)
    _export(None, None, out, say, body=body)
    summary = {"seconds": round(time.time() - started), "scenes": scenes, "epochs": epochs, "dealt": dealt,
               "crops": int(len(crops))}
    say(f"body reader trained in {summary['seconds']} s; written to {out / 'body.onnx'}")
    return summary


def _train_locator(say: Callable[[str], None], rng: np.random.Generator, crops: np.ndarray, labels: np.ndarray,
                   epochs: int, batch: int = 256, lr: float = 3e-3, progress: Progress | None = None) -> Locator:
    """Train the locator: whether an index is there (cross-entropy), and where and which way (L1, on the squares
    that hold one)."""
    net = Locator()
    fit = _Epochs(net, rng, len(crops), epochs, batch, lr, progress)
    x_all = torch.from_numpy(crops).permute(0, 3, 1, 2).contiguous()
    y_all = torch.from_numpy(labels)
    for _ in fit:
        for idx in fit.batches():
            y = y_all[idx]
            out = net(_lit(rng, x_all[idx], shift=False))
            loss = F.binary_cross_entropy_with_logits(out[:, 0], y[:, 0])
            there = y[:, 0] > 0
            if there.any():
                loss = loss + 3 * F.l1_loss(out[there, 1:3], y[there, 1:3]) + 2 * F.l1_loss(out[there, 3:], y[there, 3:])
            fit.step(loss)
        say(fit.report("Locator", f"loss {fit.mean_loss:.4f}"))
    return net


def train_locator(rng: np.random.Generator, *, detector: Path = MODELS_DIR / "detector.onnx", out: Path = MODELS_DIR,
                  scenes: int = 8000, epochs: int = 10, dealt: float = 0.85, workers: int = 2,
                  say: Callable[[str], None] = print,
                  progress: Progress | None = None) -> dict:
    """Train the index locator on squares cut from fresh rendered scenes (a share `dealt` of them dealers' layouts)
    around the indices and cards `detector` (ONNX) finds, and around the true indices moved and turned; write
    `out/locator.onnx`. It learns from renders only (the real photos' labels have no index corners)."""
    started = time.time()
    _, backgrounds = _begin(rng, workers, say)
    t = time.time()
    jobs = [(int(rng.integers(2**63)), min(100, scenes - i), dealt) for i in range(0, scenes, 100)]
    parts = _generate(_locator_chunk, jobs, backgrounds, workers, str(detector), locate=False)
    crops, labels = np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    say(f"rendered {len(crops)} locator squares from {scenes} scenes in {time.time() - t:.0f} s "
        f"({int((labels[:, 0] > 0).sum())} with an index)")
    locator = _train_locator(say, rng, crops, labels, epochs, progress=progress)
    _export(None, None, out, say, locator=locator)
    summary = {"seconds": round(time.time() - started), "detector": str(detector.name), "scenes": scenes,
               "epochs": epochs, "dealt": dealt, "squares": int(len(crops))}
    say(f"locator trained in {summary['seconds']} s; written to {out / 'locator.onnx'}")
    return summary


def _train_sign_reader(say: Callable[[str], None], rng: np.random.Generator, crops: np.ndarray, classes: np.ndarray,
                       epochs: int, batch: int = 128, lr: float = 3e-3, progress: Progress | None = None) -> SignReader:
    """Train the sign reader: club, spade or no sign (cross-entropy, lightly smoothed); light varied per crop, half
    the batches mirrored (a sign and a picture mirrored are still a sign and a picture)."""
    net = SignReader()
    fit = _Epochs(net, rng, len(crops), epochs, batch, lr, progress)
    x_all = torch.from_numpy(crops).permute(0, 3, 1, 2).contiguous()
    y_all = torch.from_numpy(classes)
    for _ in fit:
        right = 0
        for idx in fit.batches():
            x = _lit(rng, x_all[idx])
            if rng.random() < 0.5:
                x = x.flip(3)
            logit = net(x)
            loss = F.cross_entropy(logit, y_all[idx], label_smoothing=0.05)
            fit.step(loss)
            right += int((logit.argmax(1) == y_all[idx]).sum())
        say(fit.report("SignReader", f"loss {fit.mean_loss:.4f} acc {right / len(crops):.4f}"))
    return net


def train_sign_reader(rng: np.random.Generator, *, out: Path = MODELS_DIR, scenes: int = 40000, epochs: int = 8,
                      workers: int = 2, say: Callable[[str], None] = print,
                      progress: Progress | None = None) -> dict:
    """Train the sign reader on the picture signs of black court cards in fresh rendered close squares of felt
    (`data.sign_scene`); write `out/sign_reader.onnx`. It learns from renders only (the real photos' labels give
    no suits)."""
    started = time.time()
    _, backgrounds = _begin(rng, workers, say)
    t = time.time()
    jobs = [(int(rng.integers(2**63)), min(250, scenes - i)) for i in range(0, scenes, 250)]
    crops, classes, _ = _joined(_generate(_sign_chunk, jobs, backgrounds, workers))
    say(f"rendered {len(crops)} sign squares from {scenes} scenes in {time.time() - t:.0f} s "
        f"({int((classes == SIGN_NONE).sum())} with no sign in sight)")
    sign = _train_sign_reader(say, rng, crops, classes, epochs, progress=progress)
    _export(None, None, out, say, sign=sign)
    summary = {"seconds": round(time.time() - started), "scenes": scenes, "epochs": epochs, "squares": int(len(crops))}
    say(f"sign reader trained in {summary['seconds']} s; written to {out / 'sign_reader.onnx'}")
    return summary
