"""The SAS line, EGM side: CRC, framing of the host's polls (by wake-up bit or by protocol knowledge), implied acknowledgement and chirping.

`controller/sas.py` answers the polls from the cabinet's journal; this package knows only bytes and timing.
The host side (`controller/sas_host.py`) is written apart on purpose and shares no code with it.
"""

from drivers.sas.crc import crc16, rom_crc16
from drivers.sas.framing import CrcError, Framer, GeneralPoll, LongPoll, Unknown, poll_length
from drivers.sas.line import SasLine, open_line

__all__ = ["crc16", "rom_crc16", "Framer", "GeneralPoll", "LongPoll", "Unknown", "CrcError", "poll_length",
           "SasLine", "open_line"]
