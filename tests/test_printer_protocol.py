"""TCL as the printer speaks it: byte-exact commands and status replies from the public sources protocol.py cites, and any bytes decoding to a status or a clear ProtocolError."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drivers.printer.protocol import (CLEAR, CLEAR_JAM, FLUSH_ALL, FORM_FEED, LATCHED, STATUS_COMMAND,
                                      STATUS_REQUEST, TEMPLATE_MODE, Clear, CommandReader, Flags, Flush, FormFeed,
                                      Print, ProtocolError, Status, StatusReader, StatusRequest, TemplateMode,
                                      Unknown, decode_field, decode_print, decode_status, encode_field,
                                      encode_print, encode_status)

# Paycheck4's emulator at power-up (kcondict/Paycheck4, TclProtocol.cs): unit 0, version PAY-6.22B, flags 1-4
# 0x40 (nothing set), flag 5 0x40 | ValidationDone 0x20 | ResetPowerUp 0x01, no template printed yet.
POWER_UP = b"*S|0|PAY-6.22B|@|@|@|@|a|P |*"


def test_commands_are_byte_exact() -> None:
    # Monaco's TclProtocolConstants.cs
    assert STATUS_REQUEST == b"\x05"
    assert CLEAR == b"^C|^"
    assert FORM_FEED == b"^f|I|^"
    assert FLUSH_ALL == b"^F|A|^"
    assert TEMPLATE_MODE == bytes((0x1B, 0x5B, 0x5E, 0x5D, 0x1B))
    # Paycheck4's TclProtocol.cs
    assert CLEAR_JAM == b"^C|j|^"
    assert STATUS_COMMAND == b"^S|^"


def test_print_command_is_monacos() -> None:
    # CreatePrintCommand: ^, P|, template|, 1|, each field then |, ^; ~ ^ | in a field as ~126 ~094 ~124.
    assert encode_print("2", ["00-1234-5678-9012-3456", "$20.00"]) == b"^P|2|1|00-1234-5678-9012-3456|$20.00|^"
    assert encode_print("C", ["a|b", "x^y", "~"]) == b"^P|C|1|a~124b|x~094y|~126|^"
    assert encode_print("C", [], copies=12) == b"^P|C|12|^"
    assert decode_print(b"^P|2|1|a~124b|$20.00|^") == Print("2", 1, ("a|b", "$20.00"))
    for bad in ("||", "", "CC", "^"):
        with pytest.raises(ProtocolError, match="^template: "):
            encode_print(bad, [])
    with pytest.raises(ProtocolError, match="^copies: "):
        encode_print("C", [], copies=0)


def test_status_reply_layout_is_monacos_and_paycheck4s() -> None:
    status = decode_status(POWER_UP)
    assert status == Status(Flags.VALIDATION_DONE | Flags.RESET, "0", "PAY-6.22B", " ")
    assert encode_status(status) == POWER_UP
    # Monaco reads 29 bytes: the version at offset 5 (9 characters), the flag bytes at 15, 17, 19, 21, 23.
    busy_jam = encode_status(Status(Flags.BUSY | Flags.PAPER_JAM | Flags.TOP_OF_FORM, "0", "GURSV1.08", "C"))
    assert len(busy_jam) == 29 and busy_jam[5:14] == b"GURSV1.08"
    assert [busy_jam[i] for i in (15, 17, 19, 21, 23)] == [0x60, 0x40, 0x40, 0x42, 0x50]
    assert busy_jam.endswith(b"|PC|*")


def test_flags_are_monacos_tclstatus_word() -> None:
    # TclProtocolConstants.TclStatus: status bytes 5, 4, 3, 2, 1 from the left.
    monaco = {
        "VOLTAGE_ERROR": 0x00_00_00_00_01, "HEAD_ERROR": 0x00_00_00_00_02, "PAPER_OUT": 0x00_00_00_00_04,
        "PLATEN_UP": 0x00_00_00_00_08, "SYSTEM_ERROR": 0x00_00_00_00_10, "BUSY": 0x00_00_00_00_20,
        "JOB_MEMORY_OVERFLOW": 0x00_00_00_01_00, "BUFFER_OVERFLOW": 0x00_00_00_02_00,
        "LIBRARY_LOAD_ERROR": 0x00_00_00_04_00, "DATA_ERROR": 0x00_00_00_08_00, "LIBRARY_REF_ERROR": 0x00_00_00_10_00,
        "TEMPERATURE_ERROR": 0x00_00_00_20_00, "MISSING_SUPPLY_INDEX": 0x00_00_01_00_00,
        "PRINTER_OFFLINE": 0x00_00_02_00_00, "FLASH_PROGRAM_ERROR": 0x00_00_04_00_00,
        "PAPER_IN_CHUTE": 0x00_00_08_00_00, "LIBRARIES_CORRUPTED": 0x00_00_10_00_00, "COMMAND_ERROR": 0x00_00_20_00_00,
        "PAPER_LOW": 0x00_01_00_00_00, "PAPER_JAM": 0x00_02_00_00_00, "CUTTER_ERROR": 0x00_04_00_00_00,
        "JOURNAL_MODE": 0x00_08_00_00_00, "RESET": 0x01_00_00_00_00, "BARCODE_ACCESSED": 0x02_00_00_00_00,
        "PRINTER_OPEN": 0x04_00_00_00_00, "XOFF": 0x08_00_00_00_00, "TOP_OF_FORM": 0x10_00_00_00_00,
        "VALIDATION_DONE": 0x20_00_00_00_00,
    }
    assert {f.name: f.value for f in Flags if f} == monaco


def test_a_flag_byte_that_reads_as_a_separator_is_still_a_flag() -> None:
    # 0x7C is "|": flag 1 with busy, system error, platen up and paper out. The reply is read by position.
    word = Flags.BUSY | Flags.SYSTEM_ERROR | Flags.PLATEN_UP | Flags.PAPER_OUT
    frame = encode_status(Status(word))
    assert frame[15] == ord("|")
    assert decode_status(frame).flags == word


@pytest.mark.parametrize("frame, error", [
    (b"*X|0|V|@|@|@|@|@|P |*", "starts with"),
    (b"*S|0|V|@|@|@|@|", "cut short"),
    (b"*S|0|V|\x20|@|@|@|@|P |*", "flag byte 1 is 0x20"),
    (b"*S|0|V|@|@|\xc0|@|@|P |*", "flag byte 3 is 0xC0"),
    (b"*S|0|V|@;@|@|@|@|P |*", "flag byte 1 is followed by 0x3B"),
    (b"*S|0|V|@|@|@|@|@|P |#", "ends with 0x23"),
    (b"*S|0|V|@|@|@|@|@|P |**", "1 bytes after"),
    (b"*S|0|V\x01|@|@|@|@|@|P |*", "firmware version"),
    (b"*S|0|VERSIONLONGERTHAN16|@|@|@|@|@|P |*", "firmware version is longer"),
])
def test_a_broken_status_reply_says_what_is_wrong(frame: bytes, error: str) -> None:
    with pytest.raises(ProtocolError, match=error):
        decode_status(frame)


def test_a_reply_without_the_template_field_is_read() -> None:
    assert decode_status(b"*S|0|V|@|@|@|A|@|*") == Status(Flags.PAPER_LOW, "0", "V", " ")


# ---- properties ------------------------------------------------------------------------------------------------

flags = st.builds(lambda bits: Flags(sum(b << (8 * i) for i, b in enumerate(bits))),
                  st.lists(st.integers(0, 0x3F), min_size=5, max_size=5))
printable = st.characters(min_codepoint=0x20, max_codepoint=0x7E, blacklist_characters="|")
statuses = st.builds(Status, flags, st.text(printable, min_size=1, max_size=3),
                     st.text(printable, min_size=1, max_size=16), printable)


@given(statuses)
def test_status_replies_round_trip(status: Status) -> None:
    assert decode_status(encode_status(status)) == status


@given(st.binary(max_size=80))
def test_any_bytes_decode_to_a_status_or_a_protocol_error(data: bytes) -> None:
    try:
        assert isinstance(decode_status(data), Status)
    except ProtocolError as exc:
        assert str(exc).startswith("status reply: ")


@given(st.lists(st.one_of(statuses.map(encode_status), st.binary(max_size=20)), max_size=6), st.data())
def test_the_reader_finds_every_reply_however_the_bytes_are_split(parts: list[bytes], data: st.DataObject) -> None:
    stream = b"".join(parts)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=8)))
    reader = StatusReader()
    got: list[Status | ProtocolError] = []
    for a, b in zip([0] + cuts, cuts + [len(stream)]):
        got += reader.feed(stream[a:b])
    whole = StatusReader().feed(stream)
    assert [s for s in got if isinstance(s, Status)] == [s for s in whole if isinstance(s, Status)]
    # A reply between pieces of noise without a * in them is always found.
    clean = [p for p in parts if b"*" not in p or p.startswith(b"*S|")]
    expected = [decode_status(p) for p in clean if p.startswith(b"*S|")]
    assert [s for s in StatusReader().feed(b"".join(clean)) if isinstance(s, Status)] == expected


@given(st.text(st.characters(max_codepoint=0xFF)))
def test_fields_round_trip(text: str) -> None:
    encoded = encode_field(text)
    assert not set(encoded) & set("|^") and encoded.isascii() and encoded.isprintable()
    assert decode_field(encoded) == text


def test_fields_beyond_latin_1_print_as_a_question_mark_and_bad_escapes_are_refused() -> None:
    assert encode_field("€5") == "?5"
    for bad in ("~12", "~", "a~b", "~999"):
        with pytest.raises(ProtocolError, match="^print field: "):
            decode_field(bad)


def test_the_printer_reads_each_command() -> None:
    stream = (STATUS_REQUEST + STATUS_COMMAND + b"^Se|^" + CLEAR + CLEAR_JAM + b"\r\n" + FORM_FEED + FLUSH_ALL
              + TEMPLATE_MODE + encode_print("C", ["x|y"]) + b"^Q|1|^" + b"junk" + b"^P|C|0|^")
    got = CommandReader().feed(stream)
    assert got[:10] == [StatusRequest(), StatusRequest(), StatusRequest(), Clear(), Clear("j"), FormFeed(), Flush(),
                        TemplateMode(), Print("C", 1, ("x|y",)), Unknown("^Q|1|^")]
    assert isinstance(got[10], ProtocolError) and "4 bytes outside any command" in str(got[10])
    assert isinstance(got[11], ProtocolError) and "copies 1 to 9999" in str(got[11])


@given(st.binary(max_size=200), st.data())
def test_any_bytes_give_the_printer_commands_or_protocol_errors(data: bytes, draw: st.DataObject) -> None:
    cut = draw.draw(st.integers(0, len(data)))
    reader = CommandReader()
    for item in reader.feed(data[:cut]) + reader.feed(data[cut:]):
        assert isinstance(item, (StatusRequest, Clear, Print, FormFeed, Flush, TemplateMode, Unknown,
                                 ProtocolError))


def test_clear_clears_the_latched_flags_only() -> None:
    assert Flags.VALIDATION_DONE in LATCHED and Flags.RESET in LATCHED and Flags.COMMAND_ERROR in LATCHED
    assert not LATCHED & (Flags.PAPER_JAM | Flags.PAPER_OUT | Flags.PLATEN_UP | Flags.PAPER_LOW | Flags.BUSY)
