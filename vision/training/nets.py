"""The card networks in PyTorch, built from plain conv/batch-norm/ReLU so OpenCV's DNN module runs them."""

from __future__ import annotations

import torch
from torch import nn

from vision.recognise import BODY_H, BODY_RANKS, BODY_W, DET_CHANNELS, I_HEAT, LOCATOR_SIZE, RANK_CLASSES, SIGN_NONE

__all__ = ["Detector", "Classifier", "BodyReader", "Locator", "SignReader", "DetectorExport", "ClassifierExport",
           "LocatorExport", "SignReaderExport", "SECOND_READER_WIDTH"]

# The second index reader (`second_reader.onnx`) is the classifier twice as wide: four times its cost a crop, read
# only where the classifier is unsure.
SECOND_READER_WIDTH = (32, 64, 96, 192)


def _cbr(cin: int, cout: int, stride: int = 1, k: int = 3) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride, k // 2, bias=False), nn.BatchNorm2d(cout),
                         nn.ReLU(inplace=True))


class Detector(nn.Module):
    """Stride-32 encoder with a light top-down path back to stride 4, where the heads sit."""

    def __init__(self, c: tuple[int, int, int, int, int] = (16, 24, 48, 64, 96)) -> None:
        super().__init__()
        self.s2 = _cbr(3, c[0], 2)
        self.s4 = nn.Sequential(_cbr(c[0], c[1], 2), _cbr(c[1], c[1]))
        self.s8 = nn.Sequential(_cbr(c[1], c[2], 2), _cbr(c[2], c[2]))
        self.s16 = nn.Sequential(_cbr(c[2], c[3], 2), _cbr(c[3], c[3]), _cbr(c[3], c[3]))
        self.s32 = nn.Sequential(_cbr(c[3], c[4], 2), _cbr(c[4], c[4]), _cbr(c[4], c[4]))
        self.l16 = _cbr(c[4], c[3], 1, 1)
        self.l8 = _cbr(c[3], c[2], 1, 1)
        self.l4 = _cbr(c[2], c[1], 1, 1)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.head = nn.Sequential(_cbr(c[1], 32), nn.Conv2d(32, DET_CHANNELS, 1))
        with torch.no_grad():
            self.head[1].bias.zero_()
            self.head[1].bias[0] = -2.2  # heatmaps start near 0.1
            self.head[1].bias[I_HEAT] = -2.2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = self.s4(self.s2(x))
        b = self.s8(a)
        c = self.s16(b)
        d = self.s32(c)
        c = c + self.up(self.l16(d))
        b = b + self.up(self.l8(c))
        a = a + self.up(self.l4(b))
        return self.head(a)


class Classifier(nn.Module):
    """Corner crop (3 x 48 x 32) to rank logits (RANK_CLASSES) and suit logits (4)."""

    def __init__(self, c: tuple[int, int, int, int] = (16, 32, 48, 96)) -> None:
        super().__init__()
        self.features = nn.Sequential(
            _cbr(3, c[0], 2), _cbr(c[0], c[1]), _cbr(c[1], c[2], 2), _cbr(c[2], c[2]), _cbr(c[2], c[3], 2),
            _cbr(c[3], c[3]), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.drop = nn.Dropout(0.2)
        self.rank = nn.Linear(c[3], RANK_CLASSES)
        self.suit = nn.Linear(c[3], 4)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        f = self.drop(self.features(x))
        return self.rank(f), self.suit(f)


class BodyReader(nn.Module):
    """A whole card (3 x BODY_H x BODY_W, upright either way) to rank logits (BODY_RANKS: 2..A, none) and suit
    logits (4). Pips and faces lie in fixed places on a card, so the features keep their layout: flattened,
    not pooled."""

    def __init__(self, c: tuple[int, int, int, int] = (16, 32, 48, 64)) -> None:
        super().__init__()
        self.features = nn.Sequential(
            _cbr(3, c[0], 2), _cbr(c[0], c[1]), _cbr(c[1], c[2], 2), _cbr(c[2], c[2]), _cbr(c[2], c[3], 2),
            _cbr(c[3], c[3]), nn.Flatten())
        self.fc = nn.Sequential(nn.Linear(c[3] * (BODY_H // 8) * (BODY_W // 8), 128), nn.ReLU(inplace=True),
                                nn.Dropout(0.3))
        self.rank = nn.Linear(128, BODY_RANKS)
        self.suit = nn.Linear(128, 4)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        f = self.fc(self.features(x))
        return self.rank(f), self.suit(f)


class Locator(nn.Module):
    """The index locator: a square crop around an index the detector found (LOCATOR_SIZE pixels, two half-widths of
    the card across, turned as the detector points the index) to a logit that an index lies near its middle, where
    that index's centre is (right and down, in half-widths of the card) and which way it points (cosine and sine of
    its turn from the crop's up towards its right). Where it lies depends on the whole picture: flattened, not
    pooled."""

    def __init__(self, c: tuple[int, int, int, int] = (24, 32, 48, 64)) -> None:
        super().__init__()
        self.features = nn.Sequential(
            _cbr(3, c[0], 2), _cbr(c[0], c[1]), _cbr(c[1], c[2], 2), _cbr(c[2], c[2]), _cbr(c[2], c[3], 2),
            _cbr(c[3], c[3]), nn.Flatten())
        self.fc = nn.Sequential(nn.Linear(c[3] * (LOCATOR_SIZE // 8) ** 2, 96), nn.ReLU(inplace=True), nn.Linear(96, 5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.features(x))


class SignReader(nn.Module):
    """The square about a court picture's suit sign (3 x SIGN_SIZE x SIGN_SIZE) to club, spade and no-sign logits.
    The sign lies anywhere in it (the rect is known only roughly): max-pooled, not flattened."""

    def __init__(self, c: tuple[int, int, int, int, int, int] = (16, 32, 32, 48, 48, 64)) -> None:
        super().__init__()
        self.features = nn.Sequential(
            _cbr(3, c[0]), _cbr(c[0], c[1], 2), _cbr(c[1], c[2]), _cbr(c[2], c[3], 2), _cbr(c[3], c[4]),
            _cbr(c[4], c[5], 2), nn.AdaptiveMaxPool2d(1), nn.Flatten())
        self.drop = nn.Dropout(0.2)
        self.out = nn.Linear(c[5], SIGN_NONE + 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.drop(self.features(x)))


class DetectorExport(nn.Module):
    """The detector as shipped: sigmoid on the two heatmap channels."""

    def __init__(self, net: Detector) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.net(x)
        return torch.cat([torch.sigmoid(y[:, :1]), y[:, 1:I_HEAT], torch.sigmoid(y[:, I_HEAT:I_HEAT + 1]),
                          y[:, I_HEAT + 1:]], 1)


class ClassifierExport(nn.Module):
    """The classifier (or the body reader) as shipped: rank and suit probabilities side by side
    (RANK_CLASSES + 4, or BODY_RANKS + 4)."""

    def __init__(self, net: Classifier | BodyReader) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        r, s = self.net(x)
        return torch.cat([torch.softmax(r, 1), torch.softmax(s, 1)], 1)


class LocatorExport(nn.Module):
    """The locator as shipped: the probability that an index is there, then its place and direction."""

    def __init__(self, net: Locator) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.net(x)
        return torch.cat([torch.sigmoid(y[:, :1]), y[:, 1:]], 1)


class SignReaderExport(nn.Module):
    """The sign reader as shipped: the probabilities of a club, a spade and no sign in sight."""

    def __init__(self, net: SignReader) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.net(x), 1)
