"""Flash-backed counters of the shoe reader: draw counter, last card and boot counter survive resets and power loss.

Stored as one line of text in a small file on the board's littlefs filesystem, written to a temporary file and
renamed over the old one, so a power cut during a write leaves either the old or the new record, never a torn
one. Wear: littlefs spreads writes over its blocks; one write per card drawn wears a 1.4 MB filesystem's
blocks (100,000 erase cycles each) after roughly 30 million draws, years of a busy table.
"""

try:
    import os
except ImportError:  # pragma: no cover - MicroPython without the os alias
    import uos as os


class Store:
    def __init__(self, path="shoe.dat"):
        self.path = path
        self.draws = 0
        self.last_card = 0xFF
        self.boot = 0
        self.load()

    def load(self):
        for path in (self.path, self.path + ".tmp"):
            try:
                with open(path) as fh:
                    draws, last, boot = (int(x) for x in fh.read().split(","))
            except (OSError, ValueError):
                continue
            self.draws, self.last_card, self.boot = draws, last, boot
            return True
        return False

    def save(self):
        """Write the record; raises OSError if the flash write fails (the caller reports ERROR STORAGE)."""
        tmp = self.path + ".tmp"
        with open(tmp, "w") as fh:
            fh.write("%d,%d,%d" % (self.draws, self.last_card, self.boot))
        os.rename(tmp, self.path)

    def next_boot(self):
        self.boot = (self.boot + 1) & 0xFFFFFFFF
        self.save()
        return self.boot

    def drawn(self, card):
        self.draws = (self.draws + 1) & 0xFFFFFFFF or 1
        self.last_card = card
        self.save()
        return self.draws

    def reset(self):
        self.draws = 0
        self.last_card = 0xFF
        self.save()
