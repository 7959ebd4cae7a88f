"""A site's floor credentials (`croupier floor credentials`): a site CA, a TLS certificate per machine, node and floor service, and each machine's NATS permissions.

A machine's credential is a folder, `<site>/machines/<id>/` (ca.pem, cert.pem, key.pem): its `[floor]
credentials` names the folder, and its client certificate is its identity on the floor. The servers require
and verify a certificate of the site CA from every client and map it to a user by its subject
(`verify_and_map`): the user `CN=<id>`. `<site>/authorization.conf`, rewritten after each machine, lists the
users and what each may do; every node's config includes it (deploy/floor/).

What a machine may do (machine_permissions): publish its own journal subject and ask the journal stream for its
subject's last message (the replicator's and the start check's `$JS.API.STREAM.MSG.GET.CROUPIER_JOURNAL`),
receive replies on `_INBOX.>`; a cabinet on a link also publishes its contributions and hits on its own
progressive subject `croupier.link.<link>.<id>` and follows its link's messages (link_subjects), and
writes nothing else of the link.
Every other subject is refused by the server. The floor service's user has no restriction (it makes the
stream and reads every machine); `croupier floor restore` runs with its credential.

Certificates come from the `openssl` command (OpenSSL 1.1.1 or 3): EC P-256 keys, made on this machine, keys
mode 0600. The CA's key stays in `<site>/ca/`: keep it off the floor.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import ssl
import subprocess
import tempfile
from pathlib import Path
from typing import Iterable

from controller.floor.progressive_fold import STREAM as PROGRESSIVE_STREAM  # a cabinet publishes its link's open,
from controller.floor.progressive_fold import SUBJECT_PREFIX as PROGRESSIVE_PREFIX  # contributions and hits there
from controller.floor.wire import STREAM, subject_for

__all__ = ["machine_permissions", "user_block", "authorization_conf", "ensure_ca", "issue", "add_machine",
           "add_service", "add_server", "tls_context", "CredentialsError", "KINDS", "link_subjects"]

KINDS = ("table", "cabinet", "link")
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_HOST = re.compile(r"[A-Za-z0-9.:-]{1,253}")


class CredentialsError(ValueError):
    """A credential that cannot be made: one line naming what is wrong."""




def link_subjects(link: str, cabinet: str) -> list[str]:
    """What a cabinet on a link may publish beyond its journal: its own progressive subject, the stream's info
    (its probe of the floor), and an ephemeral consumer filtered to its link's messages and its next messages
    (how it learns from the stream's order whether its hit won). Not: another cabinet's subject, another link's
    consumer, deleting consumers (its own expire by themselves)."""
    return [f"{PROGRESSIVE_PREFIX}{link}.{cabinet}", f"$JS.API.STREAM.INFO.{PROGRESSIVE_STREAM}",
            f"$JS.API.CONSUMER.CREATE.{PROGRESSIVE_STREAM}.*.{PROGRESSIVE_PREFIX}{link}.*",
            f"$JS.API.CONSUMER.MSG.NEXT.{PROGRESSIVE_STREAM}.*"]


def machine_permissions(machine: str, kind: str, link: str | None = None) -> dict[str, list[str]]:
    """What a machine's user may publish and subscribe to (pure)."""
    if kind not in KINDS:
        raise CredentialsError(f"kind {kind!r}: one of {', '.join(KINDS)}")
    if link is not None and kind != "cabinet":
        raise CredentialsError(f"--link: only a cabinet plays on a link ({machine} is a {kind})")
    if link is not None and not _NAME.fullmatch(link):
        raise CredentialsError(f"link id {link!r}: 1 to 64 ASCII letters, digits, - and _")
    publish = [subject_for(machine), f"$JS.API.STREAM.MSG.GET.{STREAM}"]
    if link is not None:
        publish += link_subjects(link, machine)
    return {"publish": publish, "subscribe": ["_INBOX.>"]}


def user_block(user: str, permissions: dict[str, list[str]] | None) -> str:
    """One user of the authorization's users list, in nats-server's config syntax (pure)."""
    if permissions is None:
        return f'  {{ user: "{user}" }}\n'
    parts = ", ".join(f'{what}: {{ allow: [{", ".join(chr(34) + s + chr(34) for s in subjects)}] }}'
                      for what, subjects in permissions.items())
    return f'  {{ user: "{user}", permissions: {{ {parts} }} }}\n'


def authorization_conf(blocks: Iterable[str]) -> str:
    """The authorization section from every user's block (pure)."""
    return ("# Written by `croupier floor credentials`: one user per client certificate (verify_and_map).\n"
            "authorization {\n  users = [\n" + "".join(blocks) + "  ]\n}\n")


def _openssl(*args: str, cwd: Path) -> None:
    exe = shutil.which("openssl")
    if exe is None:
        raise CredentialsError("no openssl command: apt-get install openssl (it makes the site's certificates)")
    done = subprocess.run([exe, *args], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise CredentialsError(f"openssl {args[0]} failed: {done.stderr.strip().splitlines()[-1:]}")


def ensure_ca(site: Path, name: str = "croupier site CA") -> Path:
    """The site's CA (made on first use): its folder, holding ca.pem and ca.key (mode 0600)."""
    ca = site / "ca"
    if (ca / "ca.pem").exists() and (ca / "ca.key").exists():
        return ca
    ca.mkdir(parents=True, exist_ok=True)
    os.chmod(ca, 0o700)
    _openssl("req", "-x509", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", "ca.key", "-out", "ca.pem", "-days", "3650", "-subj", f"/O=croupier/CN={name}",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
             cwd=ca)
    os.chmod(ca / "ca.key", 0o600)
    return ca


def issue(site: Path, folder: Path, common_name: str, *, hosts: tuple[str, ...] = (), server: bool = False,
          days: int = 825) -> Path:
    """A key and a certificate of the site CA in `folder` (ca.pem, cert.pem, key.pem), subject CN=common_name; a
    server's also names its `hosts` (DNS names or IP addresses) and serves TLS as well as presenting it."""
    for host in hosts:
        if not _HOST.fullmatch(host):
            raise CredentialsError(f"host {host!r} is not a DNS name or an IP address")
    ca = ensure_ca(site)
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    usage = "serverAuth,clientAuth" if server else "clientAuth"
    ext = ["[v3]", "basicConstraints=critical,CA:FALSE", "keyUsage=critical,digitalSignature,keyEncipherment",
           f"extendedKeyUsage={usage}"]
    if hosts:
        sans = [f"IP:{h}" if re.fullmatch(r"[0-9.]+|[0-9a-fA-F:]+:[0-9a-fA-F:]*", h) else f"DNS:{h}" for h in hosts]
        ext.append("subjectAltName=" + ",".join(sans))
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        work = Path(tmp)
        (work / "ext.cnf").write_text("\n".join(ext) + "\n")
        _openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                 "-keyout", "key.pem", "-out", "req.csr", "-subj", f"/CN={common_name}", cwd=work)
        _openssl("x509", "-req", "-in", "req.csr", "-CA", str(ca / "ca.pem"), "-CAkey", str(ca / "ca.key"),
                 "-CAserial", str(ca / "ca.srl"), "-CAcreateserial", "-days", str(days), "-out", "cert.pem",
                 "-extfile", "ext.cnf", "-extensions", "v3", cwd=work)
        os.chmod(work / "key.pem", 0o600)
        os.replace(work / "key.pem", folder / "key.pem")
        os.replace(work / "cert.pem", folder / "cert.pem")
    shutil.copyfile(ca / "ca.pem", folder / "ca.pem")
    return folder


def _write_authorization(site: Path) -> Path:
    users = sorted((site / "users").glob("*.conf"))
    path = site / "authorization.conf"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(authorization_conf(p.read_text() for p in users))
    os.replace(tmp, path)
    return path


def add_machine(site: Path, machine: str, kind: str, link: str | None = None) -> Path:
    """A machine's credential folder and its user in the site's authorization.conf."""
    if not _NAME.fullmatch(machine):
        raise CredentialsError(f"machine id {machine!r}: 1 to 64 ASCII letters, digits, - and _")
    permissions = machine_permissions(machine, kind, link)
    folder = issue(site, site / "machines" / machine, machine)
    (site / "users").mkdir(parents=True, exist_ok=True)
    (site / "users" / f"{machine}.conf").write_text(user_block(f"CN={machine}", permissions))
    _write_authorization(site)
    return folder


def add_service(site: Path, name: str = "floor-service") -> Path:
    """The floor service's credential (no restriction: it makes the stream and reads every machine)."""
    if not _NAME.fullmatch(name):
        raise CredentialsError(f"service name {name!r}: 1 to 64 ASCII letters, digits, - and _")
    folder = issue(site, site / "services" / name, name)
    (site / "users").mkdir(parents=True, exist_ok=True)
    (site / "users" / f"{name}.conf").write_text(user_block(f"CN={name}", None))
    _write_authorization(site)
    return folder


def add_server(site: Path, name: str, hosts: tuple[str, ...]) -> Path:
    """A node's certificate (TLS to clients and between nodes): `hosts` are the names clients and routes use."""
    if not _NAME.fullmatch(name):
        raise CredentialsError(f"server name {name!r}: 1 to 64 ASCII letters, digits, - and _")
    if not hosts:
        raise CredentialsError(f"server {name}: name at least one --host it is reached by")
    return issue(site, site / "servers" / name, name, hosts=hosts, server=True)


def _eof_noise(record: logging.LogRecord) -> bool:
    # nats-py's protocol asks asyncio to keep a half-closed socket open, which TLS cannot: asyncio warns at every
    # closed TLS connection, and nothing is wrong.
    return not str(record.msg).startswith("returning true from eof_received()")


def tls_context(folder: Path) -> ssl.SSLContext:
    """A client's TLS context from a credential folder (ca.pem, cert.pem, key.pem)."""
    asyncio_log = logging.getLogger("asyncio")
    if _eof_noise not in asyncio_log.filters:
        asyncio_log.addFilter(_eof_noise)
    missing = [n for n in ("ca.pem", "cert.pem", "key.pem") if not (folder / n).is_file()]
    if missing:
        raise CredentialsError(f"floor credentials {folder}: no {', '.join(missing)} (made by croupier floor "
                               f"credentials)")
    ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=str(folder / "ca.pem"))
    ctx.load_cert_chain(str(folder / "cert.pem"), str(folder / "key.pem"))
    return ctx
