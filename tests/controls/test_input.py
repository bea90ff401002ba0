"""InputMap's bindings and raw state: rebinding (bindings, unbind), one input's state
(is_down), releasing everything on focus loss (release_all), and the deprecated short
mouse button names."""

from __future__ import annotations

import pytest

from engine.controls.input import InputMap, key, mouse, mouse_name


def test_bindings_show_what_an_action_is_bound_to_and_unbind_clears_it():
    inp = InputMap().bind("jump", key.SPACE, "w").bind_mouse("jump", mouse.RIGHT)
    assert inp.bindings("jump") == frozenset({"space", "w", "mouse_right"})
    assert inp.bindings("fire") == frozenset()
    # rebinding from scratch: unbind, then bind another key
    inp.unbind("jump")
    assert inp.bindings("jump") == frozenset()
    with pytest.raises(KeyError, match="'jump'"):
        inp.held("jump")
    inp.bind("jump", "up")
    inp.key_down("w")  # the old key no longer jumps
    inp.update()
    assert not inp.pressed("jump")
    inp.key_down(key.UP)
    inp.update()
    assert inp.pressed("jump") and inp.held("jump")
    inp.unbind("never bound")  # nothing to remove: no error
    assert inp.bindings("never bound") == frozenset()


def test_is_down_reads_one_input_as_latched_by_update():
    inp = InputMap()
    inp.key_down("a")
    assert not inp.is_down("a")  # queued, not latched yet
    inp.update()
    assert inp.is_down("a") and inp.is_down(key.A) and not inp.is_down("b")
    inp.mouse_down(mouse.MIDDLE)
    inp.update()
    assert inp.is_down("mouse_middle")
    inp.key_up(key.A)
    inp.update()
    assert not inp.is_down("a") and inp.is_down("mouse_middle")
    with pytest.raises(ValueError, match="'spacebar'"):
        inp.is_down("spacebar")


def test_release_all_lets_go_of_held_and_queued_inputs():
    """Focus lost: a held key, a held button and a key queued to go down in the same
    frame are all released by the next update; nothing stays held."""
    inp = InputMap().bind("fire", "space").bind("run", "lshift").bind_mouse("aim", mouse.LEFT)
    inp.key_down("space")
    inp.mouse_down(mouse.LEFT)
    inp.update()
    inp.key_down("lshift")  # not latched yet when focus goes
    assert inp.release_all() == ["lshift", "mouse_left", "space"]
    inp.update()
    assert not (inp.held("fire") or inp.held("aim") or inp.held("run"))
    assert inp.released("fire") and inp.released("aim")
    assert inp.pressed("run") and inp.released("run")  # a tap: never lost, never stuck
    assert inp.release_all() == []


def test_short_button_names_are_deprecated_but_still_bind_the_button():
    inp = InputMap()
    with pytest.warns(DeprecationWarning, match="'left' is deprecated: use 'mouse_left'") as w:
        inp.bind_mouse("fire", "left")
    assert w[0].filename == __file__  # the warning points at the caller
    assert inp.bindings("fire") == frozenset({"mouse_left"})
    with pytest.warns(DeprecationWarning, match="use 'mouse_right'"):
        assert mouse_name("Right") == "mouse_right"
    with pytest.warns(DeprecationWarning) as w:
        inp.mouse_down("left")
    assert w[0].filename == __file__
    inp.update()
    assert inp.held("fire")
    with pytest.raises(ValueError, match="unknown mouse button 'space'"):
        inp.bind_mouse("fire", "space")
    assert mouse_name(mouse.MOUSE4) == "mouse_4"
