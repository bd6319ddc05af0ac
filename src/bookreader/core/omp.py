"""One OpenMP wait policy for the whole process, set before either OpenMP user loads.

Torch (the MiniLM embedders) and llama.cpp both run their threads through OpenMP, and a
process holds one ``libgomp.so.1``: whichever of the two loads first, that runtime reads
``OMP_WAIT_POLICY`` once, when it loads, for both.  By default its idle threads spin
while they wait for work; on a busy machine spinning threads steal the cores the work
needs (40 sentences took 5.1 s with spinning threads against 0.56 s with passive ones on
a loaded 2-core machine).  When llama.cpp was loaded before the embedding module set the
policy, the focus step of a whole-book question (about 60 sentences through the int8
MiniLM, 0.6-0.75 s of CPU) burnt 14-22 s of CPU at a load average of 12-18, more than
reading the prompt.  So both call :func:`passive_wait` before importing their library;
a value the user set wins.
"""

from __future__ import annotations

import os

POLICY = "PASSIVE"


def passive_wait() -> None:
    """Make OpenMP threads sleep, not spin, while they wait (unless the user chose)."""
    os.environ.setdefault("OMP_WAIT_POLICY", POLICY)
