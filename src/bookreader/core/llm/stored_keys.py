"""API keys of remote backends, kept in the system keyring (never in the settings file).

One :class:`StoredKey` per backend: its keyring entry, the environment variable that
overrides it, and the words its error message uses.  Claude and the OpenAI-compatible
backend share this code; only their names differ.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Optional

from bookreader.errors import BackendError

log = logging.getLogger(__name__)

#: The keyring service every BookReader key is filed under.
KEYRING_SERVICE = "BookReader"


@dataclass(frozen=True)
class StoredKey:
    """One backend's key: ``username`` in the keyring, ``env`` overriding it."""

    username: str
    env: str
    #: What the key is, for messages: "The Claude API key".
    what: str

    def read(self) -> Optional[str]:
        """The key in the system keyring, or None (also when there is no keyring)."""
        try:
            import keyring
            from keyring.errors import KeyringError
        except ImportError:
            log.debug("keyring is not installed; no stored key for %s", self.username)
            return None
        try:
            value = keyring.get_password(KEYRING_SERVICE, self.username)
        except (KeyringError, RuntimeError, OSError) as exc:
            # No usable backend (headless Linux without a secret service, locked keychain).
            log.info("System keyring unavailable (%s); no stored key for %s",
                     type(exc).__name__, self.username)
            return None
        return value or None

    def store(self, key: str) -> None:
        """Save ``key`` in the system keyring (an empty key deletes the stored one).

        Raises:
            BackendError: there is no usable keyring on this system.
        """
        try:
            import keyring
            from keyring.errors import KeyringError, PasswordDeleteError

            if key.strip():
                keyring.set_password(KEYRING_SERVICE, self.username, key.strip())
            else:
                try:
                    keyring.delete_password(KEYRING_SERVICE, self.username)
                except PasswordDeleteError:
                    pass
        except (ImportError, KeyringError, RuntimeError, OSError) as exc:
            raise BackendError(
                f"{self.what} could not be saved: this system has no usable keyring. "
                f"Set the {self.env} environment variable instead.") from exc

    def resolve(self, explicit: Optional[str] = None) -> tuple[Optional[str], str]:
        """The key and where it came from: "argument", "environment", "keyring" or "".
        Never log the first element."""
        if explicit and explicit.strip():
            return explicit.strip(), "argument"
        env = os.environ.get(self.env, "").strip()
        if env:
            return env, "environment"
        stored = self.read()
        if stored and stored.strip():
            return stored.strip(), "keyring"
        return None, ""
