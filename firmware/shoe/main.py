"""Card shoe reader firmware for the Raspberry Pi Pico (RP2040): reads each drawn card and reports it to the host.

Runs at boot (MicroPython runs main.py). Wiring and UART settings: README.md beside this file. The Shoe class
takes its hardware as arguments, so the tests drive it on CPython through fake `machine` and `utime` modules.
"""

import machine
import utime

import proto
import sensors
from store import Store

FIRMWARE = (1, 0, 0)
SHOE_ID = 1

# Wiring (see README.md).
HOST_UART, HOST_TX, HOST_RX, HOST_BAUD = 0, 0, 1, 115200
READER_UART, READER_TX, READER_RX, READER_BAUD = 1, 4, 5, 9600
PIN_DRAW, PIN_LID, PIN_LOW, PIN_EMPTY, PIN_LOCK, PIN_LED = 10, 11, 12, 13, 14, 25

HEARTBEAT_MS = 500
DEBOUNCE_MS = 5
JAM_MS = 3000  # the exit switch held this long means a card is stuck in the throat
READ_WINDOW_MS = 2000  # a card read longer ago than this is not the card that just left


class Shoe:
    """The reader's logic: sensors in, protocol messages out. Call step() in a loop."""

    def __init__(self, host, reader, draw, lid, low, empty, lock_out, led, store, clock, serial,
                 shoe_id=SHOE_ID):
        self.host, self.reader, self.store, self.clock = host, reader, store, clock
        self.draw, self.lid, self.low, self.empty = draw, lid, low, empty
        self.lock_out, self.led = lock_out, led
        self.serial, self.shoe_id = serial, shoe_id
        self.locked = False
        self.cut = False
        self.jam = False
        self.pending = None  # (card byte, ticks) of the last card the index reader saw
        self.clock_offset_ms = None
        self.started = clock.ticks_ms()
        self.beat_at = None
        self.reported = None
        store.next_boot()
        self.link = proto.DeviceLink(clock, self._identify)
        self.link.identify()
        self._apply_lock()

    def _identify(self, tx_base):
        return proto.pack("IDENTIFY", {
            "kind": 1, "protocol": proto.PROTOCOL_VERSION, "fw_major": FIRMWARE[0], "fw_minor": FIRMWARE[1],
            "fw_patch": FIRMWARE[2], "shoe_id": self.shoe_id, "tx_base": tx_base, "boot": self.store.boot,
            "draws": self.store.draws, "last_card": self.store.last_card, "serial": self.serial})

    def flags(self):
        f = 0
        if self.lid.state:
            f |= proto.LID_OPEN
        if self.low.state:
            f |= proto.CARDS_LOW
        if self.cut:
            f |= proto.CUT_CARD
        if self.empty.state:
            f |= proto.EMPTY
        if self.jam:
            f |= proto.JAM
        if self.locked:
            f |= proto.LOCKED
        return f

    def step(self):
        now = self.clock.ticks_ms()
        n = self.host.any()
        if n:
            for type_, fields in self.link.receive(self.host.read(n) or b""):
                self._command(type_, fields)
        for card in self.reader.poll():
            if card == sensors.CUT:
                self.cut = True
            else:
                self.pending = (card, now)
        if self.draw.update() and self.draw.state:
            self._drawn(now)
        self.jam = self.draw.state and self.clock.ticks_diff(now, self.draw.changed_at) >= JAM_MS
        self.lid.update()
        self.low.update()
        self.empty.update()
        self._report()
        if self.beat_at is None or self.clock.ticks_diff(now, self.beat_at) >= HEARTBEAT_MS:
            self.beat_at = now
            uptime = self.clock.ticks_diff(now, self.started) & 0xFFFFFFFF
            self.link.send_unreliable(proto.T_HEARTBEAT, proto.pack("HEARTBEAT", {"uptime_ms": uptime,
                                                                                  "flags": self.flags()}))
        self.link.poll()
        for frame in self.link.take():
            self.host.write(frame)
        self.led.value(0 if self.link.idle() else 1)  # lit while a message waits for its ACK

    def _drawn(self, now):
        card, at = self.pending if self.pending else (sensors.UNREADABLE, now)
        self.pending = None
        if card == sensors.UNREADABLE or self.clock.ticks_diff(now, at) > READ_WINDOW_MS:
            draw = self._count(proto.NO_CARD)
            self._send(proto.T_ERROR, proto.pack("ERROR", {"code": proto.ERR_UNREADABLE,
                                                           "text": "draw %d: card not read" % draw}))
            return
        draw = self._count(card)
        self._send(proto.T_CARD, proto.pack("CARD", {"shoe_id": self.shoe_id, "draw": draw, "card": card}))

    def _count(self, card):
        try:
            return self.store.drawn(card)
        except OSError:
            # The card is still reported from the counter in RAM; the host hears the flash failed.
            self._send(proto.T_ERROR, proto.pack("ERROR", {"code": proto.ERR_STORAGE, "text": "flash write failed"}))
            return self.store.draws

    def _send(self, type_, payload):
        if not self.link.send(type_, payload):
            self.link.send_unreliable(proto.T_ERROR, proto.pack("ERROR", {"code": proto.ERR_OVERFLOW,
                                                                          "text": "queue full"}))

    def _command(self, type_, fields):
        if type_ == proto.T_LOCK:
            self.locked = bool(fields["locked"])
            self._apply_lock()
            self._report(True)
        elif type_ == proto.T_RESET:
            try:
                self.store.reset()
            except OSError:
                self._send(proto.T_ERROR, proto.pack("ERROR", {"code": proto.ERR_STORAGE,
                                                               "text": "flash write failed"}))
            self.cut = False
            self._report(True)
        elif type_ == proto.T_STATUS:
            self._report(True)
        elif type_ == proto.T_TIME:
            self.clock_offset_ms = fields["unix_ms"] - self.clock.ticks_ms()

    def _apply_lock(self):
        self.lock_out.value(1 if self.locked else 0)

    def _report(self, always=False):
        flags = self.flags()
        if always or flags != self.reported:
            self.reported = flags
            self._send(proto.T_STATE, proto.pack("STATE", {"shoe_id": self.shoe_id, "flags": flags,
                                                           "draws": self.store.draws}))


def serial_number():
    return "PICO-" + "".join("%02X" % b for b in machine.unique_id())


def build():
    """The Shoe on the real board's pins."""
    Pin = machine.Pin

    def switch(pin, active_low=True):
        return sensors.Debounced(Pin(pin, Pin.IN, Pin.PULL_UP), utime, DEBOUNCE_MS, active_low)

    host = machine.UART(HOST_UART, baudrate=HOST_BAUD, bits=8, parity=None, stop=1,
                        tx=Pin(HOST_TX), rx=Pin(HOST_RX), rxbuf=1024)
    reader = sensors.IndexReader(machine.UART(READER_UART, baudrate=READER_BAUD, tx=Pin(READER_TX),
                                              rx=Pin(READER_RX)))
    return Shoe(host, reader, draw=switch(PIN_DRAW), lid=switch(PIN_LID, active_low=False), low=switch(PIN_LOW),
                empty=switch(PIN_EMPTY), lock_out=Pin(PIN_LOCK, Pin.OUT, value=0), led=Pin(PIN_LED, Pin.OUT),
                store=Store(), clock=utime, serial=serial_number())


def main():
    shoe = build()
    while True:
        shoe.step()
        utime.sleep_ms(1)


if __name__ == "__main__":
    main()
