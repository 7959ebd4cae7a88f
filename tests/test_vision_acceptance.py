"""Acceptance figures of the card models (long: minutes). The same figures print with `croupier vision evaluate`."""

from __future__ import annotations

import pytest

from controller.rng import SeededRng
from vision import evaluate, realdata
from vision.recognise import PHOTO_SIZES, Recogniser

pytestmark = pytest.mark.long
SEED = 20261122  # = croupier vision evaluate's default seed


@pytest.fixture(scope="module")
def rec() -> Recogniser:
    return Recogniser()


def test_held_out_real_photos(rec: Recogniser) -> None:
    if realdata.photos_dir() is None:
        pytest.skip("real card photos not found (../shared/data/real-card-photos or CROUPIER_CARD_PHOTOS)")
    figures = evaluate.real_photos(Recogniser(det_size=PHOTO_SIZES, indices=False))
    assert figures["recall"] >= 0.95, figures


def test_synthetic_cards_on_felt(rec: Recogniser) -> None:
    figures = evaluate.synthetic(rec, SeededRng(SEED).numpy(), 2000)
    assert figures["cards"] >= 2000 and figures["accuracy"] >= 0.995, figures
