"""The cash-out ticket's layout: amounts in words and figures, the validation number, the Interleaved 2 of 5 barcode against published symbols, and the printer template's fields there and back."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.ticketlayout import (CROUPIER_TEMPLATE, FIELDS, LayoutError, amount_in_figures, amount_in_words,
                                     expiry_text, format_validation, interleaved_2_of_5, layout, ticket_lines)
from drivers.printer.events import TicketData

TICKET = TicketData(venue="Croupier Casino", address="1 Main Street, Reno NV", machine="CAB-1", asset=1234,
                    number=42, cents=123456, validation="001234567890123456", printed="2026-11-26T19:07:59",
                    expires_days=30)


@pytest.mark.parametrize("cents, words", [
    (0, "ZERO DOLLARS AND NO CENTS"),
    (1, "ZERO DOLLARS AND ONE CENT"),
    (2, "ZERO DOLLARS AND TWO CENTS"),
    (99, "ZERO DOLLARS AND NINETY-NINE CENTS"),
    (100, "ONE DOLLAR AND NO CENTS"),
    (101, "ONE DOLLAR AND ONE CENT"),
    (2000, "TWENTY DOLLARS AND NO CENTS"),
    (1000, "TEN DOLLARS AND NO CENTS"),
    (1100, "ELEVEN DOLLARS AND NO CENTS"),
    (1317, "THIRTEEN DOLLARS AND SEVENTEEN CENTS"),
    (1900, "NINETEEN DOLLARS AND NO CENTS"),
    (2150, "TWENTY-ONE DOLLARS AND FIFTY CENTS"),
    (4000, "FORTY DOLLARS AND NO CENTS"),
    (10000, "ONE HUNDRED DOLLARS AND NO CENTS"),
    (10500, "ONE HUNDRED FIVE DOLLARS AND NO CENTS"),
    (11500, "ONE HUNDRED FIFTEEN DOLLARS AND NO CENTS"),
    (99999, "NINE HUNDRED NINETY-NINE DOLLARS AND NINETY-NINE CENTS"),
    (100000, "ONE THOUSAND DOLLARS AND NO CENTS"),
    (123456, "ONE THOUSAND TWO HUNDRED THIRTY-FOUR DOLLARS AND FIFTY-SIX CENTS"),
    (1001000, "TEN THOUSAND TEN DOLLARS AND NO CENTS"),
    (11111111, "ONE HUNDRED ELEVEN THOUSAND ONE HUNDRED ELEVEN DOLLARS AND ELEVEN CENTS"),
    (100000001, "ONE MILLION DOLLARS AND ONE CENT"),
    (100100000, "ONE MILLION ONE THOUSAND DOLLARS AND NO CENTS"),
    (200000000000, "TWO BILLION DOLLARS AND NO CENTS"),
])
def test_amount_in_words(cents: int, words: str) -> None:
    assert amount_in_words(cents) == words


@pytest.mark.parametrize("cents, figures", [
    (0, "$0.00"), (1, "$0.01"), (100, "$1.00"), (2000, "$20.00"), (10000, "$100.00"), (123456, "$1,234.56"),
    (100000001, "$1,000,000.01"),
])
def test_amount_in_figures(cents: int, figures: str) -> None:
    assert amount_in_figures(cents) == figures


@pytest.mark.parametrize("bad", [-1, True, 1.5, "100"])
def test_amounts_refuse_what_is_not_cents(bad: object) -> None:
    with pytest.raises(LayoutError, match="^cents: "):
        amount_in_words(bad)  # type: ignore[arg-type]
    with pytest.raises(LayoutError, match="^cents: "):
        amount_in_figures(bad)  # type: ignore[arg-type]


def test_validation_number_is_printed_in_groups() -> None:
    assert format_validation("001234567890123456") == "00-1234-5678-9012-3456"
    assert format_validation("987654321098765432") == "98-7654-3210-9876-5432"
    for bad in ("12345678901234567", "1234567890123456789", "00123456789012345a", "００1234567890123456"):
        with pytest.raises(LayoutError, match="^validation: 18 digits"):
            format_validation(bad)


# Published Interleaved 2 of 5 symbols, as modules ("1" dark), narrow 1 and wide 3:
#  - zint, backend/tests/test_2of5.c (test_encode): "87654321" (checked against TEC-IT), "602003" (Wikipedia's
#    Interleaved 2 of 5 example, a DX film cartridge), and ITF-14 "09501101530003" (GS1 General Specifications,
#    figure 5.1-2: an ITF-14 is the Interleaved 2 of 5 of its 14 digits, bearer bars aside).
#  - zxing, core/src/test/java/com/google/zxing/oned/ITFWriterTestCase.java: "00123456789012" with the writer's
#    default margin, 5 light modules each side.
ZINT = {
    "87654321": "101011101010111000100010001110111000101010001000111010111010001110101011100011101",
    "602003": "101010111011100010001010111010001000111010001000111011101011101",
    "09501101530003": "101010100011101110001011101011100010001011100010101011100010001011101110100011100010001110"
                      "101010101110001110001010001000111011101011101",
}
ZXING = ("0000010101010111000111000101110100010101110001110111010001010001110100011"
         "100010101000101011100011101011101000111000101110100010101110001110100000")


@pytest.mark.parametrize("digits", sorted(ZINT))
def test_interleaved_2_of_5_matches_zint(digits: str) -> None:
    assert interleaved_2_of_5(digits).modules(with_quiet=False) == ZINT[digits]


def test_interleaved_2_of_5_matches_zxing_with_its_margin() -> None:
    assert interleaved_2_of_5("00123456789012", quiet=5).modules() == ZXING


def test_barcode_start_stop_and_quiet_zones() -> None:
    code = interleaved_2_of_5("001234567890123456")
    assert code.widths[:4] == (1, 1, 1, 1)          # start: narrow bar, space, bar, space
    assert code.widths[-3:] == (3, 1, 1)            # stop: wide bar, narrow space, narrow bar
    assert len(code.widths) == 4 + 18 * 5 + 3       # five elements a digit
    assert code.quiet == 10 and code.modules().startswith("0" * 10 + "1") and code.modules().endswith("1" + "0" * 10)
    assert code.width == 4 + 18 * 9 + 5 + 20 == len(code.modules())   # a digit: two wide (3) and three narrow
    for bad in ("123", "", "12a4"):
        with pytest.raises(LayoutError, match="^barcode: "):
            interleaved_2_of_5(bad)


def test_expiry_text() -> None:
    assert expiry_text(0) == "NEVER EXPIRES"
    assert expiry_text(1) == "VOID AFTER 1 DAY"
    assert expiry_text(30) == "VOID AFTER 30 DAYS"
    with pytest.raises(LayoutError, match="^expires_days: "):
        expiry_text(-1)


def test_the_ticket_reads_as_a_casino_ticket() -> None:
    assert ticket_lines(TICKET) == [
        "             Croupier Casino",
        "          1 Main Street, Reno NV",
        "              CASHOUT TICKET",
        "          00-1234-5678-9012-3456",
        "11/26/2026 19:07:59            TICKET # 42",
        "$1,234.56",
        "ONE THOUSAND TWO HUNDRED THIRTY-FOUR",
        "DOLLARS AND FIFTY-SIX CENTS",
        "MACHINE CAB-1                 ASSET # 1234",
        "VOID AFTER 30 DAYS",
    ]
    restricted = layout(replace(TICKET, restricted=True, expires_days=0))
    assert (restricted.title, restricted.expiry) == ("PLAYABLE ONLY", "NEVER EXPIRES")


@pytest.mark.parametrize("change, error", [
    ({"validation": "12"}, "^validation: "),
    ({"printed": "yesterday"}, "^printed: "),
    ({"number": -1}, "^number: "),
    ({"asset": -5}, "^asset: "),
    ({"cents": -1}, "^cents: "),
    ({"expires_days": -1}, "^expires_days: "),
    ({"venue": "two\nlines"}, "^venue: "),
])
def test_a_ticket_that_cannot_be_printed_is_refused_naming_the_field(change: dict[str, object], error: str) -> None:
    with pytest.raises(LayoutError, match=error):
        layout(replace(TICKET, **change))  # type: ignore[arg-type]


def test_template_fields_in_the_template_order() -> None:
    assert CROUPIER_TEMPLATE.fields(TICKET) == [
        "Croupier Casino", "1 Main Street, Reno NV", "CASHOUT TICKET", "00-1234-5678-9012-3456", "11/26/2026",
        "19:07:59", "42", "$1,234.56", "ONE THOUSAND TWO HUNDRED THIRTY-FOUR DOLLARS AND FIFTY-SIX CENTS", "CAB-1",
        "1234", "VOID AFTER 30 DAYS", "001234567890123456"]
    assert len(FIELDS) == 13


def test_template_decode_refuses_fields_that_are_no_ticket() -> None:
    fields = CROUPIER_TEMPLATE.fields(TICKET)
    with pytest.raises(LayoutError, match="^fields: the template takes 13"):
        CROUPIER_TEMPLATE.decode(fields[:-1])
    for index, value, error in ((3, "00-1234-5678-9012-3457", "^validation: "), (7, "$1,234.57", "^words: "),
                                (2, "CASH", "^title: "), (4, "13/40/2026", "^date, time: "), (6, "x", "^number: "),
                                (11, "VOID SOON", "^expiry: "), (7, "1234.56", "^amount: ")):
        broken = list(fields)
        broken[index] = value
        with pytest.raises(LayoutError, match=error):
            CROUPIER_TEMPLATE.decode(broken)


tickets = st.builds(
    TicketData,
    venue=st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=30),
    address=st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=30),
    machine=st.from_regex(r"[A-Za-z0-9_-]{1,16}", fullmatch=True),
    asset=st.integers(0, 2 ** 32 - 1), number=st.integers(0, 9999), cents=st.integers(0, 10 ** 12),
    validation=st.from_regex(r"[0-9]{18}", fullmatch=True).filter(str.isascii),
    printed=st.datetimes().map(lambda d: d.replace(microsecond=0).isoformat()),
    expires_days=st.integers(0, 3650), restricted=st.booleans())


@given(tickets)
def test_template_fields_decode_to_the_ticket(ticket: TicketData) -> None:
    assert CROUPIER_TEMPLATE.decode(CROUPIER_TEMPLATE.fields(ticket)) == ticket
    assert all(len(line) <= 42 or " " not in line for line in ticket_lines(ticket))


def test_lines_too_long_for_one_line_are_split() -> None:
    lines = ticket_lines(replace(TICKET, machine="M" * 16, asset=4294967295))
    assert lines[-3:] == ["MACHINE " + "M" * 16, "ASSET # 4294967295", "VOID AFTER 30 DAYS"]
