"""What the kit wraps around a subject under test.

- :mod:`~memconform.harness.proxy`: the recording proxy every store call goes
  through (timeline, answer checks on each result, the time bound on each call);
- :mod:`~memconform.harness.faults`: the faults the kit injects (refused or
  failed appends, hangs, the row point inside a store's write loop);
- :mod:`~memconform.harness.wrapper`: the store-wrapper base the fault
  wrappers and the store mutants share;
- :mod:`~memconform.harness.environment`: the world a runtime executes a script
  in (fake model, scripted tools and hooks, injected clock and ids);
- :mod:`~memconform.harness.runtime`: the runtime contract and
  :func:`~memconform.harness.runtime.observe`, which runs a runtime under the
  kit's eyes;
- :mod:`~memconform.harness.answers`: the check of a runtime's answer and the
  bound on its ``execute``;
- :mod:`~memconform.harness.fresh_process`: how a fresh child process is started.

The harness sits below the subjects (the simulator, the built-in stores, the
third-party adapters): they may import it, it imports none of them.
"""

__all__: list[str] = []
