"""MAX7219 displays: the font, the frames on the wire, and simulated chips that decode those wires."""

from __future__ import annotations

import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.panel import ManualClock, PanelError, open_panel, panel_config_from_mapping
from drivers.panel.max7219 import (DECODE_MODE, DIGIT0, DISPLAY_TEST, DP, INTENSITY, NOOP, SCAN_LIMIT, SEGMENTS,
                                   SHUTDOWN, Max7219Chain, canonical, decode_char, encode, render)

CHAIN = {"displays": {"bus": "spi0", "chain": ["credit", {"name": "bet", "digits": 4}, "win"]}}


def test_numbers_and_text_encode_right_aligned() -> None:
    assert encode("1250") == (0, 0, 0, 0, SEGMENTS["1"], SEGMENTS["2"], SEGMENTS["5"], SEGMENTS["0"])
    assert render(encode("12.50")) == "    12.50"  # four digits, one with its point lit
    assert render(encode("8.8.8.8.8.8.8.8.")) == "8.8.8.8.8.8.8.8."
    assert render(encode(".5", 3)) == "  .5"  # a lone point is a blank digit with its point lit
    assert render(encode("", 4)) == "    "
    assert render(encode("-- --", 5)) == "-- --"
    assert canonical("SOLD") == "50Ld" and canonical("Open") == "0PEn" and canonical("PAID") == "PAId"
    assert decode_char(SEGMENTS["E"] | DP) == "E." and decode_char(0b1010101) == "?"
    with pytest.raises(ValueError, match="'K' cannot be shown"):
        encode("OK")
    with pytest.raises(ValueError, match="',' cannot be shown"):
        encode("1,250")
    with pytest.raises(ValueError, match="does not fit in 8 digits"):
        encode("123456789")
    with pytest.raises(ValueError, match="does not fit in 4 digits"):
        encode("12.345", 4)


def test_every_character_of_the_font_reads_back_as_itself_or_its_twin() -> None:
    shapes = {}
    for char, bits in SEGMENTS.items():
        assert 0 <= bits < DP
        assert canonical(char) == canonical(render((bits,)).strip() or " ").strip()
        shapes.setdefault(bits, set()).add(char)
    # twins are exactly the letters a seven-segment display cannot tell from a digit (or the other case)
    assert {frozenset(s) for s in shapes.values() if len(s) > 1} >= {frozenset("0O"), frozenset("5sS"),
                                                                       frozenset("2zZ")}


@given(st.text(alphabet=sorted(SEGMENTS), min_size=0, max_size=8))
def test_render_reads_back_the_canonical_text(text: str) -> None:
    shown = render(encode(text))
    assert len(shown) == 8
    assert shown == " " * (8 - len(text)) + "".join(canonical(c) if c != " " else " " for c in text)


def test_frames_put_the_farthest_chip_first_and_noop_the_rest() -> None:
    frames: list[list[int]] = []
    chain = Max7219Chain(frames.append, [8, 4, 8], [8, 2, 15])
    chain.configure()
    assert frames[:4] == [
        [DISPLAY_TEST, 0] * 3,
        [DECODE_MODE, 0] * 3,
        [SCAN_LIMIT, 7, SCAN_LIMIT, 3, SCAN_LIMIT, 7],   # chip 2 (farthest) first
        [INTENSITY, 15, INTENSITY, 2, INTENSITY, 8],
    ]
    # blank every digit: registers DIG0..7, the 4-digit chip only up to DIG3
    assert frames[4:12] == [[DIGIT0 + r, 0, DIGIT0 + r, 0, DIGIT0 + r, 0] if r < 4 else
                            [DIGIT0 + r, 0, NOOP, 0, DIGIT0 + r, 0] for r in range(8)]
    assert frames[12] == [SHUTDOWN, 1] * 3 and len(frames) == 13
    frames.clear()
    chain.set_cells(1, encode("25", 4))
    assert frames == [[NOOP, 0, DIGIT0, SEGMENTS["5"], NOOP, 0], [NOOP, 0, DIGIT0 + 1, SEGMENTS["2"], NOOP, 0]]
    frames.clear()
    chain.set_cells(1, encode("26", 4))  # only the digit that changed goes out
    assert frames == [[NOOP, 0, DIGIT0, SEGMENTS["6"], NOOP, 0]]
    frames.clear()
    chain.set_cells(1, encode("26", 4))
    assert frames == []


def test_a_failed_write_is_logged_and_healed_by_the_refresh(caplog: pytest.LogCaptureFixture) -> None:
    frames: list[list[int]] = []
    fail = [True]

    def transfer(frame: list[int]) -> None:
        if fail[0]:
            raise OSError(5, "Input/output error")
        frames.append(frame)

    chain = Max7219Chain(transfer, [8], [8])
    fail[0] = False
    chain.configure()
    fail[0] = True
    with caplog.at_level(logging.ERROR, logger="croupier.panel"):
        chain.set_cells(0, encode("7"))
    assert "display write failed" in caplog.text
    fail[0] = False
    frames.clear()
    chain.configure()
    assert [DIGIT0, SEGMENTS["7"]] in frames


def test_the_simulated_chips_read_what_the_wire_carried(rig) -> None:
    r = rig(CHAIN)
    assert [r.sim.display(n).shown for n in ("credit", "bet", "win")] == [" " * 8, " " * 4, " " * 8]
    r.panel.show("credit", 1250)
    r.panel.show("bet", 25)
    r.panel.show("win", "PAId")
    assert r.sim.display("credit").text == "1250" and r.sim.display("credit").shown == "    1250"
    assert r.sim.display("bet").shown == "  25"
    assert r.sim.display("win").text == "PAId"
    assert r.panel.shown("credit") == "    1250"
    r.panel.show("credit", None)
    assert r.sim.display("credit").shown == " " * 8
    r.panel.set_intensity("win", 3)
    assert r.sim.display("win").intensity == 3 and r.sim.display("credit").intensity == 8


def test_values_a_display_cannot_show_change_nothing(rig) -> None:
    r = rig(CHAIN)
    r.panel.show("bet", 500)
    with pytest.raises(PanelError, match="display bet: '12345' does not fit in 4 digits"):
        r.panel.show("bet", 12345)
    with pytest.raises(PanelError, match="display credit: 'K' cannot be shown"):
        r.panel.show("credit", "OK")
    with pytest.raises(PanelError, match="cannot show 2.5"):
        r.panel.show("credit", 2.5)  # type: ignore[arg-type]
    with pytest.raises(PanelError, match="no display named 'jackpot'"):
        r.panel.show("jackpot", 1)
    with pytest.raises(PanelError, match="outside 0..15"):
        r.panel.set_intensity("bet", 16)
    assert r.sim.display("bet").text == "500"


def test_spot_displays(rig) -> None:
    r = rig({"displays": {"chain": ["limits", "spot1_bet", "spot2_bet", {"name": "spot2_side", "digits": 4}]}})
    r.panel.show_spot(2, 100)
    r.panel.show_spot(2, 5, role="side")
    assert r.sim.display("spot2_bet").text == "100" and r.sim.display("spot2_side").text == "5"
    with pytest.raises(PanelError, match="no bet display for spot 7"):
        r.panel.show_spot(7, 1)


def test_the_refresh_heals_an_upset_chip(rig) -> None:
    r = rig({"displays": {"chain": ["credit"], "refresh": 5.0}})
    r.panel.show("credit", 42)
    chip = r.sim.display("credit")
    chip.on, chip.test, chip.digits[0] = False, True, 0x55  # static: shut down, in test mode, a digit garbled
    assert chip.shown == "8." * 8
    r.clock.advance(5.0)
    assert chip.shown == "      42"


def test_closing_blanks_the_displays(rig) -> None:
    r = rig(CHAIN)
    r.panel.show("credit", 99)
    chip = r.sim.display("credit")
    r.panel.close()
    assert not chip.on and chip.shown == " " * 8


def test_code_b_decoding_of_the_simulated_chip(rig) -> None:
    r = rig({"displays": {"chain": ["credit"]}})
    chip = r.sim.display("credit")
    chip.write(DECODE_MODE, 0xFF)
    for register, code in enumerate([0x1, 0x2, 0xA, 0xB | 0x80, 0xF, 0xF, 0xF, 0xF]):
        chip.write(DIGIT0 + register, code)
    assert chip.shown == "    E.-21"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["credit", "bet", "win"]),
                          st.one_of(st.integers(0, 9999), st.text(alphabet="0123456789-AbCdEFHLPU .", max_size=4))),
                max_size=12))
def test_any_sequence_of_shows_reads_back_on_every_chip(shows: list[tuple[str, int | str]]) -> None:
    clock = ManualClock()
    panel = open_panel(panel_config_from_mapping({"driver": "sim", **CHAIN}), clock=clock)
    try:
        for name, value in shows:
            try:
                panel.show(name, value)
            except PanelError:
                continue  # e.g. "....." needs more digits: refused, nothing sent
        for name in ("credit", "bet", "win"):
            assert panel.sim.display(name).shown == panel.shown(name)
    finally:
        panel.close()
