"""SAS notes and tickets, byte by byte: the exceptions the note, ticket and device records raise, and each ticket and bill poll's answer compared with the layout public descriptions of SAS 6.02 give (the source of each named beside it); the technician's host decodes them; malformed payloads are refused, never a crash.

Sources (facts only; the expectations below are written from them):
- [AR] Aristocrat's SAS client (tejvirc/Platform, Protocol/SAS/Aristocrat.Sas.Client/LPParsers/LPxx*.cs): each
  parser's doc comment tables the command and response fields (LP1E, LP20, LP31-LP45, LP48, LP06, LP07, LP08, LP4C,
  LP4D, LP50, LP57, LP58, LP70, LP71, LP7B, LP7C, LP7D); GeneralExceptionCode.cs the exception codes;
  LongPollDataClasses/TicketTransferCode.cs (Table 15.12c) and RedemptionStatusCode.cs (Table 15.12d);
  BillDenominationCodes and BillAcceptorCountryCode (Table C-6); ValidationControlStatus.cs (Table 15.2c);
  Aristocrat.Monaco.Sas: Contracts/Client/SASBillException.cs and Exceptions/BillDataExceptionBuilder.cs (bill
  accepted with and without real-time reporting), Consumers/NoteAcceptor*Consumer.cs and Printer*Consumer.cs (which
  device fault raises which exception), Exceptions/SasPriorityExceptionQueue.cs (the priority order),
  SasMeterNumberToMeterConfiguration.cs (LP20 in dollars), Aristocrat.Sas.Client/Metering/SASMeterId.cs (Table C-7).
- [GSA] "IGT SAS Protocol Version 6.02 Reference Documentation" (gsa-p0013.004.00): BCD and ASCII most
  significant byte first, binary least significant byte first (2.2.3); a length byte counts what follows it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.cabinetrecords import (
    DeviceCleared, DeviceFault, NoteRejected, NoteReturned, NoteStacked, SasAck, SasValidationId, TicketInInserted,
    TicketInStacked, TicketOutPrinted, TicketOutRequested, TicketOutValidation,
)
from controller.cabinetstate import CabinetMeters
from controller.sas import SasState, View, change_record, general_poll, raised
from controller.sasfold import (
    Exc, Redemption, Ticketing, Validation, enhanced_validation, next_enhanced_validation, sas_step, ticket_lines,
)
from controller.sas_host import SasHost
from tests.sas_layout_helpers import A, WHEN, answer, crc, layout_cabinet, view

V = "001234567890123456"          # a secure enhanced validation number (system id 00)
S = "011234567890123456"          # a system validation number (system id 01)
METERS = CabinetMeters(notes_in=((100, 3), (500, 2), (2000, 7), (10000, 1), (25000, 1)), notes_in_cents=50300,
                       tickets_in_cashable=2, tickets_in_cashable_cents=1500, tickets_in_restricted=1,
                       tickets_in_restricted_cents=500, tickets_out_cashable=4, tickets_out_cashable_cents=12345,
                       tickets_out_restricted=1, tickets_out_restricted_cents=250)


@pytest.fixture(scope="module")
def cabinet(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return layout_cabinet(tmp_path_factory.mktemp("tito"), meters=METERS)


def framed(v: View, command: int, data: str = "") -> bytes:
    out = answer(v, command, data)
    assert out is not None
    return out


def change(v: View, command: int, data: str) -> tuple[Any, str]:
    record, ans = change_record(v, command, bytes.fromhex(data))
    return record, (ans or b"").hex().upper()


# ------------------------------------------------------------------------------------------------ bill meters

def test_bill_meters_are_counts_by_note_and_the_value_in_dollars(cabinet: Any) -> None:
    v = view(cabinet)
    # 1E [AR LP1ESendBillMetersParser]: $1, $5, $10, $20, $50, $100 counts, 4 BCD each
    assert answer(v, 0x1E) == crc("051E" "00000003" "00000002" "00000000" "00000007" "00000000" "00000001")
    # 20 [AR LP20TotalBillInValueParser; SasMeterNumberToMeterConfiguration: CurrencyInAmount in Dollars]
    assert answer(v, 0x20) == crc("0520" "00000503")
    # 31-45 [AR LP31..LP45]: one note's count each: 31 $1, 35 $20, 37 $100, 3A $200, 45 $250
    for command, count in {0x31: 3, 0x33: 2, 0x35: 7, 0x37: 1, 0x3A: 0, 0x45: 1}.items():
        assert answer(v, command) == crc(f"05{command:02X}{count:08d}")
    # 48 [AR LP48SendLastAcceptedBillInformationParser]: country code 1 BCD (Table C-6: United States, 0x25 = 37),
    # denomination code 1 BCD ($20 is 04), count of that note 4 BCD; all zeros before any note
    assert answer(view(cabinet, SasState(last_bill=2000)), 0x48) == crc("0548" "37" "04" "00000007")
    assert answer(view(cabinet, SasState(last_bill=25000)), 0x48) == crc("0548" "37" "09" "00000001")
    assert answer(v, 0x48) == crc("0548" "000000000000")


def test_ticket_and_bill_meters_on_2f_and_6f_use_table_c7(cabinet: Any) -> None:
    # Table C-7 [AR SASMeterId; NC sizes]: 0B bills in credits; 0D-10 ticket cents (5 bytes on 2F): cashable in,
    # cashable out, restricted in, restricted out; 11-14 their counts; 15/16 tickets in/out in credits; 40 $1 notes,
    # 44 $20 notes
    body = ("0000" "0B" "00050300" "0D" "0000001500" "0E" "0000012345" "0F" "0000000500" "10" "0000000250"
            "11" "00000002" "12" "00000004" "13" "00000001" "14" "00000001" "15" "00002000" "16" "00012595"
            "40" "00000003" "44" "00000007")
    codes = "0B0D0E0F10111213141516" "4044"
    assert answer(view(cabinet), 0x2F, "0000" + codes) == crc(f"052F{len(bytes.fromhex(body)):02X}" + body)
    # 6F: two-byte codes, each with its size (5) and value
    assert answer(view(cabinet), 0x6F, "0000" "0D00" "4400") == crc(
        "056F" "12" "0000" "0D00" "05" "0000001500" "4400" "05" "0000000007")
    # in credits of a 5 cent accounting denomination, 0B is a fifth of the cents
    assert answer(view(cabinet, accounting_denomination=5), 0x2F, "0000" "0B") == crc("052F" "07" "0000" "0B"
                                                                                       "00010060")


def test_validation_meters_are_count_and_cents_by_validation_type(cabinet: Any) -> None:
    v = view(cabinet)
    # 50 [AR LP50SendValidationMetersParser]: type, total validations 4 BCD, cumulative cents 5 BCD; Table 15.13c:
    # 00 cashable ticket out, 01 restricted ticket out, 80 cashable redeemed, 81 restricted redeemed
    assert answer(v, 0x50, "00") == crc("0550" "00" "00000004" "0000012345")
    assert answer(v, 0x50, "01") == crc("0550" "01" "00000001" "0000000250")
    assert answer(v, 0x50, "80") == crc("0550" "80" "00000002" "0000001500")
    assert answer(v, 0x50, "81") == crc("0550" "81" "00000001" "0000000500")
    assert answer(v, 0x50, "20") == crc("0550" "20" "00000000" "0000000000")  # jackpot hand pay receipts: none
    with pytest.raises(ValueError, match="validation type"):
        answer(v, 0x50, "05")


def test_bill_acceptor_enable_disable_and_denominations(cabinet: Any) -> None:
    v = view(cabinet)
    # 06/07 [AR LP06, LP07]: ACKed; journaled only when they change something
    assert change(v, 0x07, "") == ({"kind": "sas", "what": "bills", "enabled": False}, "")
    assert change(v, 0x06, "") == (None, "")
    # 08 [AR LP08ConfigureBillDenominationsParser]: 4 bytes LSB first, bit 0 $1, 2 $5, 4 $20, 7 $100, 8 $200 ...;
    # action flag 00/01
    record, ack = change(v, 0x08, "95010000" "01")
    assert record == {"kind": "sas", "what": "bills", "enabled": True, "notes": [100, 500, 2000, 10000, 20000]}
    assert ack == ""
    with pytest.raises(ValueError, match="08"):
        change(v, 0x08, "95000000" "02")


# ------------------------------------------------------------------------------------------------ ticket out

def test_pending_cashout_and_receive_validation_number(cabinet: Any) -> None:
    pending = SasState(requested=((7, 2500, False),))
    # 57 [AR LP57SendPendingCashoutInformationParser]: 00 cashable, 01 restricted, 80 not waiting; amount 5 BCD cents
    assert answer(view(cabinet, pending), 0x57) == crc("0557" "00" "0000002500")
    assert answer(view(cabinet, SasState(requested=((8, 250, True),))), 0x57) == crc("0557" "01" "0000000250")
    assert answer(view(cabinet), 0x57) == crc("0557" "80" "0000000000")
    # secure enhanced validation: the cabinet waits for the host only while it has no validation id
    assert answer(view(cabinet, dataclasses.replace(pending, validation_mode="enhanced", validation_id=(1, 1))),
                  0x57) == crc("0557" "80" "0000000000")
    assert answer(view(cabinet, dataclasses.replace(pending, validation_mode="enhanced")), 0x57) == \
        crc("0557" "00" "0000002500")
    # 58 [AR LP58ReceiveValidationNumberParser]: system id 1 BCD, validation number 8 BCD; status 00 taken,
    # 80 not in a cash out, 81 improper; system id 00 denies it
    record, status = change(view(cabinet, pending), 0x58, "01" "1234567890123456")
    assert record == {"kind": "ticket_out", "what": "validation", "number": 7, "validation": S, "by": "system",
                      "expires": 30} and status == "00"
    assert change(view(cabinet), 0x58, "01" "1234567890123456") == (None, "80")
    assert change(view(cabinet, pending), 0x58, "01" "0000000000000000") == (None, "81")
    assert change(view(cabinet, pending), 0x58, "00" "0000000000000000") == (
        {"kind": "ticket_out", "what": "failed", "number": 7, "reason": "system validation denied"}, "00")
    with pytest.raises(ValueError, match="not BCD"):
        change(view(cabinet, pending), 0x58, "01" "123456789012345A")


def test_secure_enhanced_validation_id(cabinet: Any) -> None:
    # 4C [AR LP4CSetValidationIDNumberParser]: machine validation id 3 binary, sequence number 3 binary (LSB first,
    # GSA 2.2.3), "incremented before being assigned to each event", echoed: the journal holds the next ticket's
    # sequence, one more; ignored unless the EGM does secure enhanced validation; id 0 reads the current ones; the
    # last ones sent again leave the sequence number where it has got to
    with pytest.raises(LookupError):
        change(view(cabinet), 0x4C, "563412" "010000")
    enhanced = SasState(validation_mode="enhanced")
    assert change(view(cabinet, enhanced), 0x4C, "563412" "010000") == (
        {"kind": "sas", "what": "validation_id", "machine": 0x123456, "sequence": 2}, "563412010000")
    used = dataclasses.replace(enhanced, validation_id=(0x123456, 6), validation_set=(0x123456, 2))  # 4 tickets on
    assert change(view(cabinet, used), 0x4C, "000000" "000000") == (None, "563412050000")
    assert change(view(cabinet, used), 0x4C, "563412" "010000") == (None, "563412050000")


def test_the_secure_enhanced_validation_number_is_the_protocols_algorithm() -> None:
    # SAS 6.03 15.14's example and Aristocrat's own test vectors (Test/Aristocrat.Monaco.Sas.Tests/VoucherValidation/
    # SecureEnhancedValidationHandlerTests.cs): machine validation id 654321, sequence numbers 1, 0 (after FFFFFF
    # rolls over) and FFFFFF
    assert enhanced_validation(0x654321, 1) == "006429188185446104"
    assert enhanced_validation(0x654321, 0) == "004580945669109504"
    assert enhanced_validation(0x654321, 0xFFFFFF) == "007101753535986872"
    # the state holds the next ticket's sequence number (4C's, plus one); no id set: none
    assert next_enhanced_validation(SasState(validation_id=(0x654321, 1))) == (1, "006429188185446104")
    assert next_enhanced_validation(SasState(validation_id=(0x654321, 0))) == (0, "004580945669109504")
    assert next_enhanced_validation(SasState()) is None


def test_enhanced_validation_information_reads_the_buffer(cabinet: Any) -> None:
    ticket = Validation(1, 7, S, 2500, False, WHEN.timestamp(), 30, printed=True)
    sas = SasState(validations=(ticket,), validated=1)
    # 4D [AR LP4DSendEnhancedValidationInformationParser]: type (00 cashable), index, date MMDDYYYY 4 BCD, time
    # HHMMSS 3 BCD, validation number 8 BCD, amount 5 BCD cents, ticket number 2 binary, system id 1 BCD,
    # expiration 4 BCD (days), pool id 2 binary
    info = "00" "01" "02032031" "040506" "1234567890123456" "0000002500" "0700" "01" "00000030" "0000"
    for fc in ("00", "01", "FF"):
        assert answer(view(cabinet, sas), 0x4D, fc) == crc("054D" + info)
    assert answer(view(cabinet, sas), 0x4D, "02") == crc("054D" + "00" * 31)  # nothing there: 31 zeros
    read = SasState(validations=(dataclasses.replace(ticket, read=True),))
    assert answer(view(cabinet, read), 0x4D, "00") == crc("054D" + "00" * 31)  # read already
    assert answer(view(cabinet, read), 0x4D, "01") == crc("054D" + info)      # still in the buffer
    wrapped = SasState(validations=(dataclasses.replace(ticket, n=33, restricted=True),))
    assert framed(view(cabinet, wrapped), 0x4D, "02")[2:4] == bytes([0x01, 0x02])  # restricted, index 33 -> 02
    with pytest.raises(ValueError, match="function code"):
        answer(view(cabinet, sas), 0x4D, "20")


# ------------------------------------------------------------------------------------------------ ticket in

def test_ticket_validation_data(cabinet: Any) -> None:
    # 70 [AR LP70SendTicketValidationDataParser]: length, 00 ticket in escrow, amount 5 BCD (zeros), parsing code
    # 00, validation data 9 BCD; FF alone when there is no ticket
    assert answer(view(cabinet), 0x70) == crc("0570" "01" "FF")
    assert answer(view(cabinet, SasState(redemption=Redemption(V))), 0x70) == crc(
        "0570" "10" "00" "0000000000" "00" + V)


def test_redeem_ticket_authorises_refuses_and_reports(cabinet: Any) -> None:
    waiting = SasState(redemption=Redemption(V))
    w = view(cabinet, waiting)
    # 71 [AR LP71RedeemTicketParser]: length, transfer code (Table 15.12c), amount 5 BCD, parsing code, validation
    # 9 BCD [, expiration 4 BCD, pool id 2 binary]; the answer: length, machine status (Table 15.12d), amount,
    # parsing code, validation; 40 ticket redemption pending
    assert change(w, 0x71, "00" "0000002500" "00" + V) == (
        {"kind": "ticket_in", "what": "authorised", "validation": V, "cents": 2500, "restricted": False, "code": 0},
        "10" "40" "0000002500" "00" + V)
    assert change(w, 0x71, "01" "0000001000" "00" + V + "00000030" "3412") == (
        {"kind": "ticket_in", "what": "authorised", "validation": V, "cents": 1000, "restricted": True, "code": 1,
         "pool": 0x1234, "expires": "00000030"}, "10" "40" "0000001000" "00" + V)
    # refusals: 84 already redeemed is journaled; 80 rejected by host
    assert change(w, 0x71, "84" "0000000000" "00" + V) == (
        {"kind": "ticket_in", "what": "refused", "validation": V, "reason": "ticket already redeemed", "code": 0x84},
        "10" "80" "0000000000" "00" + V)
    # the machine's own refusals, nothing journaled: 81 not the ticket in escrow, 82 no such transfer code,
    # 83 no amount, 85 not whole credits (5 cents here)
    assert change(w, 0x71, "00" "0000002500" "00" + S) == (None, "10" "81" "0000002500" "00" + S)
    assert change(w, 0x71, "50" "0000002500" "00" + V) == (None, "10" "82" "0000002500" "00" + V)
    assert change(w, 0x71, "00" "0000000000" "00" + V) == (None, "10" "83" "0000000000" "00" + V)
    assert change(w, 0x71, "00" "0000002502" "00" + V) == (None, "10" "85" "0000002502" "00" + V)
    # status (FF, or the code alone): FF no information; C0 a redemption outside a cycle
    assert change(view(cabinet), 0x71, "FF") == (None, "01FF")
    assert change(view(cabinet), 0x71, "00" "0000002500" "00" + V) == (None, "01C0")
    pending = SasState(redemption=Redemption(V, 0x40, 2500, 0))
    assert change(view(cabinet, pending), 0x71, "FF") == (None, "10" "40" "0000002500" "00" + V)
    # the host repeats its answer: it hears how the redemption stands, nothing is journaled again
    assert change(view(cabinet, pending), 0x71, "00" "0000002500" "00" + V) == (None, "10" "40" "0000002500" "00" + V)
    done = SasState(redemption=Redemption(V, 0x00, 2500, 0, done=True))
    assert change(view(cabinet, done), 0x71, "FF") == (None, "10" "00" "0000002500" "00" + V)


@pytest.mark.parametrize("payload,match", [
    ("", "no transfer code"), ("00" "00000025", "at least 16"), ("00" "000000250A" "00" + V, "not BCD"),
    ("00" "0000002500" "00" "00123456789012345A", "validation data"), ("00" "0000002500" "00" + V + "00", "16 for"),
    ("01" "0000002500" "00" + V + "00000030" "3412" "05" "4142", "target id"),
])
def test_a_malformed_redemption_is_refused_by_name(cabinet: Any, payload: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        change(view(cabinet, SasState(redemption=Redemption(V))), 0x71, payload)


# ------------------------------------------------------------------------------------------------ ticketing

def test_extended_validation_status(cabinet: Any) -> None:
    v = view(cabinet, asset_number=0x01020304)
    # 7B [AR LP7BExtendedValidationStatusParser]: control mask 2, control states 2 (binary, Table 15.2c), cashable and
    # restricted expiration 2 BCD each (0000 unchanged); the answer: length 0A, asset number 4 binary, status bits 2,
    # the two expirations
    record, ans = change(v, 0x7B, "0800" "0800" "0000" "0060")  # print restricted tickets; 60 days
    assert record == {"kind": "sas", "what": "ticketing", "status": 0x29, "restricted_expiry": 60}
    assert ans == "0A" "04030201" "2900" "0030" "0060"
    assert change(v, 0x7B, "0000" "0000" "0000" "0000") == (None, "0A" "04030201" "2100" "0030" "0030")
    with pytest.raises(ValueError, match="7B"):
        change(v, 0x7B, "0000" "0000" "0000")


def test_ticket_data_7c_and_7d(cabinet: Any) -> None:
    v = view(cabinet)
    # 7C [AR LP7CSetExtendedTicketDataParser]: data code (00 location, 01/02 address, 10 restricted title, 20 debit
    # title), length, ASCII; the answer 01 taken, 00 invalid
    record, flag = change(v, 0x7C, "00" "05" + b"Venue".hex() + "10" "03" + b"PRO".hex())
    assert record == {"kind": "sas", "what": "ticketing", "location": "Venue", "restricted_title": "PRO"}
    assert flag == "01"
    assert change(v, 0x7C, "03" "01" "41") == (None, "00")                     # no data code 03
    assert change(v, 0x7C, "10" "11" + "41" * 17) == (None, "00")              # a title over 16
    assert change(v, 0x7C, "00" "02" "4107") == (None, "00")                   # not printable
    assert change(v, 0x7C, "00" "05" "4141") == (None, "00")                   # cut short
    # 7D [AR LP7DSetTicketDataParser]: host id 2 binary, expiration days 1 binary (00 never), then location,
    # address 1, address 2 each as length (00 unchanged) and ASCII
    record, flag = change(v, 0x7D, "3412" "1E" "05" + b"Venue".hex() + "00" "03" + b"Nev".hex())
    assert record == {"kind": "sas", "what": "ticketing", "cashable_expiry": 30, "host_id": 0x1234,
                      "location": "Venue", "address2": "Nev"} and flag == "01"
    assert change(v, 0x7D, "3412" "00")[0]["cashable_expiry"] == 9999
    assert change(v, 0x7D, "3412" "1E" "00" "00" "00" "41") == (None, "00")   # bytes after address 2
    assert change(v, 0x7D, "34") == (None, "00")
    # what the printer is given of it
    t = Ticketing(cashable_expiry=9999, restricted_expiry=60, location="Venue", address1="1 Main St", address2="Reno")
    assert ticket_lines(t) == ("Venue", "1 Main St, Reno", 0) and ticket_lines(t, restricted=True)[2] == 60


# ------------------------------------------------------------------------------------------------ exceptions

def test_note_and_device_records_raise_their_exceptions(cabinet: Any) -> None:
    def codes(record: Any, sas: SasState = SasState(), after: Any = cabinet) -> list[tuple[int, str]]:
        return [(c, d.hex()) for c, d in raised(cabinet, record.to_json(), after, (), 5, sas)]

    # bill accepted [AR SASBillException.cs]: 47 $1 48 $5 49 $10 4A $20 4B $50 4C $100 4D $2 4E $500 50 $200, else
    # 4F; the real-time data [AR BillDataExceptionBuilder.cs]: country 1 BCD, denomination code 1 BCD, count 4 BCD
    assert codes(NoteStacked(2000, 400)) == [(0x4A, "37" "04" "00000007")]
    assert codes(NoteStacked(100, 20)) == [(0x47, "37" "00" "00000003")]
    assert codes(NoteStacked(2500, 500)) == [(0x4F, "37" "05" "00000000")]  # a $25 note: the generic code
    # [AR NoteAcceptorDocumentRejectedConsumer, NoteAcceptorCurrencyReturnedConsumer]: 2B bill rejected; 2C
    # counterfeit
    assert codes(NoteRejected("counterfeit")) == [(0x2C, "")]
    assert codes(NoteRejected("not a note")) == [(0x2B, "")]
    assert codes(NoteReturned(500, "host disabled")) == [(0x2B, "")]
    # [AR NoteAcceptorHardwareFault(Clear)Consumer, NoteAcceptorDisconnectedConsumer; GeneralExceptionCode]
    expected = {"jam": 0x28, "stacker_full": 0x27, "stacker_open": 0x1B, "cheat": 0x2A, "failure": 0x29,
                "offline": 0x29}
    for code, exc in expected.items():
        assert codes(DeviceFault("validator", code)) == [(exc, "")]
    assert codes(DeviceCleared("validator", "stacker_open")) == [(0x1C, "")]
    assert codes(DeviceCleared("validator", "jam")) == []
    # [AR PrinterHardwareFaultConsumer (paper out 61, jam 78, head open: general tilt 20), PrinterDisconnected/
    # ConnectedConsumer (75/76), PrinterHardwareWarningConsumer (74)]
    expected = {"paper_out": 0x61, "jam": 0x78, "head_open": 0x20, "offline": 0x75, "paper_low": 0x74}
    for code, exc in expected.items():
        assert codes(DeviceFault("printer", code)) == [(exc, "")]
    assert codes(DeviceCleared("printer", "offline")) == [(0x76, "")]
    assert codes(DeviceCleared("printer", "paper_low")) == []


def test_ticket_records_raise_their_exceptions(cabinet: Any) -> None:
    def codes(record: Any, sas: SasState = SasState()) -> list[int]:
        return [c for c, _ in raised(cabinet, record.to_json(), cabinet, (), 5, sas)]

    out = TicketOutRequested(100, 500, False, 1)
    assert codes(out) == [0x57]                                              # system validation request
    assert codes(out, SasState(validation_mode="enhanced")) == [0x57]        # 4C never set: the host is asked
    assert codes(out, SasState(validation_mode="enhanced", validation_id=(1, 1))) == []
    assert codes(out, SasState(validation_mode="none")) == []
    assert codes(TicketOutPrinted(1)) == [0x3D]
    assert codes(TicketInInserted(V)) == [0x67]
    assert codes(TicketInStacked(V, 500, 100, False), SasState(redemption=Redemption(V, 0x40))) == [0x68]
    assert codes(TicketInStacked(V, 500, 100, False)) == []                 # no redemption cycle of its own


def test_bills_report_4f_in_real_time_and_priority_exceptions_come_in_sas_order(cabinet: Any) -> None:
    queued = SasState(rte=True, queue=(Exc("1:0", 0x4A, bytes.fromhex("3704" "00000007")),))
    frame, _ = general_poll(view(cabinet, queued), A)
    assert frame == crc("05FF4F" "3704" "00000007")  # [AR BillDataExceptionBuilder: the list starts with 4F]
    assert general_poll(view(cabinet, dataclasses.replace(queued, rte=False)), A)[0] == b"\x4a"
    # [AR SasPriorityExceptionQueue: 57, 67, 68, ... 3D, hand pay]: priority ones first, in that order
    queue = tuple(Exc(f"{i}:0", c) for i, c in enumerate([0x7E, 0x3D, 0x51, 0x68, 0x57, 0x67]))
    state = SasState(queue=queue)
    order = []
    while state.queue:
        e = state.next()
        assert e is not None
        order.append(e.code)
        state = dataclasses.replace(state, queue=tuple(x for x in state.queue if x.id != e.id))
    assert order == [0x57, 0x67, 0x68, 0x3D, 0x51, 0x7E]


def test_the_fold_keeps_the_validation_buffer_and_the_sequence(cabinet: Any) -> None:
    sas = SasState(validation_mode="enhanced")
    steps = [SasValidationId(0x123456, 10), TicketOutRequested(100, 500, False, 1),
             TicketOutValidation(1, V, "enhanced"), TicketOutPrinted(1), SasAck(("4D:1",), 0x4D)]
    for seq, record in enumerate(steps, 1):
        sas = sas_step(sas, seq, cabinet, record.to_json(), cabinet, (), 5, WHEN.timestamp())
    assert sas.validation_id == (0x123456, 11) and sas.validation_set == (0x123456, 10)
    assert sas.validations == (Validation(1, 1, V, 500, False, WHEN.timestamp(), 0, printed=True, read=True),)
    assert sas.requested == () and [e.code for e in sas.queue] == [0x3D]


# ------------------------------------------------------------------------------------------------ the host

def _host(bodies: dict[int, bytes]) -> SasHost:
    host = SasHost.__new__(SasHost)
    host.long_poll = lambda command, data=b"", **kw: bodies[command]  # type: ignore[method-assign]
    return host


def test_the_host_decodes_the_ticket_layouts(cabinet: Any) -> None:
    ticket = Validation(1, 7, S, 2500, True, WHEN.timestamp(), 30, printed=True)
    v = view(cabinet, SasState(validations=(ticket,), last_bill=2000, requested=((9, 750, False),)))
    fixed = {c: framed(v, c, d)[2:-2] for c, d in ((0x1E, ""), (0x48, ""), (0x4D, "00"), (0x50, "00"), (0x57, ""))}
    host = _host({**fixed, 0x70: framed(view(cabinet, SasState(redemption=Redemption(V))), 0x70)[3:-2]})
    assert host.bill_meters() == {1: 3, 5: 2, 10: 0, 20: 7, 50: 0, 100: 1}
    assert host.last_bill() == {"country": 37, "denomination": 4, "count": 7}
    assert host.validation_info(0) == {"type": 1, "index": 1, "when": WHEN, "validation": S, "cents": 2500,
                                       "ticket": 7, "system": 1, "expires": 30, "pool": 0}
    assert host.validation_meters(0) == (4, 12345) and host.pending_cashout() == (0, 750)
    assert host.ticket_validation_data() == V
    assert _host({0x4D: bytes(31)}).validation_info(0) is None


@settings(max_examples=300, deadline=None)
@given(command=st.sampled_from([0x4C, 0x58, 0x71, 0x7B, 0x7C, 0x7D, 0x08]), payload=st.binary(max_size=48),
       mode=st.sampled_from(["system", "enhanced"]), redemption=st.sampled_from([None, 0x20, 0x40]))
def test_malformed_ticket_polls_get_a_clear_refusal_never_a_crash(cabinet: Any, command: int, payload: bytes,
                                                                  mode: str, redemption: int | None) -> None:
    sas = SasState(validation_mode=mode, requested=((3, 500, False),),
                   redemption=None if redemption is None else Redemption(V, redemption, 500, 0))
    try:
        record, ans = change_record(view(cabinet, sas), command, payload)
    except LookupError:
        assert command == 0x4C  # not doing secure enhanced validation, or not its length: ignored
        return
    except ValueError as exc:
        assert str(exc)  # NACKed with a reason
        return
    assert record is None or record["kind"] in ("sas", "ticket_in", "ticket_out")
    assert isinstance(ans, bytes)
    if command == 0x71:
        assert ans[0] == len(ans) - 1  # a length byte that counts what follows
