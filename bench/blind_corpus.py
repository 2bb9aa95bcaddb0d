"""How much of the blind corpus the kit rejects.

``python bench/blind_corpus.py [--round 5] [--only FAMILY] [--jobs N] [--json]``
runs ``memconform run`` on every module of every family of ``corpus/round<N>/``
(stores and runtimes): first the family's correct ``base``, then each broken
variant ``vNN_*``, and prints per variant whether the kit caught it.

A family declares in its ``__init__.py`` how it is opened:

- ``KIND``: ``"store"`` or ``"runtime"``;
- ``TARGETS``: factory name -> the extra ``memconform run`` options for it (a
  runtime family with one runtime per profile names each factory with its
  ``--profile``);
- ``QUERY`` (stores): the URL query, where ``{tmp}`` becomes a new empty folder
  for each run (a file path, a key prefix), so no run sees another's data;
- ``cleanup(tmp)`` (optional): removes what a run left outside that folder (a
  server's keys under the prefix).

A variant is *caught* when some rule the base passes (``pass`` or ``warn``)
ends ``fail`` or ``error`` for the variant, through any of its factories; the
verdicts the base itself does not pass decide nothing. The table names the
rules that caught each variant, and the JSON the reason of the first rule per
verdict (an ``error`` is the variant breaking the runtime or store contract
itself: raising, hanging, answering garbage). ``--json`` prints the same as one JSON object.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import importlib
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PASSING = frozenset({"pass", "warn"})
REJECTING = frozenset({"fail", "error"})


@dataclass(frozen=True)
class Target:
    """One ``memconform run`` of one module's factory."""

    family: str
    kind: str
    module: str
    factory: str
    options: tuple[str, ...]
    query: str
    package: str = ""

    def command(self, tmp: Path, out: Path) -> list[str]:
        """The command line, with the store's data under ``tmp``."""
        name = f"{self.module}:{self.factory}"
        if self.kind == "store":
            query = self.query.replace("{tmp}", str(tmp))
            return [sys.executable, "-m", "memconform.cli", "run", "--store",
                    f"{name}?{query}" if query else name, "--out", str(out), *self.options]
        return [sys.executable, "-m", "memconform.cli", "run", "--runtime", name,
                "--out", str(out), *self.options]


@dataclass
class Outcome:
    """What one target's run gave: its exit code and every rule's verdict."""

    target: Target
    exit_code: int
    verdicts: dict[str, str] = field(default_factory=dict)
    tail: str = ""
    reasons: dict[str, str] = field(default_factory=dict)


def targets(
    round_: int, only: str | None, variants: frozenset[str] = frozenset()
) -> dict[str, list[Target]]:
    """Family name -> its targets, the base's first (``variants``: only these
    variant modules besides the base)."""
    found: dict[str, list[Target]] = {}
    base = ROOT / "corpus" / f"round{round_}"
    for kind_folder in ("stores", "runtimes"):
        for folder in sorted((base / kind_folder).glob("*/")):
            if not (folder / "__init__.py").exists() or (only and folder.name != only):
                continue
            package = f"corpus.round{round_}.{kind_folder}.{folder.name}"
            declared = importlib.import_module(package)
            modules = ["base", *sorted(p.stem for p in folder.glob("v[0-9]*.py")
                                       if not variants or p.stem in variants)]
            found[folder.name] = [
                Target(folder.name, declared.KIND, f"{package}.{module}", factory,
                       tuple(options), getattr(declared, "QUERY", ""), package)
                for module in modules
                for factory, options in declared.TARGETS.items()
                if hasattr(importlib.import_module(f"{package}.{module}"), factory)
            ]
    return found


def run(target: Target) -> Outcome:
    """Run the kit on one target, in a folder of its own."""
    with tempfile.TemporaryDirectory(prefix="memconform-blind-") as tmp:
        data, out = Path(tmp) / "data", Path(tmp) / "report"
        data.mkdir()
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        done = subprocess.run(target.command(data, out), cwd=ROOT, env=env,
                              capture_output=True, text=True, check=False)
        outcome = Outcome(target, done.returncode, tail=(done.stdout + done.stderr)[-1500:])
        results = out / "results.json"
        if results.exists():
            report = json.loads(results.read_text(encoding="utf-8"))
            outcome.verdicts = {rule["id"]: rule["verdict"] for rule in report["rules"]}
            outcome.reasons = {rule["id"]: rule["reason"][:300] for rule in report["rules"]
                               if rule["verdict"] in REJECTING}
        cleanup = getattr(importlib.import_module(target.package), "cleanup", None)
        if cleanup is not None:
            cleanup(str(data))
    return outcome


def judge(outcomes: list[Outcome]) -> dict[str, dict[str, Any]]:
    """Variant module -> whether it was caught and by which rules."""
    bases = {o.target.factory: o for o in outcomes if o.target.module.endswith(".base")}
    judged: dict[str, dict[str, Any]] = {}
    for outcome in outcomes:
        module = outcome.target.module.rsplit(".", 1)[1]
        if module == "base":
            continue
        base = bases.get(outcome.target.factory)
        entry = judged.setdefault(module, {"caught": False, "by": {}, "exit": [], "why": {}})
        entry["exit"].append(outcome.exit_code)
        if base is None:
            continue
        for rule, verdict in outcome.verdicts.items():
            if verdict in REJECTING and base.verdicts.get(rule) in PASSING:
                entry["by"][rule] = verdict
                entry["why"].setdefault(verdict, f"{rule}: {outcome.reasons.get(rule, '')}")
        entry["caught"] = bool(entry["by"])
    return judged


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--round", type=int, default=5, dest="round_")
    parser.add_argument("--only", help="one family")
    parser.add_argument("--jobs", type=int, default=1, help="kit runs at once")
    parser.add_argument("--variant", action="append", default=[],
                        help="only this variant module (repeatable), beside the base")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    families = targets(args.round_, args.only, frozenset(args.variant))
    report: dict[str, Any] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for family, family_targets in families.items():
            outcomes = list(pool.map(run, family_targets))
            bases = [o for o in outcomes if o.target.module.endswith(".base")]
            report[family] = {
                "base": {o.target.factory: {"exit": o.exit_code, "not passed": sorted(
                    r for r, v in o.verdicts.items() if v in REJECTING)} for o in bases},
                "variants": judge(outcomes),
            }
            if not args.json:
                _print_family(family, report[family], bases)
    caught = sum(v["caught"] for f in report.values() for v in f["variants"].values())
    total = sum(len(f["variants"]) for f in report.values())
    if args.json:
        print(json.dumps({"families": report, "caught": caught, "total": total},
                         indent=2, sort_keys=True))
    else:
        print(f"caught {caught} of {total}")
    return 0


def _print_family(family: str, entry: dict[str, Any], bases: list[Outcome]) -> None:
    print(f"== {family}")
    for base in bases:
        print(f"   base {base.target.factory}: exit {base.exit_code}; not passed: "
              f"{', '.join(entry['base'][base.target.factory]['not passed']) or 'none'}")
        if base.exit_code not in (0, 1):
            print("   " + base.tail.replace("\n", "\n   "))
    for module, verdict in sorted(entry["variants"].items()):
        by = ", ".join(f"{r} {v}" for r, v in sorted(verdict["by"].items()))
        print(f"   {'CAUGHT' if verdict['caught'] else 'missed'} {module}: {by or '-'}")


if __name__ == "__main__":
    sys.exit(main())
