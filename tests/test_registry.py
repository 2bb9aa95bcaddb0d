"""Store URLs naming a vendor's factory, and the fresh processes that open them."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from memconform.adapters.registry import (
    BUILTIN_RUNTIMES,
    StoreURLError,
    factory_arguments,
    open_store,
    resolve_runtime,
)
from memconform.harness.fresh_process import fresh_environment, python_command
from tests.bad_store_adapters import UnlockedFileStore
from tests.mutant_harness import run_suite


def test_query_parameters_become_keyword_arguments(tmp_path: Path) -> None:
    target = tmp_path / "a b%.json"
    store = open_store(
        f"tests.bad_store_adapters:unlocked_file_store?path={str(target).replace('%', '%25')}"
    )
    assert isinstance(store, UnlockedFileStore)
    assert store.path == str(target)


def test_factory_arguments_are_text_and_named_once() -> None:
    assert factory_arguments("") == {}
    assert factory_arguments("a=1&b=&c=x%2Fy") == {"a": "1", "b": "", "c": "x/y"}
    with pytest.raises(StoreURLError, match="twice"):
        factory_arguments("a=1&a=2")
    with pytest.raises(StoreURLError, match="keyword"):
        factory_arguments("not-a-name=1")


def test_a_runtime_is_named_or_given_as_module_factory() -> None:
    target = resolve_runtime("openai-agents")
    assert target == BUILTIN_RUNTIMES["openai-agents"]
    module_name, _, attr = target.partition(":")
    assert module_name.startswith("memconform.adapters.libraries.")
    assert attr
    assert resolve_runtime("tests.runtime_adapters:stamping_runtime") == (
        "tests.runtime_adapters:stamping_runtime"
    )


def test_each_langgraph_durability_mode_is_a_named_runtime_not_a_module() -> None:
    """``langgraph:exit`` looks like ``module:factory`` but is a name: the
    adapter's factory for that mode, never ``getattr(langgraph, "exit")``."""
    for name in ("langgraph", "langgraph:async", "langgraph:sync", "langgraph:exit"):
        target = resolve_runtime(name)
        assert target.startswith("memconform.adapters.libraries.langgraph_runtime:")
        assert target.endswith("_runtime")
    assert len({resolve_runtime(n) for n in BUILTIN_RUNTIMES if n.startswith("langgraph")}) == 4


def test_every_framework_runtime_has_an_extra_whose_environment_runs_its_tests() -> None:
    """A framework's runtime module ``<extra>_runtime`` is in an extra of that name,
    listed in ``RUNTIME_EXTRAS`` (so its unit tests run in the extra's own
    environment) and declared in pyproject.toml."""
    import tomllib

    from memconform.compliance import RUNTIME_EXTRAS

    root = Path(__file__).resolve().parent.parent
    declared = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    extras = declared["project"]["optional-dependencies"]
    modules = {target.split(":")[0].rsplit(".", 1)[-1] for target in BUILTIN_RUNTIMES.values()
               if target.startswith("memconform.adapters.libraries.")}
    named = {module.removesuffix("_runtime").replace("_", "-") for module in modules}
    assert named == set(RUNTIME_EXTRAS)
    for extra in RUNTIME_EXTRAS:
        assert extra in extras
        unit = f"test_{extra.replace('-', '_')}_runtime.py"
        assert (root / "tests" / "libraries" / unit).is_file(), unit


def test_a_bad_query_is_a_url_error() -> None:
    with pytest.raises(StoreURLError, match="twice"):
        open_store("tests.bad_store_adapters:unlocked_file_store?path=a&path=b")
    with pytest.raises(StoreURLError, match="bad query"):
        open_store("tests.bad_store_adapters:unlocked_file_store?path")


def test_a_fresh_process_gets_the_import_path_and_no_variable_set_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The import path comes on the command line; a variable this process set
    after the kit started (as a store might) never reaches the child, nor does
    the parent's PYTHONPATH or its temporary folder."""
    (tmp_path / "fresh_probe.py").write_text(
        "import json, os, sys\n"
        "print(json.dumps({'env': sorted(os.environ), 'argv': sys.argv[1:],"
        " 'path': sys.path}))\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("MEMCONFORM_SECRET_OF_THE_PARENT", "x")
    command = python_command("fresh_probe", "--flag", import_path=[str(tmp_path)])
    done = subprocess.run(
        command, env=fresh_environment(tmp_path), capture_output=True, text=True, check=True
    )
    seen = json.loads(done.stdout)
    assert seen["argv"] == ["--flag"]
    assert seen["path"][0] == str(tmp_path)
    assert "MEMCONFORM_SECRET_OF_THE_PARENT" not in seen["env"]
    assert "PYTHONPATH" not in seen["env"]
    assert "TMPDIR" in seen["env"]
    assert set(seen["env"]) <= {*os.environ, "TMPDIR", "LC_CTYPE"}


_VENDOR = textwrap.dedent(
    '''
    """A correct store outside the kit, importable only through PYTHONPATH."""
    from memconform.adapters.sqlite import SQLiteStore


    def open_vendor_store(path: str) -> SQLiteStore:
        return SQLiteStore(path)
    '''
)


@pytest.mark.slow
def test_a_store_importable_only_through_pythonpath_passes_the_fresh_process_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vendor = tmp_path / "vendor"
    vendor.mkdir()
    (vendor / "memconform_vendor_store.py").write_text(_VENDOR, encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(vendor))
    url = f"memconform_vendor_store:open_vendor_store?path={tmp_path / 'vendor.db'}"
    outcomes = run_suite(
        "tests/features/test_persisted_state.py", tmp_path / "ps", "--memconform-store", url,
        "-m", "PS-031",
    )
    outcomes += run_suite(
        "tests/features/test_store.py", tmp_path / "st", "--memconform-store", url, "-m", "ST-032",
    )
    assert {r for o in outcomes for r in o["rules"]} >= {"PS-031", "ST-032"}
    assert [(o["rules"], o["outcome"], o["message"]) for o in outcomes if
            o["outcome"] != "passed"] == []


def test_every_runtime_name_resolves_through_one_function() -> None:
    from memconform import fingerprint
    from memconform.runtime_names import (
        SIMULATOR_NAMES,
        VARIANT_PROFILES,
        UnknownRuntime,
        runtime_target,
    )
    from memconform.simulator.runtime import Simulator

    for name in SIMULATOR_NAMES:
        assert runtime_target(name) == "memconform.simulator.runtime:Simulator"
    assert set(VARIANT_PROFILES) == {"anvia-main", "eddi-snapshot"}
    for variant in VARIANT_PROFILES:
        built = fingerprint.subject_for(variant).build()
        assert isinstance(built, Simulator)
        assert built.variant == variant
        assert runtime_target(runtime_target(variant)) == runtime_target(variant)
    for name, target in BUILTIN_RUNTIMES.items():
        assert runtime_target(name) == target
    assert runtime_target("tests.runtime_adapters:stamping_runtime") == (
        "tests.runtime_adapters:stamping_runtime"
    )
    with pytest.raises(UnknownRuntime, match="anvia-main, eddi-snapshot"):
        runtime_target("anvia")


def test_a_variant_changes_only_its_own_profile() -> None:
    from typing import Any, cast

    from memconform.harness.environment import ScriptError
    from memconform.runtime_names import variant_runtime
    from memconform.simulator.runtime import Simulator

    no_env = cast(Any, None)
    with pytest.raises(ScriptError, match="variant"):  # the plain simulator carries it along
        Simulator("anvia-main").execute({"profile": "strict-write"}, no_env)
    for variant, other in (("anvia-main", "strict-write"), ("eddi-snapshot", "save-policy")):
        with pytest.raises(ScriptError) as refused:  # the script is empty: refused as such
            variant_runtime(variant).execute({"profile": other}, no_env)
        assert "variant" not in str(refused.value)
