"""TCL, the ticket printers' command language (FutureLogic GEN2/GEN3/PayCheck, JCM, Nanoptix NextGen/PayCheck 4): the commands the host sends, the status reply, each as pure encode/decode.

Sources (public; FutureLogic's developer manuals are under NDA, so the layout below is what two independent
public implementations agree on, and where they differ it says so):

- Aristocrat's Monaco platform, github.com/tejvirc/Platform, Hardware/Aristocrat.Monaco.Hardware.Serial/Printer/
  TCL/TclProtocolConstants.cs and TclProtocol.cs: the status request is ENQ (0x05); the reply is 29 bytes with the
  firmware version at offset 5 (9 characters) and the five status flag bytes at offsets 15, 17, 19, 21, 23; the
  flags as one 40-bit word (`TclStatus`); `^C|^` clears the online flags; `^P|<template>|1|<field>|...|^` prints
  a template, a field's ~, ^ and | written ~126, ~094, ~124; `^F|A|^` flushes; `^f|I|^` feeds one form.
  Hardware/Aristocrat.Monaco.Hardware/SupportedDevices.xml: TCL printers on RS-232 at 9600 8N1, no handshake
  (its comment: the spec says XON/XOFF, some printers do not handle it).
- kcondict/Paycheck4, src/Paycheck4.Core/Protocol/TclProtocol.cs (an emulator of a Nanoptix PayCheck 4 speaking
  TCL to EGMs): the reply spelt out as `*S|0|PAY-6.22B|f1|f2|f3|f4|f5|P<t>|*` (flags as raw bytes, each with
  0x40 set so it is printable, P and the last template printed); the per-byte flag names; `^S|^` and `^Se|^` as
  status requests too; `^C|j|^` clears a jam; the flags through a print: busy set with validation-done and
  top-of-form cleared, validation-done set once the barcode is printed, busy cleared, top-of-form set.

Where they differ: status flag 4. Monaco has paper low 0x01, paper jam 0x02, cutter error 0x04, journal mode
0x08; Paycheck4 has paper low 0x01 and paper jam 0x20 (and journal mode 0x80, which would clash with the 0x40
marker every flag byte carries). Monaco's layout is used: it is the one a production platform drives real
FutureLogic, JCM and Nanoptix printers with, and it keeps to the 0x3F data bits of every other flag byte.
Not found in either: what `^C|^` clears exactly. Monaco sends it before every print and then takes
validation-done as this ticket's, so here it clears the latched flags (validation done, barcode accessed,
power-up reset, command and data errors); a jam stays until `^C|j|^` or the paper path is cleared.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntFlag
from typing import Sequence, Union

__all__ = ["Flags", "Status", "ProtocolError", "StatusReader", "CommandReader", "StatusRequest", "Clear", "Print",
           "FormFeed", "Flush", "TemplateMode", "Unknown", "Command", "encode_status", "decode_status",
           "encode_print", "decode_print", "encode_field", "decode_field", "ENQ", "STATUS_REQUEST",
           "STATUS_COMMAND", "CLEAR", "CLEAR_JAM", "FORM_FEED", "FLUSH_ALL", "TEMPLATE_MODE", "MAX_STATUS",
           "MAX_COMMAND", "LATCHED", "DEFAULT_BAUDRATE"]

ENQ = 0x05
STATUS_REQUEST = bytes((ENQ,))                    # Monaco's RequestStatusCommand: answered even mid-job
STATUS_COMMAND = b"^S|^"                          # the same request as a command (Paycheck4)
CLEAR = b"^C|^"                                   # clear the online (latched) flags; Monaco: before every print
CLEAR_JAM = b"^C|j|^"                             # ... and a jam (Paycheck4's ClearFlagsAndJam)
FORM_FEED = b"^f|I|^"                             # feed one form (Monaco's FormFeedSingleCommand)
FLUSH_ALL = b"^F|A|^"                             # drop every queued job (Monaco's FlushAllCommand)
TEMPLATE_MODE = b"\x1b[^]\x1b"                    # back to template printing (Monaco's EnableTemplatePrintingMode)
DEFAULT_BAUDRATE = 9600  # Monaco's SupportedDevices.xml: every serial TCL printer at 9600 8N1, no handshake
MAX_STATUS = 64    # bytes a status reply may take (29 with a 9-character version) before it is refused
MAX_COMMAND = 4096  # bytes a host command may take before the printer refuses it
_MARK = 0x40       # set in every flag byte, so a flag byte is printable ASCII


class Flags(IntFlag):
    """The five status flag bytes as one word, flag byte n in bits 8(n-1)..8(n-1)+5 (Monaco's TclStatus)."""
    NONE = 0
    # flag 1
    VOLTAGE_ERROR = 0x01
    HEAD_ERROR = 0x02
    PAPER_OUT = 0x04
    PLATEN_UP = 0x08            # the print head is lifted: head open
    SYSTEM_ERROR = 0x10
    BUSY = 0x20
    # flag 2
    JOB_MEMORY_OVERFLOW = 0x01 << 8
    BUFFER_OVERFLOW = 0x02 << 8
    LIBRARY_LOAD_ERROR = 0x04 << 8
    DATA_ERROR = 0x08 << 8      # print region data error
    LIBRARY_REF_ERROR = 0x10 << 8
    TEMPERATURE_ERROR = 0x20 << 8
    # flag 3
    MISSING_SUPPLY_INDEX = 0x01 << 16
    PRINTER_OFFLINE = 0x02 << 16
    FLASH_PROGRAM_ERROR = 0x04 << 16
    PAPER_IN_CHUTE = 0x08 << 16  # a ticket waits in the bezel to be taken
    LIBRARIES_CORRUPTED = 0x10 << 16
    COMMAND_ERROR = 0x20 << 16
    # flag 4 (Monaco's layout; see the module's note)
    PAPER_LOW = 0x01 << 24
    PAPER_JAM = 0x02 << 24
    CUTTER_ERROR = 0x04 << 24
    JOURNAL_MODE = 0x08 << 24   # line printing, not template printing
    # flag 5
    RESET = 0x01 << 32          # the printer powered up or reset since the flags were last cleared
    BARCODE_ACCESSED = 0x02 << 32
    PRINTER_OPEN = 0x04 << 32   # the printer's chassis (drawer) is open
    XOFF = 0x08 << 32
    TOP_OF_FORM = 0x10 << 32
    VALIDATION_DONE = 0x20 << 32  # the last job's validation number (its barcode) is printed


# What `^C|^` clears (see the module's note).
LATCHED = (Flags.VALIDATION_DONE | Flags.BARCODE_ACCESSED | Flags.RESET | Flags.COMMAND_ERROR | Flags.DATA_ERROR
           | Flags.BUFFER_OVERFLOW | Flags.JOB_MEMORY_OVERFLOW)


class ProtocolError(ValueError):
    """Bytes that are not what TCL allows there; the message says which and where."""


@dataclass(frozen=True)
class Status:
    """A status reply: the printer's unit address, firmware version, flags and the last template it printed."""
    flags: Flags = Flags.NONE
    unit: str = "0"
    version: str = "CRP-0.1.0"
    template: str = " "   # Paycheck4 reports a space until the first print

    def __contains__(self, flag: Flags) -> bool:
        return bool(self.flags & flag)


def encode_status(status: Status) -> bytes:
    """The reply `*S|unit|version|f1|f2|f3|f4|f5|P<template>|*`, each flag byte 0x40 | its six bits."""
    for name, text, most in (("unit", status.unit, 3), ("version", status.version, 16)):
        if not re.fullmatch(rf"[\x20-\x7b\x7d\x7e]{{1,{most}}}", text):
            raise ProtocolError(f"status {name}: 1 to {most} printable ASCII characters but |, got {text!r}")
    if not re.fullmatch(r"[\x20-\x7b\x7d\x7e]", status.template):
        raise ProtocolError(f"status template: one printable ASCII character but |, got {status.template!r}")
    flags = bytes(_MARK | (int(status.flags) >> (8 * i)) & 0x3F for i in range(5))
    return (b"*S|" + status.unit.encode() + b"|" + status.version.encode() + b"|"
            + b"".join(bytes((f,)) + b"|" for f in flags) + b"P" + status.template.encode() + b"|*")


_NEED_MORE = None


def _parse_status(buf: bytes, i: int) -> tuple[Status | ProtocolError | None, int]:
    """Parse the reply starting at buf[i] ("*S|"): (Status, end), (ProtocolError, end) or (None, i): need more."""
    pos = i + 3
    texts: list[str] = []
    for name, most in (("unit address", 3), ("firmware version", 16)):
        end = buf.find(b"|", pos, pos + most + 1)
        if end < 0:
            if len(buf) <= pos + most:
                return _NEED_MORE, i
            return ProtocolError(f"status reply: its {name} is longer than {most} bytes"), pos
        text = buf[pos:end]
        if not text or any(not 0x20 <= b < 0x7F for b in text):
            return ProtocolError(f"status reply: its {name} {bytes(text)!r} is not printable ASCII"), end
        texts.append(text.decode("ascii"))
        pos = end + 1
    word = 0
    for n in range(5):
        if len(buf) < pos + 2:
            return _NEED_MORE, i
        byte, sep = buf[pos], buf[pos + 1]
        if byte & 0xC0 != _MARK:
            return ProtocolError(f"status reply: flag byte {n + 1} is 0x{byte:02X}, not 0x40..0x7F"), pos
        if sep != ord("|"):
            return ProtocolError(f"status reply: flag byte {n + 1} is followed by 0x{sep:02X}, not |"), pos + 1
        word |= (byte & 0x3F) << (8 * n)
        pos += 2
    if len(buf) < pos + 1:
        return _NEED_MORE, i
    template = " "
    if buf[pos] == ord("P"):  # P and the last template printed; a printer that leaves it out ends here
        if len(buf) < pos + 3:
            return _NEED_MORE, i
        if not 0x20 <= buf[pos + 1] < 0x7F or buf[pos + 1] == ord("|") or buf[pos + 2] != ord("|"):
            return ProtocolError(f"status reply: the template field {bytes(buf[pos:pos + 3])!r} is not P<t>|"), pos
        template = chr(buf[pos + 1])
        pos += 3
        if len(buf) < pos + 1:
            return _NEED_MORE, i
    if buf[pos] != ord("*"):
        return ProtocolError(f"status reply: ends with 0x{buf[pos]:02X}, not *"), pos
    return Status(Flags(word), texts[0], texts[1], template), pos + 1


def decode_status(frame: bytes) -> Status:
    """One whole status reply; anything else raises ProtocolError saying what is wrong."""
    if not frame.startswith(b"*S|"):
        raise ProtocolError(f"status reply: starts with {bytes(frame[:3])!r}, not *S|")
    result, end = _parse_status(frame, 0)
    if result is None:
        raise ProtocolError(f"status reply: cut short after {len(frame)} bytes")
    if isinstance(result, ProtocolError):
        raise result
    if end != len(frame):
        raise ProtocolError(f"status reply: {len(frame) - end} bytes after its closing *")
    return result


class StatusReader:
    """The host's end: bytes from the printer in, status replies (or a ProtocolError for each run of bytes that is
    not one) out, whatever the bytes are and however they are split."""

    def __init__(self) -> None:
        self._buf = b""

    def feed(self, data: bytes) -> list[Status | ProtocolError]:
        buf = self._buf + data
        out: list[Status | ProtocolError] = []
        while buf:
            start = buf.find(b"*S|")
            if start < 0:
                # Keep a tail that may be the start of "*S|"; the rest is noise.
                keep = 2 if buf.endswith(b"*S") else 1 if buf.endswith(b"*") else 0
                if len(buf) > keep:
                    out.append(ProtocolError(f"{len(buf) - keep} bytes that are no status reply: "
                                             f"{bytes(buf[:16])!r}"))
                buf = buf[len(buf) - keep:]
                break
            if start:
                out.append(ProtocolError(f"{start} bytes that are no status reply: {bytes(buf[:min(start, 16)])!r}"))
                buf = buf[start:]
            result, end = _parse_status(buf, 0)
            if result is None:
                if len(buf) > MAX_STATUS:
                    out.append(ProtocolError(f"status reply: longer than {MAX_STATUS} bytes"))
                    buf = buf[1:]
                    continue
                break
            out.append(result)
            # After a broken reply, look again from the byte after its *: a good reply may start inside it.
            buf = buf[end:] if isinstance(result, Status) else buf[1:]
        self._buf = buf
        return out


# ---- host commands ---------------------------------------------------------------------------------------------

def encode_field(text: str) -> str:
    """A print field as TCL carries it: ~, ^ and | as ~126, ~094, ~124 (Monaco), and likewise every other character
    outside printable ASCII up to 255 (~ddd, its decimal code); a character beyond 255 prints as ?."""
    out: list[str] = []
    for ch in text:
        code = ord(ch)
        if ch in "~^|" or (code < 0x20 or 0x7F <= code <= 0xFF):
            out.append(f"~{code:03d}")
        elif code > 0xFF:
            out.append("?")
        else:
            out.append(ch)
    return "".join(out)


def decode_field(text: str) -> str:
    """The inverse of encode_field; a ~ without three digits (of a code up to 255) raises ProtocolError."""
    def code(match: re.Match[str]) -> str:
        value = int(match.group(1))
        if value > 0xFF:
            raise ProtocolError(f"print field: ~{match.group(1)} is no character code (0..255)")
        return chr(value)

    bad = re.search(r"~(?![0-9]{3})", text)
    if bad:
        raise ProtocolError(f"print field: a ~ at {bad.start()} without three digits in {text!r}")
    return re.sub(r"~([0-9]{3})", code, text)


def _check_template(template: str) -> None:
    if not re.fullmatch(r"[0-9A-Za-z]", template):
        raise ProtocolError(f"template: one letter or digit, got {template!r}")


def encode_print(template: str, fields: Sequence[str], copies: int = 1) -> bytes:
    """`^P|template|copies|field1|...|fieldN|^`: print `copies` of a template with these fields."""
    _check_template(template)
    if not 1 <= copies <= 9999:
        raise ProtocolError(f"copies: 1 to 9999, got {copies}")
    body = "".join(encode_field(f) + "|" for f in fields)
    frame = f"^P|{template}|{copies}|{body}^".encode("ascii")
    if len(frame) > MAX_COMMAND:
        raise ProtocolError(f"print command: {len(frame)} bytes, more than a printer takes ({MAX_COMMAND})")
    return frame


@dataclass(frozen=True)
class StatusRequest:
    """ENQ, `^S|^` or `^Se|^`: answer with a status reply."""


@dataclass(frozen=True)
class Clear:
    """`^C|^` (what = ""), or `^C|j|^` (what = "j": the jam too), `^C|a|^` (all)."""
    what: str = ""


@dataclass(frozen=True)
class Print:
    template: str
    copies: int
    fields: tuple[str, ...]


@dataclass(frozen=True)
class FormFeed:
    pass


@dataclass(frozen=True)
class Flush:
    pass


@dataclass(frozen=True)
class TemplateMode:
    pass


@dataclass(frozen=True)
class Unknown:
    """A command frame the printer does not know (it sets COMMAND_ERROR)."""
    text: str


Command = Union[StatusRequest, Clear, Print, FormFeed, Flush, TemplateMode, Unknown]


def decode_print(frame: bytes) -> Print:
    """One whole `^P|...|^` frame; anything else raises ProtocolError."""
    try:
        text = frame.decode("ascii")
    except UnicodeDecodeError as exc:
        raise ProtocolError(f"print command: byte 0x{frame[exc.start]:02X} at {exc.start} is not ASCII") from exc
    if not (text.startswith("^P|") and text.endswith("|^")) or len(text) < 7:
        raise ProtocolError(f"print command: expected ^P|template|copies|...|^, got {text[:24]!r}")
    parts = text[3:-2].split("|")
    if len(parts) < 2:
        raise ProtocolError("print command: no copies field")
    _check_template(parts[0])
    if not re.fullmatch(r"[1-9][0-9]{0,3}", parts[1]):
        raise ProtocolError(f"print command: copies 1 to 9999, got {parts[1]!r}")
    return Print(parts[0], int(parts[1]), tuple(decode_field(f) for f in parts[2:]))


def _command(frame: bytes) -> Command | ProtocolError:
    if frame in (STATUS_COMMAND, b"^Se|^"):
        return StatusRequest()
    if frame == CLEAR:
        return Clear()
    if frame in (CLEAR_JAM, b"^C|a|^"):
        return Clear(chr(frame[3]))
    if frame == FORM_FEED:
        return FormFeed()
    if frame == FLUSH_ALL:
        return Flush()
    if frame.startswith(b"^P|"):
        try:
            return decode_print(frame)
        except ProtocolError as exc:
            return exc
    return Unknown(frame.decode("ascii", "replace"))


class CommandReader:
    """The printer's end: bytes from the host in, commands (or a ProtocolError for bytes that are none) out."""

    def __init__(self) -> None:
        self._buf = b""

    def feed(self, data: bytes) -> list[Command | ProtocolError]:
        buf = self._buf + data
        out: list[Command | ProtocolError] = []
        noise = 0
        i = 0
        while i < len(buf):
            byte = buf[i]
            if byte == ENQ:
                out.append(StatusRequest())
                i += 1
            elif byte in (0x0D, 0x0A, 0x00):  # line endings and padding between commands
                i += 1
            elif byte == 0x1B and buf.startswith(TEMPLATE_MODE[:len(buf) - i], i):
                if len(buf) - i < len(TEMPLATE_MODE):
                    break
                out.append(TemplateMode())
                i += len(TEMPLATE_MODE)
            elif byte == ord("^"):
                end = buf.find(b"^", i + 1)
                if end < 0:
                    if len(buf) - i > MAX_COMMAND:
                        out.append(ProtocolError(f"command longer than {MAX_COMMAND} bytes"))
                        i = len(buf)
                    break
                out.append(_command(buf[i:end + 1]))
                i = end + 1
            else:
                noise += 1
                i += 1
                if i == len(buf) or buf[i] in (ENQ, 0x1B, ord("^")):
                    out.append(ProtocolError(f"{noise} bytes outside any command"))
                    noise = 0
        if noise:
            out.append(ProtocolError(f"{noise} bytes outside any command"))
        self._buf = buf[i:]
        return out
