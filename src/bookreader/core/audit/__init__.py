"""The audit log that instructors can trust and export.

Every question and answer, in every mode, is appended to one denormalised table, each record
hash-chained to the one before (see :mod:`.records`).  Export (:mod:`.export`), verification
(:mod:`.verify`), the HTML report (:mod:`.report`) and retention (:mod:`.retention`) each have
their own module; :class:`AuditLog` is the one entry point the library, the CLI and the
instructor dialog use.
"""

from bookreader.core.audit.log import AuditLog, PruneResult, VerifyResult
from bookreader.core.audit.records import GENESIS_HASH, scrub

__all__ = ["AuditLog", "PruneResult", "VerifyResult", "GENESIS_HASH", "scrub"]
