"""What seals a journal from outside its database: the machine's journal key (made once, read and checked: its
MACs chain the rows) and the anchor (the last committed seq and MAC, kept in a small file beside the journal), and
the errors that refuse a journal."""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path


class JournalIntegrityError(RuntimeError):
    """The journal is damaged, incomplete, forged or cannot be checked; the service must not run on it."""


class JournalKeyError(JournalIntegrityError):
    """The journal key is missing, unreadable, malformed, too widely readable, or cannot be made."""


# ---------------------------------------------------------------------------------------------- the key

def default_key_file() -> Path:
    """Where a config that names no journal key keeps it: the user's state folder (demos, tests, --sim);
    a live service names /etc/croupier/journal.key, made by deploy/install.sh."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "croupier" / "journal.key"


def default_anchor(journal: Path) -> Path:
    """A journal's anchor when its config names none: beside it, `<name>.anchor` (not `<name>.journal-*`, so
    removing a journal's WAL by a glob does not take the anchor with it)."""
    anchor = journal.with_suffix(".anchor")
    return anchor if anchor != journal else journal.with_name(journal.name + ".anchor")


def make_key(path: Path) -> bytes:
    """Make a new 256-bit journal key at `path` (0600, written once, never replaced); return it. A key
    already there (another process made it first) is returned instead."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    key = secrets.token_bytes(32)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, key.hex().encode() + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)  # atomic, and never over an existing key
    except FileExistsError:
        os.unlink(tmp)
        loaded = read_key(path)
        assert loaded is not None
        return loaded
    os.unlink(tmp)
    fsync_dir(path.parent)
    return key


def read_key(path: Path) -> bytes | None:
    """The key at `path`, or None if there is no file; a key anyone but its owner may read is refused."""
    try:
        st = path.stat()
        text = path.read_text(encoding="ascii").strip()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except PermissionError:
        raise JournalKeyError(f"journal key {path}: permission denied (it is readable by the service user alone: "
                              f"run this as that user, e.g. sudo -u croupier)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise JournalKeyError(f"journal key {path}: cannot read it: {exc}") from None
    if st.st_mode & 0o077:
        raise JournalKeyError(f"journal key {path} may be read by others (mode {st.st_mode & 0o777:04o}): "
                              f"chmod 0400 {path}")
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != 32:
        raise JournalKeyError(f"journal key {path} is malformed (expected 64 hex digits)")
    return key


def key_id(key: bytes) -> str:
    """A short public name of a key (a wrong key file is named as such, not as 'row 1 altered')."""
    return hashlib.sha256(b"croupier-journal-key-id\x1f" + key).hexdigest()[:16]


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------------------------- the anchor

class Anchor:
    """The last committed (seq, MAC), outside the database, in two copies written in turn, each with its own MAC.

    A commit rewrites one copy in place (one pwrite and one fdatasync; no rename, no directory sync), the
    other copy still holding the commit before: a write torn by a power cut leaves one copy that verifies.
    The copies sit 4 KiB apart, never in one block."""

    SLOT = 4096
    MAGIC = "croupier-anchor-1"

    def __init__(self, path: Path, table_id: str, mac: hmac.HMAC) -> None:
        self.path, self.table_id, self._mac = path, table_id, mac
        self._fd: int | None = None
        self._next_slot = 0

    def _slot_mac(self, seq: int, row_mac: str) -> str:
        h = self._mac.copy()
        h.update(f"{self.MAGIC}\x1f{self.table_id}\x1f{seq}\x1f{row_mac}".encode())
        return h.hexdigest()

    def _encode(self, seq: int, row_mac: str) -> bytes:
        return f"{self.MAGIC} {seq} {row_mac} {self._slot_mac(seq, row_mac)}\n".encode()

    def read(self) -> tuple[int, str] | None:
        """The newest copy that verifies, or None when there is no anchor file."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise JournalIntegrityError(f"anchor {self.path}: cannot read it: {exc}") from None
        best: tuple[int, str, int] | None = None
        for slot in (0, 1):
            chunk = data[slot * self.SLOT:(slot + 1) * self.SLOT].split(b"\n", 1)[0]
            try:
                magic, seq_text, row_mac, slot_mac = chunk.decode("ascii").split(" ")
                seq = int(seq_text)
            except ValueError:  # a torn or damaged copy (UnicodeDecodeError is a ValueError)
                continue
            if magic == self.MAGIC and seq >= 0 and hmac.compare_digest(slot_mac, self._slot_mac(seq, row_mac)):
                if best is None or seq > best[0]:
                    best = (seq, row_mac, slot)
        if best is None:
            raise JournalIntegrityError(f"anchor {self.path} is damaged or was not made with this journal key "
                                        f"(neither copy verifies): the journal's last committed row is unknown")
        self._next_slot = 1 - best[2]
        return best[0], best[1]

    def create(self, seq: int, row_mac: str) -> None:
        """Make the anchor file (both copies), atomically: a new file renamed into place."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        line = self._encode(seq, row_mac)
        with open(tmp, "wb") as fh:
            fh.write(line.ljust(self.SLOT, b"\0") + line.ljust(self.SLOT, b"\0"))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)
        fsync_dir(self.path.parent)
        self._next_slot = 0

    def write(self, seq: int, row_mac: str) -> None:
        """Record a commit: one copy rewritten in place and fsynced (the other keeps the commit before)."""
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY)
        os.pwrite(self._fd, self._encode(seq, row_mac).ljust(self.SLOT, b"\0"), self._next_slot * self.SLOT)
        os.fdatasync(self._fd)
        self._next_slot = 1 - self._next_slot

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
