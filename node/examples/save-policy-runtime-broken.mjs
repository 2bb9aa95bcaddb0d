// A deliberately broken twin of save-policy-runtime.mjs: the same agent loop
// served with realistic save-policy bugs switched on, to show the kit catching
// each of them. Every defect is a `defects.has("...")` branch in the example.
//
//   message-defers-input   under `message`, the user input is held back and
//                          appended only once the run has its response outcome
//                          (after the answer); a failed or suspended run never
//                          stores it. Breaks SP-001, SP-005, SP-006, SP-007,
//                          SP-009, SP-012, SP-014, SP-020, SP-021, SP-023, SP-024,
//                          SP-025, SP-026, SP-027, SP-028, SP-030, SP-031, SP-032.
//   run-stores-failed-run  under `run`, the failure handler of a failed or
//                          cancelled run appends the run's messages anyway.
//                          Breaks SP-009, SP-010, SP-011, SP-014, SP-020, SP-028,
//                          SP-030, SP-031, SP-032.
//   blocked-input-stored   an input the input guardrail blocked is stored anyway
//                          ("to keep the transcript"). Breaks SP-004.
//   error-record-skipped   the failure handler never calls record_error.
//                          Breaks SP-013, SP-014, SP-015, SP-020 (and SP-016 is
//                          not run: its premise, a record_error call, never holds).
// These are the rules `memconform run --profile save-policy` failed with each
// defect alone. With all four on it fails 21 rules: the union above except
// SP-010 and SP-015, which only the generated-runs property check catches, and
// it stops at its first counterexample, which another defect then explains.
//
// Run it under the kit:
//
//   memconform run --runtime "stdio:node node/examples/save-policy-runtime-broken.mjs" \
//       --profile save-policy --out /tmp/rt-node-broken
//
// To judge some defects alone, name them (comma-separated) as the argument:
//
//   memconform run --runtime "stdio:node node/examples/save-policy-runtime-broken.mjs run-stores-failed-run" ...
//
// With no argument, all four are on. The choice is an argument, not an
// environment variable, because the kit's fresh processes (the kill and
// restart scenarios, "another machine") get an environment of PATH and TMPDIR
// only, while every process it starts runs the same command line.

import { serve } from "../runtime.mjs";
import { makeRuntime } from "./save-policy-runtime.mjs";

export const DEFECTS = [
  "message-defers-input",
  "run-stores-failed-run",
  "blocked-input-stored",
  "error-record-skipped",
];

function chosenDefects() {
  const asked = process.argv[2];
  if (asked === undefined || asked.trim() === "") return new Set(DEFECTS);
  const names = asked.split(",").map((name) => name.trim()).filter(Boolean);
  const unknown = names.filter((name) => !DEFECTS.includes(name));
  if (unknown.length > 0) {
    console.error(`unknown defect ${unknown.join(", ")}; known: ${DEFECTS.join(", ")}`);
    process.exit(2);
  }
  return new Set(names);
}

serve(makeRuntime(chosenDefects()));
