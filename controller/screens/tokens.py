"""The staff pages' tokens (dealer, pit, floor): wrong tries limited per address and overall, the token a request offers, and the move of one from the address into a cookie."""

from __future__ import annotations

import hashlib
import logging
import math
import time
from collections import deque
from typing import Callable

from aiohttp import web

__all__ = ["TokenTries", "offered_digest", "token_to_cookie", "refuse_other_origin"]

log = logging.getLogger("croupier.screens")


class TokenTries:
    """Wrong dealer tokens, counted per client address and overall over a sliding window: past `per_peer` from
    one address, or `overall` from all of them, no token is even compared until the oldest wrong try of the
    window has aged out (an answer of 429 with Retry-After), so guessing the token takes years, not seconds.
    The overall limit also holds back a right token (from a fresh address, or a dealer screen reconnecting)
    while it lasts: for at most `window` seconds after a storm of wrong ones, which the log reports."""

    def __init__(self, per_peer: int = 10, overall: int = 100, window: float = 60.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if per_peer < 1 or overall < per_peer or not window > 0:
            raise ValueError(f"token tries need 1 <= per_peer <= overall and a window > 0, got {per_peer}, "
                             f"{overall}, {window}")
        self.per_peer, self.overall, self.window, self.clock = per_peer, overall, window, clock
        self._all: deque[tuple[float, str]] = deque()   # (when, address) of every wrong try in the window
        self._peers: dict[str, int] = {}                # address -> its wrong tries in the window
        self.refused = 0                                 # tries answered 429, for the figures and the tests

    def _expire(self, now: float) -> None:
        while self._all and self._all[0][0] <= now - self.window:
            _, peer = self._all.popleft()
            self._peers[peer] -= 1
            if not self._peers[peer]:
                del self._peers[peer]

    def wait(self, peer: str) -> float:
        """Seconds before `peer` may try a token again (0: now)."""
        now = self.clock()
        self._expire(now)
        if len(self._all) >= self.overall:
            return self._all[0][0] + self.window - now
        if self._peers.get(peer, 0) >= self.per_peer:
            return next(t for t, p in self._all if p == peer) + self.window - now
        return 0.0

    def failed(self, peer: str) -> str | None:
        """Count a wrong try; when it is the one that reaches a limit, what is shut out now (for the log)."""
        self._all.append((self.clock(), peer))
        self._peers[peer] = self._peers.get(peer, 0) + 1
        if len(self._all) == self.overall:
            return f"{self.overall} wrong tries in {self.window:.0f} s from all addresses: every address"
        if self._peers[peer] == self.per_peer:
            return f"{self.per_peer} wrong tries in {self.window:.0f} s from {peer}: that address"
        return None


def offered_digest(request: web.Request, tries: TokenTries, cookie: str, what: str) -> tuple[str, bytes]:
    """The request's address and the SHA-256 digest of the token it offers (its `cookie`, ?token= or Bearer):
    compared as digests, the same length whatever is offered, so timing tells nothing of a token. While `tries`
    shuts the address out, 429 with Retry-After ("too many wrong `what` tokens") and nothing is compared."""
    peer = str(request.remote or "unknown")
    wait = tries.wait(peer)
    if wait > 0:
        tries.refused += 1
        seconds = max(1, math.ceil(wait))
        raise web.HTTPTooManyRequests(text=f"too many wrong {what} tokens: try again in {seconds} s",
                                      headers={"Retry-After": str(seconds)})
    offered = request.cookies.get(cookie) or request.query.get("token") or ""
    auth = request.headers.get("Authorization", "")
    if auth.startswith("Bearer "):
        offered = auth[7:]
    return peer, hashlib.sha256(offered.encode()).digest()


def token_to_cookie(request: web.Request, cookie: str, path: str, location: str | None = None) -> None:
    """A token in the address (?token=) becomes an HttpOnly `cookie` only this site sees and the page is asked
    for again at `location` (default: its own path) without it: the secret stays out of the address bar and
    history."""
    if "token" in request.query:
        response = web.HTTPSeeOther(location or request.path)
        response.set_cookie(cookie, request.query["token"], httponly=True, samesite="Strict", path=path)
        raise response


def refuse_other_origin(request: web.Request, what: str) -> None:
    """403 for a WebSocket opened by a page of another site riding the kiosk's cookie (cross-site WebSocket
    hijacking)."""
    origin = request.headers.get("Origin")
    if origin is not None and origin.split("://", 1)[-1] != request.host:
        log.warning("%s refused: origin %s is not %s", what, origin, request.host)
        raise web.HTTPForbidden(text=f"cross-origin {what} refused")
