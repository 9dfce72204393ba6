"""What this process is connected to, read live from ``/proc`` (Linux): every TCP socket
the process holds, classified as a local client of the app, the LLM host, the transcription
server, a listening socket, or *other* — which should never appear. No dependency:
``/proc/self/fd`` names the process's socket inodes, ``/proc/self/net/tcp{,6}`` says where
each one goes. And where the chat's images, files and recorded speech go
(:func:`media_report`)."""

from __future__ import annotations

import ipaddress
import os
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..config import Config
from ..llm.speech import SETUP_HINT, create_transcriber

_STATES = {"01": "established", "02": "syn-sent", "03": "syn-received", "04": "fin-wait",
           "05": "fin-wait", "06": "time-wait", "07": "closed", "08": "close-wait",
           "09": "last-ack", "0A": "listen", "0B": "closing"}  # fmt: skip


def _address(hex_address: str) -> tuple[str, int]:
    host, port = hex_address.split(":")
    raw = bytes.fromhex(host)
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address
    if len(raw) == 4:
        ip = ipaddress.IPv4Address(raw[::-1])
    else:  # four 32-bit words, each little-endian
        ip = ipaddress.IPv6Address(b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4)))
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped), int(port, 16)
    return str(ip), int(port, 16)


def socket_inodes(proc: Path = Path("/proc/self")) -> set[str]:
    inodes: set[str] = set()
    try:
        names = os.listdir(proc / "fd")
    except OSError:
        return inodes
    for name in names:
        try:
            target = os.readlink(proc / "fd" / name)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    return inodes


def tcp_sockets(proc: Path = Path("/proc/self")) -> list[dict[str, Any]]:
    """The process's TCP sockets: local, remote, state."""
    mine = socket_inodes(proc)
    out = []
    for table in ("tcp", "tcp6"):
        try:
            lines = (proc / "net" / table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 10 or fields[9] not in mine:
                continue
            (lip, lport), (rip, rport) = _address(fields[1]), _address(fields[2])
            out.append({"local": [lip, lport], "remote": [rip, rport], "state": _STATES.get(fields[3], fields[3])})
    return out


def host_addresses(host: str) -> set[str]:
    try:
        # str(): typeshed's sockaddr allows an int first for families other than IPv4/IPv6
        return {str(info[4][0]) for info in socket.getaddrinfo(host, None)}
    except OSError:
        return set()


def _loopback(ip: str) -> bool:
    try:
        return ipaddress.ip_address(ip).is_loopback
    except ValueError:
        return False


def connection_report(*, llm_host: str, llm_port: int, app_ports: set[int],
                      peers: dict[str, tuple[str, int]] | None = None) -> dict[str, Any]:  # fmt: skip
    """Every socket classified; ``ok`` is False when any is ``other``. ``peers`` names other
    servers the configuration sends to (``{"transcription": (host, port)}``)."""
    llm_ips = host_addresses(llm_host) | ({llm_host} if llm_host else set())
    named = {kind: (host_addresses(host) | {host}, port) for kind, (host, port) in (peers or {}).items()}
    supported = Path("/proc/self/net/tcp").exists()
    rows = []
    for sock in tcp_sockets():
        (lip, lport), (rip, rport) = sock["local"], sock["remote"]
        if sock["state"] == "listen":
            kind = "listening"
        elif (rip in llm_ips and rport == llm_port) or (lip in llm_ips and lport == llm_port and _loopback(lip)):
            kind = "llm"
        elif any(rip in ips and rport == port for ips, port in named.values()):
            kind = next(k for k, (ips, port) in named.items() if rip in ips and rport == port)
        elif (lport in app_ports and _loopback(rip)) or (rport in app_ports and _loopback(rip)):
            kind = "local client"  # a browser (or an in-process client) on this machine
        elif lport in app_ports:
            kind = "remote client"  # only possible when bound beyond localhost, with a token
        elif sock["state"] in ("time-wait", "closed"):
            kind = "closing"
        else:
            kind = "other"
        rows.append({**sock, "kind": kind})
    return {
        "supported": supported,
        "ok": supported and not any(r["kind"] == "other" for r in rows),
        "connections": rows,
    }


def _host_port(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    return parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)


def peers(config: Config) -> dict[str, tuple[str, int]]:
    """The servers besides the LLM that the configuration sends data to, by kind."""
    found = {"transcription": _host_port(config.transcription_url)} if config.transcription_url else {}
    deep = deep_report(config)
    if deep["url"]:
        found["embeddings"] = _host_port(deep["url"])
    return found


def deep_report(config: Config) -> dict[str, Any]:
    """Where the deep tier's texts go, for the privacy panel: nowhere (the bundled model, or
    the tier off), or the embedding server ``deep_url`` names."""
    from ..embeddings.server import server_url

    on_server = config.deep_tier and config.deep_model.startswith(("ollama:", "openai:"))
    url = server_url(config.deep_model, config.deep_url) if on_server else None
    where = (
        f"every passage of your notes and documents (credentials removed before indexing) and every "
        f"search question (credentials removed) go to the embedding server at {url}"
        if url else "nowhere: the deep tier's model runs inside vaultseek"
        if config.deep_tier else "nowhere: the deep tier is off"
    )
    return {"model": config.deep_model if config.deep_tier else None, "url": url, "where": where}


def media_report(config: Config, *, llm_url: str) -> dict[str, Any]:
    """Where the chat's images, attached files and recorded speech go, for the privacy panel."""
    transcriber = create_transcriber(config)
    speech = transcriber.describe() if transcriber is not None else {
        "engine": None, "url": None, "model": None,
        "where": "nowhere: voice input is off until a transcription server is configured",
        "hint": SETUP_HINT,
    }  # fmt: skip
    return {
        "images": f"kept in the study database beside the index (readable by your user only), with "
                  f"their metadata (EXIF, GPS position, camera) removed; sent only to the LLM server at {llm_url}",
        "files": "read on this machine by the same readers as indexing (OCR included) and kept with "
                 "their conversation; a source of that conversation only, until you add one to the "
                 "knowledge base",
        "audio": "recorded in the browser and sent to this app only when you stop recording; "
                 "never kept, never sent to the browser's own speech service",
        "transcription": speech,
    }  # fmt: skip
