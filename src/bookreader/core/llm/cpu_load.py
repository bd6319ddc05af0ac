"""How much of the CPU other programs are using, to pick llama.cpp's thread count.

llama.cpp splits every step of a model across its threads and waits for the slowest, so
a thread that shares its core with another program stalls them all.  Measured on the
2-core development machine (``bench/threads.py``; Qwen2.5-Coder-0.5B): idle, two
threads read the prompt at 123 tokens a second and write 23, one thread 70 and 13; with a
build running beside it, two threads fell to 28-30 prompt tokens a second while one kept
78-84.  A fixed "one fewer than the cores" was the safe choice for a busy machine and
halved the speed of an idle one (the common case: a student reading).

:class:`OtherLoad` measures the CPU time that other processes used over a recent window,
in cores: the whole machine's busy time (``/proc/stat``) minus this process's own
(``os.times``, every thread of it, llama.cpp's included).  :func:`fit_threads` then gives
llama.cpp the cores that are left.  Where ``/proc/stat`` does not exist (macOS, Windows)
there is no measure and the caller keeps its fixed count.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from typing import Callable, Optional

#: A window shorter than this holds too few clock ticks (10 ms each) to tell anything.
MIN_WINDOW_S = 0.1
#: A window longer than this says how busy the machine was, not how busy it is (a
#: follow-up question within a minute reuses the time since the last answer: no wait).
MAX_WINDOW_S = 60.0
#: How long a fresh measure waits when there is no usable window (a question after a
#: minute of reading pays this once: about 5 % of the small tier's first token).
FRESH_WINDOW_S = 0.1


@dataclass(frozen=True)
class _Sample:
    wall: float
    busy_s: float
    own_s: float


def _read_proc_stat(path: str = "/proc/stat") -> Optional[float]:
    """Seconds of CPU time the whole machine has been busy since boot, or None."""
    try:
        with open(path, encoding="ascii") as fh:
            fields = fh.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu" or len(fields) < 5:
        return None
    try:
        ticks = [int(x) for x in fields[1:9]]  # user nice system idle iowait irq softirq steal
    except ValueError:
        return None
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)
    try:
        hz = os.sysconf("SC_CLK_TCK")
    except (AttributeError, ValueError, OSError):
        hz = 100
    return (sum(ticks) - idle) / float(hz or 100)


def _own_cpu_s() -> float:
    t = os.times()
    return float(t.user + t.system)


class OtherLoad:
    """Cores' worth of CPU time used by other processes over a recent window.

    Args:
        read_busy: Seconds the machine has been busy (default: ``/proc/stat``); tests pass
            their own.
        read_own: Seconds of CPU this process has used (default: ``os.times``).
        clock: Monotonic seconds.
        sleep: Waits out a fresh window.
    """

    def __init__(
        self,
        read_busy: Callable[[], Optional[float]] = _read_proc_stat,
        read_own: Callable[[], float] = _own_cpu_s,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._read_busy = read_busy
        self._read_own = read_own
        self._clock = clock
        self._sleep = sleep
        self._last: Optional[_Sample] = None
        self.mark()  # the first window starts when the model is set up

    @property
    def available(self) -> bool:
        return self._read_busy() is not None

    def _sample(self) -> Optional[_Sample]:
        busy = self._read_busy()
        if busy is None:
            return None
        return _Sample(self._clock(), busy, self._read_own())

    def mark(self) -> None:
        """Start a window now (the backend marks the end of each answer)."""
        self._last = self._sample()

    def cores(self) -> Optional[float]:
        """Other processes' CPU use since the last call or :meth:`mark`, in cores.

        When that window is too short or too old, a fresh one of
        :data:`FRESH_WINDOW_S` is measured.  None where the machine gives no measure.
        """
        now = self._sample()
        if now is None:
            return None
        prev = self._last
        if prev is None or not (MIN_WINDOW_S <= now.wall - prev.wall <= MAX_WINDOW_S):
            self._sleep(FRESH_WINDOW_S)
            prev, now = now, self._sample()
            if now is None:
                return None
        self._last = now
        wall = now.wall - prev.wall
        if wall <= 0:
            return None
        other = (now.busy_s - prev.busy_s) - (now.own_s - prev.own_s)
        return max(0.0, other / wall)


def fit_threads(cores: int, other: Optional[float], fallback: int) -> int:
    """llama.cpp threads for ``cores`` cores when other programs use ``other`` of them.

    The cores left, rounded half up (0.4 of a core busy still leaves a whole one; 0.6
    does not), at least one.  ``fallback`` where there is no measure.
    """
    if other is None:
        return max(1, min(cores, fallback))
    left = math.floor(cores - other + 0.5)
    return max(1, min(cores, left))
