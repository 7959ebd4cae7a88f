"""Card shoe sensors: debounced switches and the card index reader module, behind small interfaces.

The index reader is a separate optical module (it reads the corner index of each card in the shoe's throat)
that sends one ASCII line per card read over its own UART: the card as rank and suit ("AS", "TD", "JK" for a
joker) or "CUT" for the cut card, "ERR" when it saw a card it could not read.
"""


class Debounced:
    """A switch input, active low (pulled up), reported only after it has been stable for `stable_ms`."""

    def __init__(self, pin, clock, stable_ms=5, active_low=True):
        self.pin = pin
        self.clock = clock
        self.stable_ms = stable_ms
        self.active_low = active_low
        self.state = self._raw()
        self._candidate = self.state
        self._since = clock.ticks_ms()
        self.changed_at = self._since

    def _raw(self):
        v = self.pin.value()
        return (not v) if self.active_low else bool(v)

    def update(self):
        """Sample the pin; returns True when the debounced state has just changed."""
        raw = self._raw()
        now = self.clock.ticks_ms()
        if raw != self._candidate:
            self._candidate = raw
            self._since = now
            return False
        if raw != self.state and self.clock.ticks_diff(now, self._since) >= self.stable_ms:
            self.state = raw
            self.changed_at = now
            return True
        return False


_RANKS = "23456789TJQKA"
_SUITS = "CDHS"
CUT = -1
UNREADABLE = -2


def card_byte(text):
    """'AS' -> 51, 'JK' -> 52, 'CUT' -> CUT, anything unreadable -> UNREADABLE."""
    text = text.strip().upper()
    if text == "JK":
        return 52
    if text == "CUT":
        return CUT
    if text.startswith("10"):
        text = "T" + text[2:]
    if len(text) == 2 and text[0] in _RANKS and text[1] in _SUITS:
        return _RANKS.index(text[0]) * 4 + _SUITS.index(text[1])
    return UNREADABLE


class IndexReader:
    """Lines from the index reader module's UART; poll() returns the card byte of each complete line."""

    def __init__(self, uart, max_line=16):
        self.uart = uart
        self.max_line = max_line
        self._line = bytearray()

    def poll(self):
        out = []
        n = self.uart.any()
        if not n:
            return out
        for b in self.uart.read(n) or b"":
            if b in (10, 13):
                if self._line:
                    try:
                        out.append(card_byte(bytes(self._line).decode()))
                    except UnicodeError:
                        out.append(UNREADABLE)
                    self._line = bytearray()
            elif len(self._line) < self.max_line:
                self._line.append(b)
            else:
                self._line = bytearray()  # a line that long is noise
                out.append(UNREADABLE)
        return out
