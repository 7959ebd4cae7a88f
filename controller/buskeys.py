"""Who may use the bus: the roles a command key is authorised for, and the CURVE key pairs (made, loaded)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Role:
    """Who a command key belongs to: the dealer, one spot's player terminal, or operations; at a cabinet the
    attendant (and "player", the cabinet's own buttons, never a bus key); at a progressive link controller,
    one cabinet of the link."""

    kind: str             # "dealer", "spot", "ops", "pit" (a supervisor), "attendant", "player", "cabinet"
    spot: int | None = None
    name: str | None = None  # the cabinet id of a "cabinet" role

    def __str__(self) -> str:
        if self.kind == "spot":
            return f"spot:{self.spot}"
        return f"cabinet:{self.name}" if self.kind == "cabinet" else self.kind


def parse_role(text: str) -> Role:
    if text in ("dealer", "ops", "attendant", "pit"):
        return Role(text)
    if text.startswith("spot:") and text[5:].isdigit() and int(text[5:]) >= 1:
        return Role("spot", int(text[5:]))
    if text.startswith("cabinet:") and text[8:] and all(c.isalnum() or c in "-_" for c in text[8:]):
        return Role("cabinet", name=text[8:])
    raise ValueError(f"unknown role {text!r} (roles: dealer, ops, pit, spot:N, attendant, cabinet:ID)")


def create_keys(folder: str | Path, name: str) -> tuple[Path, Path]:
    """A CURVE key pair NAME.key (public, to give to the other side) and NAME.key_secret (keep private)."""
    import zmq.auth

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    public, secret = zmq.auth.create_certificates(str(folder), name)
    Path(secret).chmod(0o600)
    return Path(public), Path(secret)


def load_public_key(path: str | Path) -> bytes:
    import zmq.auth

    public, _ = zmq.auth.load_certificate(str(path))
    return public


def load_secret_keys(path: str | Path) -> tuple[bytes, bytes]:
    import zmq.auth

    public, secret = zmq.auth.load_certificate(str(path))
    if secret is None:
        raise ValueError(f"{path} holds no secret key")
    return public, secret


def load_client_roles(entries: list[tuple[str | Path, str]]) -> dict[bytes, Role]:
    """Map each client's public key (z85) to its role, from (key file, role) pairs of the config."""
    roles: dict[bytes, Role] = {}
    for path, role in entries:
        key = load_public_key(path)
        if key in roles:
            raise ValueError(f"{path}: the same key is listed twice")
        roles[key] = parse_role(role)
    return roles
