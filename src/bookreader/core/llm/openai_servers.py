"""Around the OpenAI-compatible backend: is a server address on this machine or the local
network, the one-time notice when it is not, and finding the model servers that run on
this machine (only when the user opens Settings: no traffic otherwise).
"""

from __future__ import annotations

import ipaddress
import json
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Optional
from urllib.parse import urlsplit

from bookreader.core.llm.openai_compat import OpenAICompatibleBackend, clean_url, host_of
from bookreader.errors import BookReaderError

log = logging.getLogger(__name__)

#: Common local model servers and their default ports (OpenAI-compatible API under /v1).
KNOWN_SERVERS: tuple[tuple[str, int], ...] = (
    ("Ollama", 11434),
    ("LM Studio", 1234),
    ("llama.cpp server / LocalAI", 8080),
    ("vLLM", 8000),
    ("Jan", 1337),
    ("text-generation-webui", 5000),
)
#: Suffixes of host names that only resolve inside a local network.
_LOCAL_SUFFIXES = (".local", ".lan", ".home", ".internal", ".localdomain", ".home.arpa")
#: File in the data folder listing the hosts whose notice was shown.
NOTICE_FILE = "remote_model_hosts.json"


def is_local_url(url: str) -> bool:
    """True when ``url``'s host is this machine or the local network: a loopback, private
    or link-local address, ``localhost``, a name without a dot (a LAN or container
    name) or one with a local-only suffix.  Names are not resolved (no traffic)."""
    host = (urlsplit(url).hostname or "").lower().rstrip(".")
    if not host:
        return False
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host == "localhost" or "." not in host or host.endswith(_LOCAL_SUFFIXES)
    return ip.is_loopback or ip.is_private or ip.is_link_local


def remote_notice(url: str) -> str:
    """The notice for a server outside this machine and the local network."""
    return (f"The model server {host_of(clean_url(url))} is outside this computer and its "
            f"local network: the book passages and your questions are sent there with every "
            f"answer. Choose a server on this machine to keep them here.")


def notice_once(url: str, data_dir: Path) -> Optional[str]:
    """The remote notice the first time ``url``'s host is used from ``data_dir``, else None.

    The host is recorded in ``NOTICE_FILE`` so the notice is shown once per host; a local
    address never gets one.
    """
    if is_local_url(clean_url(url)):
        return None
    host = host_of(clean_url(url))
    path = Path(data_dir) / NOTICE_FILE
    try:
        seen = set(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        seen = set()
    if host in seen:
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(sorted(seen | {host})), encoding="utf-8")
    except OSError as exc:
        log.warning("Cannot record the remote-server notice in %s: %s", path, exc)
    log.info("Remote model server %s: notice shown", host)
    return remote_notice(url)


@dataclass(frozen=True)
class FoundServer:
    """A model server that answered on this machine."""

    name: str
    url: str
    models: tuple[str, ...]


def list_models(url: str, api_key: Optional[str] = None, timeout_s: float = 5.0) -> list[str]:
    """The model ids a server lists under ``/models``.

    Raises:
        BackendError: unreachable, refused, or not an OpenAI-compatible API.
    """
    return OpenAICompatibleBackend(url, api_key=api_key, timeout_s=timeout_s,
                                   max_retries=0).list_models()


def detect_local_servers(timeout_s: float = 0.5,
                         known: tuple[tuple[str, int], ...] = KNOWN_SERVERS) -> list[FoundServer]:
    """The servers in ``known`` that answer ``GET /v1/models`` on 127.0.0.1, in order.

    Each port is asked once, all at once, each with a short timeout: on a machine with
    none of them this takes about ``timeout_s`` (refused connections return at once).
    """
    def probe(item: tuple[str, int]) -> Optional[FoundServer]:
        name, port = item
        url = f"http://127.0.0.1:{port}/v1"
        try:
            return FoundServer(name, url, tuple(list_models(url, timeout_s=timeout_s)))
        except BookReaderError:
            return None

    with ThreadPoolExecutor(max_workers=max(1, len(known)),
                            thread_name_prefix="find-model-server") as pool:
        found = [f for f in pool.map(probe, known) if f is not None]
    log.info("Model servers found on this machine: %s",
             ", ".join(f"{f.name} ({f.url})" for f in found) or "none")
    return found
