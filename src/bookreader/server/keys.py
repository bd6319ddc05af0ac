"""API keys for ``bookreader serve``: named bearer tokens, stored only as hashes.

``bookreader keys add NAME`` makes a random token, prints it once, and stores the name
with the token's SHA-256 in ``<data>/api_keys.json``.  A token is 32 random bytes, so a
plain SHA-256 is enough (a slow password hash protects low-entropy secrets; these are
not).  For deployments ``BOOKREADER_API_KEYS="name:token,name2:token2"`` adds keys from
the environment; those are hashed on load and never written anywhere.

Checking a token hashes it and compares the digest with *every* stored digest with
:func:`hmac.compare_digest`, without stopping at a match, so the time taken does not
reveal which key (or how much of one) matched.  The key file is re-read when it changes,
so ``bookreader keys revoke NAME`` takes effect on a running server at its next request.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import re
import secrets
import threading
import time
from pathlib import Path
from typing import Optional

from bookreader.errors import BookReaderError, InvalidInput

log = logging.getLogger(__name__)

KEYS_FILE = "api_keys.json"
KEYS_ENV = "BOOKREADER_API_KEYS"
TOKEN_PREFIX = "brk_"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")


def token_hash(token: str) -> str:
    """SHA-256 (hex) of a token."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def check_name(name: str) -> str:
    """A key name: 1-64 letters, digits, ``. _ @ -``; it is the audit log's client id."""
    name = (name or "").strip()
    if not _NAME_RE.match(name):
        raise InvalidInput(
            f"'{name}' is not a usable key name. Use 1-64 letters, digits, dots, dashes, "
            "underscores or @, starting with a letter or digit (e.g. class-7b)."
        )
    return name


def parse_env_keys(text: str) -> dict[str, str]:
    """``"name:token,name2:token2"`` -> {name: token hash}."""
    out: dict[str, str] = {}
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        name, sep, token = part.partition(":")
        if not sep or not token.strip():
            raise InvalidInput(
                f"{KEYS_ENV} holds '{name}' without a token. Write it as "
                "name:token,name2:token2."
            )
        out[check_name(name)] = token_hash(token.strip())
    return out


class KeyStore:
    """The API keys of one data folder (plus those from the environment).

    Args:
        data_dir: The data folder; the keys live in ``api_keys.json`` inside it.
        env_keys: The value of ``BOOKREADER_API_KEYS`` (read from the environment when None).
    """

    def __init__(self, data_dir: Path, env_keys: Optional[str] = None) -> None:
        self.path = Path(data_dir) / KEYS_FILE
        raw = os.environ.get(KEYS_ENV, "") if env_keys is None else env_keys
        self._env = parse_env_keys(raw)
        self._lock = threading.Lock()
        self._stamp: Optional[tuple[int, int]] = None
        self._file: dict[str, dict] = {}

    # --- the file ---------------------------------------------------------------------
    def _read(self) -> dict[str, dict]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise BookReaderError(
                f"Cannot read the API keys in {self.path}: {exc}. Fix or delete the file and "
                "add the keys again with `bookreader keys add NAME`."
            ) from exc
        keys = data.get("keys", {}) if isinstance(data, dict) else {}
        return {k: v for k, v in keys.items() if isinstance(v, dict) and "sha256" in v}

    def _write(self, keys: dict[str, dict]) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps({"version": 1, "keys": keys}, indent=2), encoding="utf-8")
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except OSError as exc:
            raise BookReaderError(
                f"Cannot write the API keys to {self.path}: {exc.strerror or exc}. Check that "
                "the data folder is writable."
            ) from exc

    def _current(self) -> dict[str, dict]:
        """The file's keys, re-read when the file changed since the last look."""
        try:
            st = self.path.stat()
            stamp: Optional[tuple[int, int]] = (st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            stamp = None
        with self._lock:
            if stamp != self._stamp:
                self._file = self._read() if stamp is not None else {}
                self._stamp = stamp
            return self._file

    # --- commands ---------------------------------------------------------------------
    def add(self, name: str) -> str:
        """Create key ``name``; returns its token (shown once, never stored)."""
        name = check_name(name)
        keys = self._read()
        if name in keys:
            raise InvalidInput(
                f"A key named '{name}' exists already. Revoke it first "
                f"(`bookreader keys revoke {name}`) or choose another name."
            )
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        keys[name] = {"sha256": token_hash(token), "created": time.time()}
        self._write(keys)
        log.info("API key %s added", name)
        return token

    def revoke(self, name: str) -> None:
        keys = self._read()
        if name not in keys:
            known = ", ".join(sorted(keys)) or "none"
            raise InvalidInput(
                f"There is no key named '{name}' in {self.path} (keys: {known}). "
                "`bookreader keys list` shows them."
            )
        del keys[name]
        self._write(keys)
        log.info("API key %s revoked", name)

    def list(self) -> list[dict]:
        """[{name, created, source}] for every key (never a token or its hash)."""
        out = [{"name": n, "created": v.get("created"), "source": "file"}
               for n, v in sorted(self._read().items())]
        out += [{"name": n, "created": None, "source": KEYS_ENV} for n in sorted(self._env)]
        return out

    def count(self) -> int:
        return len(self._current()) + len(self._env)

    # --- checking ---------------------------------------------------------------------
    def client_for(self, token: str) -> Optional[str]:
        """The key name ``token`` belongs to, or None.  Constant time over the keys."""
        digest = token_hash(token).encode()
        found: Optional[str] = None
        candidates = [(n, v["sha256"]) for n, v in self._current().items()]
        candidates += list(self._env.items())
        for name, stored in candidates:
            if hmac.compare_digest(digest, str(stored).encode()) and found is None:
                found = name
        return found
