"""SAS byte layouts, poll by poll: each answer the EGM builds is compared byte for byte with the layout public descriptions of SAS 6.02 give (the source of each is named beside it), and the technician's host decodes them.

Sources (facts only; the expectations below are written from them):
- [AR] Aristocrat's SAS client, namespace Aristocrat.Sas.Client (tejvirc/Platform,
  Protocol/SAS/Aristocrat.Sas.Client/LPParsers/LPxx*.cs): each parser's doc comment tables the command and
  response fields; DenominationCodes.cs is Table C-4; Aristocrat.Monaco.Sas/SasMeterCollection.cs and
  Metering/SasMeter.cs give Table C-7's sizes (4 bytes, 5 for meters 0D-10); Aristocrat.Monaco.Sas/Exceptions/
  GameStartedExceptionBuilder.cs, GameEndedExceptionBuilder.cs and LegacyBonusAwardedExceptionBuilder.cs the
  real-time event data; LongPollSendEnabledFeaturesResponse.cs the A0 feature bits.
- [SP] saspy (zacharytomlinson/saspy, sas.py at e2224b21): response sizes of 0F, 18, 19, 1A, 1C, 1F.
- [NC] nCompass (lakeshsharma/nCompass, Sentinel/SASProtocol/LongPoll2FMessage.cpp, LongPoll6FMessage.cpp):
  2F sizes (4, 5 for 0D-10), 6F code (2 bytes, LSB first), size, value.
- [GSA] "IGT SAS Protocol Version 6.02 Reference Documentation" (a public summary of gsa-p0013.004.00): BCD
  and ASCII most significant byte first, binary least significant byte first (2.2.3); a length byte counts
  what follows it up to the CRC; 12.6: in real-time mode 00 is never sent.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.cabinetstate import CabinetMeters, Lockup
from controller.sas import BONUS_BY, DENOMINATION_CODES, Busy, Exc, SasState, change_record, general_poll, meter, raised
from controller.sas_host import DENOMINATIONS, HostError, SasHost
from tests.sas_layout_helpers import A, answer, crc, layout_cabinet, view

METERS = CabinetMeters(coin_in=1234, coin_out=567, jackpot_handpaid=10, cancelled_handpaid=3, hopper_out=20,
                       drop=40, games_played=321, games_won=100, games_lost=221,
                       door_opens=(("main", 5), ("slot", 2), ("drop", 4)),
                       power_resets=9)


@pytest.fixture(scope="module")
def cabinet(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return layout_cabinet(tmp_path_factory.mktemp("layouts"), meters=METERS, credits=88)


def test_the_meter_polls_are_four_byte_bcd_meters_in_protocol_order(cabinet: Any) -> None:
    v = view(cabinet)
    # 0F [AR LP0FSendMeters10Through15Parser, SP send_meters_10_15 size 28]: cancelled credits, coin in, coin out,
    # drop, jackpot, games played; amounts in SAS credits (x5)
    assert answer(v, 0x0F) == crc("050F" "00000115" "00006170" "00002835" "00000200" "00000050" "00000321")
    # 10-17 [AR LP10..LP17]: one 4 byte BCD meter each
    singles = {0x10: "00000115", 0x11: "00006170", 0x12: "00002835", 0x13: "00000200", 0x14: "00000050",
               0x15: "00000321", 0x16: "00000100", 0x17: "00000221"}
    for command, value in singles.items():
        assert answer(v, command) == crc(f"05{command:02X}{value}")
    # 19 [AR LP19SendMeters11Thru15Parser, SP size 24]: coin in, coin out, drop, jackpot, games played
    assert answer(v, 0x19) == crc("0519" "00006170" "00002835" "00000200" "00000050" "00000321")
    # 1C [AR LP1CSendMetersParser, SP size 36]: ... games won, slot door opened (AR sums both names of the main
    # door, as this EGM sums "main" and "slot"), power resets
    assert answer(v, 0x1C) == crc("051C" "00006170" "00002835" "00000200" "00000050" "00000321" "00000100"
                                  "00000007" "00000009")
    # 1A [AR LP1ASendCurrentCreditsParser, SP size 8]: current credits
    assert answer(v, 0x1A) == crc("051A" "00000440")


def test_games_since_power_up_and_door_close_are_two_byte_bcd(cabinet: Any) -> None:
    # 18 [AR LP18SendGamesPlayedSinceLastPowerUpAndDoorCloseParser]: two 2 byte BCD counts
    v = view(cabinet, SasState(games_since_power=12, games_since_door=3))
    assert answer(v, 0x18) == crc("0518" "0012" "0003")


def test_hand_pay_information(cabinet: Any) -> None:
    # 1B [AR LP1BSendHandpayInfoParser]: progressive group, level (80 cancelled credits, 40 non-progressive win),
    # amount 5 BCD, partial pay 2 BCD, reset ID, 10 unused bytes; all zero when no hand pay is pending [GSA 7.8.2]
    assert answer(view(cabinet), 0x1B) == crc("051B" + "00" * 20)
    pending = dataclasses.replace(cabinet, lockups=(Lockup(1, "hand_pay", "HAnd PAY", 30),))
    assert answer(view(pending), 0x1B) == crc("051B" "00" "80" "0000000150" "0000" "00" + "00" * 10)
    jackpot = dataclasses.replace(cabinet, lockups=(Lockup(2, "jackpot", "JACPOt", 2000),))
    assert answer(view(jackpot), 0x1B) == crc("051B" "00" "40" "0000010000" "0000" "00" + "00" * 10)


def test_machine_information_reports_the_accounting_denomination(cabinet: Any) -> None:
    # 1F [AR LP1FSendMachineIdAndInfoParser: "The SAS accounting denomination of this gaming machine", SP size 24]:
    # game ID 2 ASCII, additional ID 3 ASCII, denomination (Table C-4), max bet, progressive group, game options
    # 2 binary (LSB first), paytable ID 6 ASCII, base % 4 ASCII without the decimal point
    info = "4652" "303030" "01" "0F" "00" "0000" "46524F303030" "39353030"  # FR 000, 1 cent, max bet 15 credits
    assert answer(view(cabinet), 0x1F) == crc("051F" + info)
    assert answer(view(cabinet, accounting_denomination=5), 0x1F) == crc(
        "051F" "4652" "303030" "02" "03" "00" "0000" "46524F303030" "39353030")
    # 53 [AR LP53SendGameNConfigurationParser]: the game number (2 BCD), then 1F's fields; game 0 matches 1F
    assert answer(view(cabinet), 0x53, "0001") == crc("0553" "0001" + info)
    assert answer(view(cabinet), 0x53, "0000") == crc("0553" "0000" + info)
    assert answer(view(cabinet), 0x53, "0002") is None  # no such game: ignored
    with pytest.raises(ValueError, match="not BCD"):
        answer(view(cabinet), 0x53, "00A1")  # a garbled game number is NACKed


def test_the_denomination_table_is_table_c4() -> None:
    # [AR DenominationCodes.cs]: code by cents, whole-cent rows of Table C-4
    expected = {1: 0x01, 5: 0x02, 10: 0x03, 25: 0x04, 50: 0x05, 100: 0x06, 500: 0x07, 1000: 0x08, 2000: 0x09,
                10000: 0x0A, 20: 0x0B, 200: 0x0C, 250: 0x0D, 2500: 0x0E, 5000: 0x0F, 20000: 0x10, 25000: 0x11,
                50000: 0x12, 100000: 0x13, 200000: 0x14, 250000: 0x15, 500000: 0x16, 2: 0x17, 3: 0x18, 15: 0x19,
                40: 0x1A}
    assert DENOMINATION_CODES == expected
    assert {code: cents for cents, code in expected.items()} == DENOMINATIONS  # the host's own table agrees


def test_rom_signature_seed_and_signature_are_binary_lsb_first(cabinet: Any) -> None:
    # 21 [AR LP21RomSignatureVerificationParser; GSA 2.2.3 binary LSB first]: seed 2 binary, signature 2 binary
    assert answer(view(cabinet), 0x21, "EFBE") == crc("0521" + (0x1234 ^ 0xBEEF).to_bytes(2, "little").hex())


def test_selected_meters_use_table_c7_sizes_and_leave_out_meters_not_kept(cabinet: Any) -> None:
    # 2F [AR LP2FSendSelectedMetersForGameNParser, NC LongPoll2FMessage.cpp]: length (what follows, to the CRC),
    # game number 2 BCD, then code and value per meter at Table C-7's size: 0D (cashable tickets in, cents) is 5
    # bytes; 7F is not kept by this EGM: left out rather than sent at a size the host would misread
    assert answer(view(cabinet), 0x2F, "0000" "00" "0C" "0D" "7F") == crc(
        "052F" "12" "0000" "00" "00006170" "0C" "00000440" "0D" "0000000000")
    # game 1: the game's own meters only (the credit meter belongs to the machine)
    assert answer(view(cabinet), 0x2F, "0001" "00" "0C" "05") == crc(
        "052F" "0C" "0001" "00" "00006170" "05" "00000321")
    assert answer(view(cabinet), 0x2F, "0002" "00") == crc("052F" "02" "0002")  # no such game: no meters
    with pytest.raises(ValueError):
        answer(view(cabinet), 0x2F, "0B00" "00")


def test_extended_meters_carry_two_byte_codes_lsb_first_and_a_size(cabinet: Any) -> None:
    # 6F [AR LP6FSendExtendedMetersForGameNParser / SendExtendedMetersForGameNParserTests, NC LongPoll6FMessage.cpp]:
    # length, game number, then per meter: code 2 binary (LSB first), size, value in BCD; a meter not kept
    # has size 00 and no value (NC: "a meter code followed by meterValueSize = 0")
    assert answer(view(cabinet), 0x6F, "0000" "0000" "0C00" "FF07") == crc(
        "056F" "15" "0000" "0000" "05" "0000006170" "0C00" "05" "0000000440" "FF07" "00")
    with pytest.raises(ValueError):
        answer(view(cabinet), 0x6F, "0000" "00")  # half a meter code
    # AF [AR LPAFSendExtendedMetersForGameNParser; GSA 7.21]: the same meters under a second code
    assert answer(view(cabinet), 0xAF, "0000" "0500") == crc("05AF" "0A" "0000" "0500" "05" "0000000321")
    assert answer(view(cabinet, features=()), 0xAF, "0000" "0500") is None  # extended meters off: unknown poll


def test_games_version_and_selection(cabinet: Any) -> None:
    v = view(cabinet)
    assert answer(v, 0x51) == crc("0551" "0001")  # [GSA 7.6.3] games implemented, 2 BCD
    assert answer(v, 0x55) == crc("0555" "0001")  # [GSA 7.6.6] selected game, 2 BCD
    # 56 [AR LP56SendEnabledGameNumbersParser]: length, count (binary), game numbers 2 BCD each
    assert answer(v, 0x56) == crc("0556" "03" "01" "0001")
    # 54 [AR LP54SendSasVersionParser]: length, SAS version 3 ASCII, serial 0-40 ASCII
    assert answer(v, 0x54) == crc("0554" "0A" + b"602CR-0042".hex())


def test_date_and_time_is_mmddyyyy_hhmmss_in_bcd(cabinet: Any) -> None:
    # 7E [AR LP7ESendDateTimeParser]: date 4 BCD MMDDYYYY, time 3 BCD HHMMSS
    assert answer(view(cabinet), 0x7E) == crc("057E" "02032031" "040506")
    # 7F [AR LP7FReadDateTimeParser]: the same layout; a field out of range is NACKed, never misread
    record, ack = change_record(view(cabinet), 0x7F, bytes.fromhex("12312030235958"))
    assert record is not None and record["set"] == "2030-12-31T23:59:58" and ack == b""
    for bad in ("13012024120000", "00012024120000", "02302024120000", "0101202425000", "0A012024120000"):
        with pytest.raises(ValueError, match="bad date and time"):
            change_record(view(cabinet), 0x7F, bytes.fromhex(bad.ljust(14, "0")))


def test_enabled_features_are_game_number_four_feature_bytes_and_two_reserved(cabinet: Any) -> None:
    # A0 [AR LPA0SendEnabledFeaturesParser, LongPollSendEnabledFeaturesResponse]: game number, features 1-4,
    # 2 reserved; features 1 bit 2 legacy bonus; features 2 bit 0 won credits metered when won, bit 3 6F
    assert answer(view(cabinet), 0xA0, "0000") == crc("05A0" "0000" "04" "09" "00" "00" "0000")
    assert answer(view(cabinet, features=()), 0xA0, "0001") == crc("05A0" "0001" "00" "01" "00" "00" "0000")


def test_polls_that_change_something_check_their_fields(cabinet: Any) -> None:
    v = view(cabinet)
    # 0E [AR LP0ERealTimeEventReportingParser]: 00 off, 01 on, anything else NACKed
    assert change_record(v, 0x0E, b"\x01") == ({"kind": "sas", "what": "rte", "on": True}, b"")
    assert change_record(v, 0x0E, b"\x00") == ({"kind": "sas", "what": "rte", "on": False}, b"")
    with pytest.raises(ValueError, match="0E"):
        change_record(v, 0x0E, b"\x02")
    # 8A [AR LP8ALegacyBonusAwardsParser]: amount 4 BCD in SAS credits, tax status 00-02
    record, _ = change_record(v, 0x8A, bytes.fromhex("00000010" "02"))
    assert record == {"kind": "credit", "source": "operator", "credits": 2, "by": BONUS_BY, "tax": 2}
    with pytest.raises(ValueError, match="tax status"):
        change_record(v, 0x8A, bytes.fromhex("00000010" "03"))
    with pytest.raises(ValueError, match="not BCD"):
        change_record(v, 0x8A, bytes.fromhex("0000001A" "00"))
    # [GSA 13.3.5] a bonus during a tilt, an open door or a hand pay gets the busy answer
    with pytest.raises(Busy, match="main door open"):
        change_record(view(dataclasses.replace(cabinet, doors_open=("main",))), 0x8A, bytes.fromhex("0000001000"))
    # 94 [AR LP94RemoteHandPayResetParser]: reset code 02 when not in a hand pay
    assert change_record(v, 0x94, b"") == (None, b"\x02")


def test_real_time_events_are_address_ff_code_data_crc(cabinet: Any) -> None:
    before = dataclasses.replace(cabinet, meters=dataclasses.replace(METERS, coin_in=10))
    after = dataclasses.replace(cabinet, meters=dataclasses.replace(METERS, coin_in=13), last_win=5)
    spin = {"kind": "spin", "game": 1, "stops": [0, 0, 0], "bet": {"coins": 3, "lines": 1}}  # a whole record
    events = dict(raised(before, spin, after, (), k=5))
    # game start [AR GameStartedExceptionBuilder]: credits wagered 2 BCD, coin in meter 4 BCD (after the bet),
    # wager type, progressive group; game end [AR GameEndedExceptionBuilder]: game win 4 BCD
    assert events == {0x7E: bytes.fromhex("0015" "00000065" "00" "00"), 0x7F: bytes.fromhex("00000025")}
    # legacy bonus awarded [AR LegacyBonusAwardedExceptionBuilder]: multiplier, multiplied win 4 BCD, tax status,
    # bonus amount 4 BCD
    credit = {"kind": "credit", "source": "operator", "by": BONUS_BY, "credits": 7, "tax": 1}
    bonus = raised(cabinet, credit, cabinet, (), k=5)
    assert bonus == [(0x7C, bytes.fromhex("00" "00000000" "01" "00000035"))]
    queued = SasState(rte=True, queue=(Exc("3:0", 0x7E, events[0x7E]), Exc("3:1", 0x7F, events[0x7F])))
    frame, exc = general_poll(view(cabinet, queued), A)
    assert frame == crc("05FF7E" "0015" "00000065" "0000") and exc is not None and exc.code == 0x7E
    # [GSA 12.6] real-time mode never sends 00: silence is "no activity"; without it, 00
    assert general_poll(view(cabinet, SasState(rte=True)), A) == (None, None)
    assert general_poll(view(cabinet, SasState()), A) == (b"\x00", None)
    assert general_poll(view(cabinet, dataclasses.replace(queued, rte=False)), A)[0] == b"\x7e"


def _host(bodies: dict[int, bytes]) -> SasHost:
    host = SasHost.__new__(SasHost)  # its decoding only: the long poll returns the body after address, command
    host.long_poll = lambda command, data=b"", **kw: bodies[command]  # type: ignore[method-assign]
    return host


def test_the_host_decodes_each_layout_from_the_protocol() -> None:
    host = _host({
        0x1F: bytes.fromhex("4652" "303030" "04" "FF" "00" "3412" "46524F303030" "39353030"),
        0x2F: bytes.fromhex("0000" "00" "00006170" "0D" "0000012345" "05" "00000321"),
        0x6F: bytes.fromhex("0000" "0000" "05" "0000006170" "FF07" "00" "0C00" "09" "000000000000000440"),
        0x7E: bytes.fromhex("12312030" "235958"),
        0xA0: bytes.fromhex("0000" "04" "09" "02" "01" "0000"),
    })
    info = host.machine_info()
    assert (info["denomination_code"], info["denomination_cents"], info["max_bet"], info["options"]) == \
        (0x04, 25, 255, 0x1234)  # options binary, LSB first
    assert host.selected_meters([0, 0x0D, 5]) == {0x00: 6170, 0x0D: 12345, 0x05: 321}  # 0D is 5 bytes
    assert host.extended_meters([0, 0x7FF, 0x0C]) == {0x0000: 6170, 0x07FF: None, 0x000C: 440}
    assert host.date_time() == dt.datetime(2030, 12, 31, 23, 59, 58)
    assert host.enabled_features()["features"] == [0x04, 0x09, 0x02, 0x01]
    with pytest.raises(HostError, match="cut short"):
        _host({0x2F: bytes.fromhex("0000" "0D" "00006170")}).selected_meters([0x0D])
    with pytest.raises(HostError, match="7E"):
        _host({0x7E: bytes.fromhex("13312030" "235958")}).date_time()


@settings(max_examples=150, deadline=None)
@given(values=st.lists(st.integers(0, 99_999_999 // 5), min_size=6, max_size=6),
       codes=st.lists(st.integers(0, 0x20), min_size=1, max_size=10), game=st.sampled_from([0, 1, 2]))
@pytest.mark.slow
def test_selected_meters_read_by_the_host_are_the_egm_meters(cabinet: Any, values: list[int], codes: list[int],
                                                             game: int) -> None:
    """Whatever meters a host asks 2F for, it reads back exactly the ones the EGM keeps, each whole."""
    coin_in, coin_out, jackpot, cancelled, hopper, credits = values
    cab = dataclasses.replace(cabinet, credits=credits, meters=dataclasses.replace(
        METERS, coin_in=coin_in, coin_out=coin_out, jackpot_handpaid=jackpot, cancelled_handpaid=cancelled,
        hopper_out=hopper))
    v = view(cab)
    frame = answer(v, 0x2F, f"{game:04d}" + bytes(codes).hex())
    assert frame is not None and frame[2] == len(frame) - 5  # the length byte counts game number and meters
    decoded = _host({0x2F: frame[3:-2]}).selected_meters(codes, game)
    assert decoded == {c: meter(v, c, game) for c in codes if meter(v, c, game) is not None}
