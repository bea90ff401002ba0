"""StageThreads (engine.render.backends.threads): the per-stage choice between one
thread and all of them, driven by a fake clock whose costs per unit are set by hand,
so each decision is known in advance; and the Numba backend's frames (identical keys on
either choice)."""

import numba
import numpy as np
import pytest

from engine import Mesh, Node, PerspectiveCamera, Renderer, Scene
from engine.render.backends.threads import StageThreads, call_twin
from engine.scene.procedural import icosphere


class FakeMachine:
    """A clock that advances by work * cost[threads] during each stage call."""

    def __init__(self, cost):
        self.cost = cost  # {threads: seconds per unit}
        self.now = 0.0
        self.threads = 4
        self.ran_on = []

    def clock(self):
        return self.now

    def set_count(self, n):
        self.threads = n

    def stage(self, work):
        self.ran_on.append(self.threads)
        self.now += work * self.cost[self.threads]


def _controller(machine):
    return StageThreads(clock=machine.clock, threads=lambda: 4, set_count=machine.set_count)


def test_parallel_kept_while_it_wins_and_left_when_the_machine_is_busy(monkeypatch):
    monkeypatch.setattr(numba, "get_num_threads", lambda: 4)  # restored value
    m = FakeMachine({4: 1e-9, 1: 3e-9})
    st = _controller(m)
    for _ in range(40):
        st.run("raster", 1000, m.stage, 1000)
    # warm-up call on 4, then 4 measured, 1 measured once (loses: the interval becomes
    # 16), 16 calls on 4, a trial of 1 (loses: 32), then 4 again
    assert m.ran_on == [4, 4, 1] + [4] * 16 + [1] + [4] * 20
    assert st.choice("raster") == 4
    # a competitor: four threads now cost 5x one thread per unit
    m.cost = {4: 10e-9, 1: 2e-9}
    m.ran_on.clear()
    for _ in range(80):
        st.run("raster", 1000, m.stage, 1000)
    assert st.choice("raster") == 1
    # one slow call lifts the average above one thread's last sample: 1 is tried at
    # once and wins; 4 is tried again after 8, 16 and 32 calls and loses each time
    assert m.ran_on[:11] == [4] + [1] * 9 + [4]
    assert m.ran_on.count(4) == 4
    # free again: the next trial of 4 threads wins by more than the margin
    m.cost = {4: 1e-9, 1: 3e-9}
    m.ran_on.clear()
    for _ in range(65):
        st.run("raster", 1000, m.stage, 1000)
    assert st.choice("raster") == 4 and m.ran_on[-1] == 4
    assert m.threads == 4  # the count before each call is restored after it


def test_a_changed_thread_count_is_used(monkeypatch):
    monkeypatch.setattr(numba, "get_num_threads", lambda: 2)
    m = FakeMachine({2: 1e-9, 1: 3e-9, 4: 0.5e-9})
    most = [2]
    st = StageThreads(clock=m.clock, threads=lambda: most[0], set_count=m.set_count)
    for _ in range(5):
        st.run("vertex", 100, m.stage, 100)
    assert st.choice("vertex") == 2
    most[0] = 4  # set_threads(4): the stage runs on 4 from its next call
    m.ran_on.clear()
    st.run("vertex", 100, m.stage, 100)
    assert st.choice("vertex") == 4 and m.ran_on == [4]


def test_one_thread_or_no_work_is_not_measured(monkeypatch):
    monkeypatch.setattr(numba, "get_num_threads", lambda: 1)
    m = FakeMachine({1: 1e-9})
    st = StageThreads(clock=m.clock, threads=lambda: 1, set_count=m.set_count)
    assert st.run("setup", 10, lambda: 7) == 7
    assert st.choice("setup") is None
    st4 = _controller(m)
    st4.run("setup", 0, lambda: None)
    assert st4.choice("setup") is None


@pytest.mark.parametrize("threads", [1, 2])
def test_numba_frames_are_the_same_on_either_choice(threads):
    threads = min(threads, numba.get_num_threads())  # a one-core machine: 1 and 1
    scene = Scene()
    v, f = icosphere(3)
    scene.add(Node("s", geometry=Mesh(v, f)))
    cam = scene.add(PerspectiveCamera(fov_y=50, aspect=1.0, position=(0, 0, 3)))
    size = (64, 64)
    ref = Renderer(scene, cam, size, backend="numpy")
    ref.render()
    r = Renderer(scene, cam, size, backend="numba")
    r.backend.stage_threads._threads = lambda: threads  # choose between 1 and `threads`
    for _ in range(12):  # both choices get measured and used
        r.render()
        np.testing.assert_array_equal(r.visibility(), ref.visibility())
    for stage in ("vertex", "setup", "raster", "resolve"):
        assert r.backend.stage_threads.choice(stage) in ({1, threads} if threads > 1 else {None})


def test_the_first_call_of_a_kernel_loads_its_other_thread_twin():
    # the twin a later flip of the thread count runs is ready before that frame: it is
    # loaded (compiled here) for the same argument types at the first call of either
    @numba.njit(parallel=True)
    def total_parallel(a, k):
        s = 0.0
        for i in numba.prange(a.shape[0]):
            s += a[i] * k
        return s

    @numba.njit
    def total_serial(a, k):
        s = 0.0
        for i in range(a.shape[0]):
            s += a[i] * k
        return s

    a = np.arange(10, dtype=np.float32)
    assert not total_serial.overloads and not total_parallel.overloads
    assert call_twin(total_parallel, total_serial, True, a, np.float64(2.0)) == 90.0
    assert [sig for sig in total_serial.overloads] == [sig for sig in total_parallel.overloads]
    assert call_twin(total_parallel, total_serial, False, a, np.float64(2.0)) == 90.0
    assert len(total_serial.overloads) == 1  # the call found it loaded: no new overload
