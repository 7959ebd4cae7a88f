"""What several `croupier` commands share: reading a config file as a user error, logging, the screens' URLs."""

from __future__ import annotations

import logging
import socket
from typing import Any

from controller.cli import CliError


def load(path: str) -> Any:
    """The config file at `path` (a table's, cabinet's, link's...); a bad one is a CliError naming the key."""
    from controller.config import ConfigError, load_config

    try:
        return load_config(path)
    except ConfigError as exc:
        raise CliError(str(exc)) from None


def setup_logging(level: str) -> None:
    logging.basicConfig(level=getattr(logging, level.upper(), logging.INFO),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def urls(bridge: Any, settings: Any, host: str | None = None) -> list[tuple[str, str]]:
    """(what, URL) for each table's pages; the dealer URL carries the token when it was made up at start."""
    shown = host or (bridge.host if bridge.host not in ("0.0.0.0", "::", "") else socket.gethostname())
    base = f"http://{shown}:{bridge.port}"
    out = []
    token = settings.dealer_token if settings.token_generated else "<token from [screens].dealer_token_file>"
    for sid, source in bridge.sources.items():
        if source.kind == "cabinet":
            out.append(("cabinet screen", f"{base}/cabinet/{sid}"))
            out.append(("attendant", f"{base}/cabinet/{sid}/attendant?token={token}"))
            continue
        out.append(("players", f"{base}/table/{sid}"))
        out.append(("spot 1's own screen", f"{base}/table/{sid}/spot/1"))
        out.append(("dealer", f"{base}/dealer/{sid}?token={token}"))
    out.append(("health", f"{base}/healthz"))
    return out


def print_urls(bridge: Any, settings: Any, lead: str = "screens:") -> None:
    for i, (what, url) in enumerate(urls(bridge, settings)):
        print(f"{lead if i == 0 else ' ' * len(lead)} {url:<60} ({what})", flush=True)
