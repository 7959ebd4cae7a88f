"""Secure-enhanced validation numbers (controller/tito.py) against the worked examples of the public implementation it follows."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from controller.tito import _crc_kermit, credits_of, enhanced_validation, is_validation, next_sequence
from drivers.sas.crc import crc16


@pytest.mark.parametrize("sequence, number", [
    (1, "006429188185446104"),          # "Sas Secure Enhance Section 15.14 Example" (validation id 0x654321)
    (0, "004580945669109504"),          # the sequence number after 0xFFFFFF
    (0xFFFFFF, "007101753535986872"),   # the largest sequence number
])
def test_the_worked_examples(sequence: int, number: str) -> None:
    assert enhanced_validation(0x654321, sequence) == number


def test_the_sequence_wraps_at_three_bytes() -> None:
    assert next_sequence(0xFFFFFF) == 0 and next_sequence(5) == 6
    with pytest.raises(ValueError, match="must each fit 3 bytes"):
        enhanced_validation(1 << 24, 0)


@given(st.integers(0, (1 << 24) - 1), st.integers(0, (1 << 24) - 1))
def test_every_number_is_18_digits_after_system_id_00(machine: int, sequence: int) -> None:
    number = enhanced_validation(machine, sequence)
    assert is_validation(number) and number.startswith("00")


@given(st.binary(min_size=2, max_size=2))
def test_the_crc_is_the_sas_line_crc(data: bytes) -> None:
    assert _crc_kermit(data) == crc16(data)


def test_credits_of_a_note_or_ticket() -> None:
    assert (credits_of(500, 25), credits_of(510, 25), credits_of(0, 25)) == (20, None, None)
