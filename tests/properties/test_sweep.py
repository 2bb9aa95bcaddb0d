"""The sweep of the legal space: the built-in stores pass every section, and
each legal-space mutant is charged with every rule it claims to break."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from memconform.adapters.registry import open_store
from memconform.harness.proxy import RecordingStore
from memconform.mutants import Mutant, store_legal_space
from memconform.properties.store_model import Divergence
from memconform.properties.sweep import SECTIONS, sweep
from memconform.timeline import Timeline


def charged(build: Callable[[], object]) -> dict[str, tuple[str, ...]]:
    """Each section that diverged on a fresh store from ``build``, with the rules
    its divergence is charged to."""
    found: dict[str, tuple[str, ...]] = {}
    for name in SECTIONS:
        proxy = RecordingStore(build(), Timeline())
        try:
            sweep(proxy, [name])
        except Divergence as divergence:
            found[name] = divergence.rules
        finally:
            proxy.close()
    return found


@pytest.mark.parametrize("url", ["memory://", "sqlite"])
def test_the_built_in_stores_pass_every_section(url: str, tmp_path: Path) -> None:
    n = iter(range(100))
    location = url if url != "sqlite" else None

    def build() -> object:
        return open_store(location or f"sqlite:///{tmp_path / f'{next(n)}.db'}")

    assert charged(build) == {}


@pytest.mark.parametrize("mutant", store_legal_space.MUTANTS, ids=lambda m: m.name)
def test_a_legal_space_mutant_is_charged_with_the_rules_it_breaks(mutant: Mutant) -> None:
    """Each mutant's claimed rules are charged; each divergence names rules its
    section is tagged with, so a run selecting a rule runs every section that
    can fail it."""
    found = charged(lambda: mutant.build(open_store("memory://")))
    rules = {rule for section in found.values() for rule in section}
    assert mutant.kills <= rules, (mutant.name, found)
    for name, section_rules in found.items():
        assert set(section_rules) <= set(SECTIONS[name].rules), (name, section_rules)
