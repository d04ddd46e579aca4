"""The viewer window's own rules (:mod:`mpc.app.view.window`), on a virtual display."""

import threading
import time

import mujoco

import robots


def test_close_waits_for_a_render_thread_that_is_slow_to_finish(display):
    """The render loop runs at the lowest priority and, on a busy computer, takes seconds to
    finish its last frame; closing must wait for it (GLFW torn down under a rendering thread
    at exit is a segfault). Holding the window's lock keeps the render loop mid-frame for
    longer than a short join would wait."""
    from mpc.app.view.window import Window

    model = robots.load_model("a1")
    window = Window(model, mujoco.MjData(model), robots.info("a1"), "test")
    assert window.render_threads
    held, release = threading.Event(), threading.Event()

    def hold_the_lock():
        with window.lock():
            held.set()
            release.wait()

    holder = threading.Thread(target=hold_the_lock)
    holder.start()
    held.wait()
    threading.Timer(7.0, release.set).start()
    start = time.monotonic()
    window.close()
    holder.join()
    assert not any(t.is_alive() for t in window.render_threads)
    assert time.monotonic() - start >= 6.0
