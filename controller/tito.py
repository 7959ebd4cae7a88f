"""Ticket-in/ticket-out rules the cabinet computes itself: SAS secure-enhanced validation numbers, and what a note or ticket is worth in credits.

Secure-enhanced validation (SAS 6.02/6.03 §15.14, "Secure Enhanced Validation Algorithm"): the host gives the
cabinet a 3-byte validation id and a 3-byte sequence number (long poll 4C, journaled as SasValidationId); each
ticket's number is computed from the id and the ticket's sequence number, so the host can check a ticket it never
saw printed:

1. A = the sequence number's 3 bytes then the validation id's 3 bytes, each least significant byte first;
2. B0 = A0, B1 = A1, B2 = A0 ^ A2, B3 = A1 ^ A3, B4 = A0 ^ A4, B5 = A1 ^ A5;
3. C = the SAS CRC-16 (Kermit, seed 0) of B0B1, of B2B3 and of B4B5, each least significant byte first;
4. C0C1C2 and C3C4C5 each read as a 24-bit number (least significant byte first) and written as 8 decimal digits;
5. in each group of 8 digits, the first digit gets (the sum of the group's digits mod 5) << 1 OR-ed in;
6. the number is C3..C5's group, then C0..C2's group (16 digits), after the system id "00" (18 digits in all).

Read from the public implementation in Aristocrat's Monaco platform (github.com/tejvirc/Platform,
SecureEnhancedValidationHandler.GenerateBarcode, "comes from the SAS 6.03 Specification Section 15.14"), whose
tests carry the worked examples tests/test_tito_validation.py checks: validation id 0x654321 with sequence 1 is
006429188185446104 ("Sas Secure Enhance Section 15.14 Example"), with 0 is 004580945669109504, with 0xFFFFFF is
007101753535986872.
"""

from __future__ import annotations

__all__ = ["SEQUENCE_MOD", "enhanced_validation", "next_sequence", "credits_of", "is_validation"]

SEQUENCE_MOD = 1 << 24  # the sequence number is 3 bytes: after 0xFFFFFF comes 0


def _crc_kermit(data: bytes) -> int:
    """SAS's CRC-16 (Kermit: CCITT polynomial, reflected, seed 0); drivers/sas/crc.py has the line's copy."""
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x8408 if crc & 1 else crc >> 1
    return crc


def _group(value: int) -> str:
    digits = [int(d) for d in f"{value:08d}"]
    digits[0] |= (sum(digits) % 5) << 1
    return "".join(map(str, digits))


def enhanced_validation(validation_id: int, sequence: int) -> str:
    """The 18-digit secure-enhanced validation number of the ticket with this sequence number."""
    if not 0 <= validation_id < SEQUENCE_MOD or not 0 <= sequence < SEQUENCE_MOD:
        raise ValueError(f"validation id {validation_id} and sequence {sequence} must each fit 3 bytes")
    a = sequence.to_bytes(3, "little") + validation_id.to_bytes(3, "little")
    b = bytes((a[0], a[1], a[0] ^ a[2], a[1] ^ a[3], a[0] ^ a[4], a[1] ^ a[5]))
    c = b"".join(_crc_kermit(b[i:i + 2]).to_bytes(2, "little") for i in (0, 2, 4))
    low, high = int.from_bytes(c[:3], "little"), int.from_bytes(c[3:], "little")
    return "00" + _group(high) + _group(low)


def next_sequence(sequence: int) -> int:
    return (sequence + 1) % SEQUENCE_MOD


def is_validation(text: str) -> bool:
    """An 18-digit validation number as printed on a ticket's barcode."""
    return len(text) == 18 and text.isascii() and text.isdigit()


def credits_of(cents: int, denomination: int) -> int | None:
    """What `cents` (a note, a ticket) is worth in credits of `denomination`; None when it is not a whole number of
    credits (such a note is never enabled, such a ticket is refused: the cabinet cannot hold a fraction)."""
    if cents <= 0 or cents % denomination:
        return None
    return cents // denomination
