"""A correct runtime for the ``candidates`` and ``persisted-state`` profiles.

One runtime object declares both profiles and dispatches on ``script["profile"]``:

- ``candidates`` (document 003): :class:`CandidatesPackage`, an agent package
  answering a generation service. Each input brings its own full-history memory
  (``history``, ``summary``, ``memory_list`` plus any key of the caller's) and
  asks for N candidates; an over-long commander prompt is summarized once per
  input and the summary shared; every candidate returns a decision, a complete
  replacement memory and its internal steps.
- ``persisted-state`` (document 004): :class:`StateAgent`, jobs whose working
  state is one record (compare-and-set, written after every verified step, read
  at the start of every step), resumable from the record alone, and durable
  facts with provenance, recheck dates, a cap and a confirmation gate.

It is written on the public API only (``memconform.contract``,
``memconform.values``, ``memconform.harness.environment``). Every decision is a
method, so the variants of this family override one method each.
``make()`` builds the runtime.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from memconform.contract import ConflictError, StoreError
from memconform.harness.environment import ScriptedFailure, ScriptError
from memconform.values import Fact, JSONValue, Message, StateEntry

__all__ = ["CandidatesPackage", "StateAgent", "StateCandsRuntime", "make"]


# =====================================================================================
# candidates
# =====================================================================================

DEFAULT_THRESHOLD = 5000
SUMMARY_TASK = "Write a new summary of the conversation above."


class BadMemory(Exception):
    """The supplied memory does not fit the full-history schema."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(f"memory: {problem}" if key == "memory" else f"memory.{key}: {problem}")
        self.key = key


class Prompt:
    """A rendered prompt and the structured elements it came from."""

    def __init__(self, text: str, elements: dict[str, JSONValue]) -> None:
        self.text = text
        self.elements = elements


class CandidatesPackage:
    """Answers every request of one candidates script, in order.

    It keeps no interaction state: the only things it holds are its
    configuration and the environment. ``sent`` (the answers already given) is
    the service's side: it resolves ``memory_from``.
    """

    def __init__(self, script: Mapping[str, Any], env: Any) -> None:
        self.env = env
        package = script.get("package") or {}
        self.threshold = int(package.get("summary_threshold", DEFAULT_THRESHOLD))
        self.order = str(package.get("order", "request"))
        self.requests = list(script.get("requests") or [])

    # -- the service loop -------------------------------------------------------------

    def run(self) -> dict[str, JSONValue]:
        sent: dict[str, list[list[dict[str, JSONValue]]]] = {}
        responses: list[JSONValue] = []
        for request in self.requests:
            request_id = str(request["id"])
            inputs = list(request["inputs"])
            memories = [self.supplied_memory(spec, sent) for spec in inputs]
            answers = self.answer_request(request_id, inputs, memories)
            answers = json.loads(json.dumps(answers))  # exactly what was sent, no aliasing
            sent[request_id] = answers
            responses.append({
                "request": request_id,
                "inputs": [
                    {"input_id": str(spec["input_id"]), "candidates": json.loads(json.dumps(a))}
                    for spec, a in zip(inputs, answers, strict=True)
                ],
            })
        return {
            "package": {"summary_threshold": self.threshold, "order": self.order},
            "responses": responses,
        }

    def supplied_memory(self, spec: Mapping[str, Any], sent: Mapping[str, Any]) -> JSONValue:
        source = spec.get("memory_from")
        if source is None:
            return copy.deepcopy(spec.get("memory"))
        answers = sent.get(str(source["request"]))
        if answers is None:
            raise ScriptError(f"memory_from: no earlier request {source['request']!r}")
        try:
            entry = answers[int(source.get("input", 0))][int(source["candidate"])]
        except (IndexError, KeyError):
            raise ScriptError("memory_from: that request sent no such candidate") from None
        if "memory" not in entry:
            raise ScriptError("memory_from: that candidate returned no memory")
        return copy.deepcopy(entry["memory"])

    def compute_order(self, count: int) -> list[int]:
        indices = list(range(count))
        return indices[::-1] if self.order == "reverse" else indices

    def in_request_order(self, computed: dict[int, Any]) -> list[Any]:
        return [computed[i] for i in sorted(computed)]

    def answer_request(
        self, request_id: str, inputs: Sequence[Mapping[str, Any]], memories: Sequence[JSONValue]
    ) -> list[list[dict[str, JSONValue]]]:
        computed = {
            i: self.answer_input(request_id, i, inputs[i], memories[i])
            for i in self.compute_order(len(inputs))
        }
        return self.in_request_order(computed)

    # -- one input ----------------------------------------------------------------------

    def answer_input(
        self, request_id: str, index: int, spec: Mapping[str, Any], raw: JSONValue
    ) -> list[dict[str, JSONValue]]:
        count = int(spec.get("candidates", 1))
        ctx = {"request": request_id, "input_id": str(spec["input_id"]), "input": index,
               "spec": spec}
        try:
            memory = self.load(raw)
        except BadMemory as exc:
            error = {"kind": "incompatible-memory", "component": None,
                     "type": "IncompatibleMemory", "message": str(exc), "key": exc.key}
            return [self.failed(error, []) for _ in range(count)]
        prompt = self.commander_prompt(memory, spec)
        shared: list[dict[str, JSONValue]] = []
        if self.should_summarize(prompt, memory):
            step, summary = self.summarize(ctx, memory)
            shared.append(step)
            if summary is None:
                error = self.error_from("summary-failed", step)
                return [self.failed(error, shared) for _ in range(count)]
            memory = self.with_summary(memory, summary)
            prompt = self.commander_prompt(memory, spec)
        computed = {
            k: self.sample(ctx, k, memory, prompt, shared) for k in self.compute_order(count)
        }
        return self.in_request_order(computed)

    def load(self, raw: JSONValue) -> dict[str, JSONValue]:
        """A private, checked, normalised copy of the supplied memory."""
        if raw is None:
            raw = {}
        if not isinstance(raw, Mapping):
            raise BadMemory("memory", f"expected an object, got {type(raw).__name__}")
        memory: dict[str, JSONValue] = copy.deepcopy(dict(raw))
        history = memory.get("history", [])
        if not isinstance(history, list):
            raise BadMemory("history", f"expected a list, got {type(history).__name__}")
        for n, message in enumerate(history):
            if not (isinstance(message, Mapping) and isinstance(message.get("role"), str)
                    and isinstance(message.get("content"), str)):
                raise BadMemory(f"history[{n}]", "expected an object with text role and content")
        summary = memory.get("summary")
        if summary is not None and not isinstance(summary, str):
            raise BadMemory("summary", f"expected text or null, got {type(summary).__name__}")
        notes = memory.get("memory_list", [])
        if not isinstance(notes, list):
            raise BadMemory("memory_list", f"expected a list, got {type(notes).__name__}")
        memory["history"], memory["summary"], memory["memory_list"] = history, summary, notes
        return memory

    # -- prompts -------------------------------------------------------------------------

    @staticmethod
    def lines_of(messages: Sequence[Mapping[str, Any]]) -> list[str]:
        return [f"{m['role']}: {m['content']}" for m in messages]

    def commander_prompt(self, memory: Mapping[str, Any], spec: Mapping[str, Any]) -> Prompt:
        tools = list(spec.get("tools") or [])
        attributes = spec.get("attributes") or {}
        summary = memory.get("summary") or None
        lines: list[str] = []
        elements: dict[str, JSONValue] = {}
        if tools:
            lines.append("tools: " + ", ".join(tools))
            elements["tools"] = tools
        if attributes:
            lines.append("attributes: "
                         + json.dumps(attributes, sort_keys=True, separators=(",", ":")))
            elements["attributes"] = copy.deepcopy(dict(attributes))
        if summary:
            lines.append(f"summary: {summary}")
            elements["summary"] = summary
        messages = [*copy.deepcopy(list(memory.get("history") or [])),
                    {"role": "user", "content": str(spec["instruction"])}]
        lines.extend(self.lines_of(messages))
        lines.append("assistant:")
        elements["messages"] = messages
        return Prompt("\n".join(lines), elements)

    def summarizer_prompt(self, memory: Mapping[str, Any]) -> Prompt:
        history = copy.deepcopy(list(memory.get("history") or []))
        summary = memory.get("summary") or None
        lines = [f"summary: {summary}"] if summary else []
        lines.extend(self.lines_of(history))
        lines.append(SUMMARY_TASK)
        return Prompt("\n".join(lines), {"previous_summary": summary, "messages": history})

    # -- summarizing ---------------------------------------------------------------------

    def should_summarize(self, prompt: Prompt, memory: Mapping[str, Any]) -> bool:
        return len(prompt.text) > self.threshold and bool(memory.get("history"))

    def summarize(
        self, ctx: Mapping[str, Any], memory: Mapping[str, Any]
    ) -> tuple[dict[str, JSONValue], str | None]:
        step, output = self.call("summarizer", ctx, None, self.summarizer_prompt(memory))
        if output is not None and not output.strip():
            step["error"] = {"type": "InvalidSummary",
                             "message": "the summarizer returned a blank summary"}
            output = None
        return step, output

    def with_summary(self, memory: Mapping[str, Any], summary: str) -> dict[str, JSONValue]:
        updated = copy.deepcopy(dict(memory))
        updated["summary"] = summary
        updated["history"] = []
        return updated

    # -- candidates ----------------------------------------------------------------------

    def sample(
        self,
        ctx: Mapping[str, Any],
        candidate: int,
        memory: Mapping[str, Any],
        prompt: Prompt,
        shared: Sequence[dict[str, JSONValue]],
    ) -> dict[str, JSONValue]:
        step, output = self.call("commander", ctx, candidate, prompt)
        steps = [*copy.deepcopy(list(shared)), step]
        if output is None:
            return self.failed(self.error_from("commander-failed", step), steps)
        return {
            "status": "ok",
            "decision": self.decision(output),
            "memory": self.candidate_memory(memory, str(ctx["spec"]["instruction"]), output),
            "internal_steps": self.numbered(steps),
        }

    def candidate_memory(
        self, base: Mapping[str, Any], instruction: str, output: str
    ) -> dict[str, JSONValue]:
        memory = copy.deepcopy(dict(base))
        memory["history"] = [*memory["history"], {"role": "user", "content": instruction},
                             {"role": "assistant", "content": output}]
        return memory

    @staticmethod
    def decision(output: str) -> dict[str, JSONValue]:
        try:
            value = json.loads(output)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
        return {"say": output, "action": {}}

    # -- component calls ------------------------------------------------------------------

    def call(
        self, component: str, ctx: Mapping[str, Any], candidate: int | None, prompt: Prompt
    ) -> tuple[dict[str, JSONValue], str | None]:
        step: dict[str, JSONValue] = {
            "id": None, "component": component, "origin": "model",
            "full_prompt": prompt.text, "input_elements": copy.deepcopy(prompt.elements),
            "output_raw": None,
        }
        request = {"request": ctx["request"], "input_id": ctx["input_id"],
                   "input": ctx["input"], "candidate": candidate, "prompt": prompt.text,
                   "input_elements": copy.deepcopy(prompt.elements)}
        coached = self.coached(ctx["spec"], component, candidate)
        if coached is not None:
            step["origin"] = "coaching"
            self.env.emit("coaching", component=component, output=coached, **request)
            step["output_raw"] = coached
            return step, coached
        try:
            reply = self.env.model(component, request)
        except ScriptedFailure as failure:
            step["error"] = {"type": failure.type_name, "message": str(failure)}
            return step, None
        output = str(reply["reply"])
        step["output_raw"] = output
        return step, output

    @staticmethod
    def coached(spec: Mapping[str, Any], component: str, candidate: int | None) -> str | None:
        for item in spec.get("coaching") or []:
            if item.get("component") != component:
                continue
            if component == "summarizer" or item.get("candidate") == candidate:
                return str(item["output"])
        return None

    # -- answers ---------------------------------------------------------------------------

    @staticmethod
    def numbered(steps: Sequence[Mapping[str, Any]]) -> list[dict[str, JSONValue]]:
        return [{**copy.deepcopy(dict(step)), "id": f"step-{n}"} for n, step in enumerate(steps)]

    @staticmethod
    def error_from(kind: str, step: Mapping[str, Any]) -> dict[str, JSONValue]:
        cause = step.get("error") or {}
        return {"kind": kind, "component": step["component"],
                "type": str(cause.get("type", "Error")), "message": str(cause.get("message", ""))}

    def failed(
        self, error: Mapping[str, Any], steps: Sequence[Mapping[str, Any]]
    ) -> dict[str, JSONValue]:
        return {"status": "error", "error": copy.deepcopy(dict(error)),
                "internal_steps": self.numbered(steps)}


# =====================================================================================
# persisted-state
# =====================================================================================

RECORD = "record"
DAY = 86_400
LIFETIMES = {"preference": 365 * DAY, "correction": 365 * DAY,
             "observation": 90 * DAY, "inference": 30 * DAY}
IMPERATIVES = ("always", "never", "from now on", "you must", "you should", "do not",
               "don't", "ignore", "make sure to")


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _field(result: JSONValue, path: str) -> tuple[bool, JSONValue]:
    value = result
    for part in path.split(".")[1:]:
        if not isinstance(value, Mapping) or part not in value:
            return False, None
        value = value[part]
    return True, copy.deepcopy(value)


def _fill(args: JSONValue, values: Mapping[str, JSONValue]) -> tuple[JSONValue, str | None]:
    """Replace each ``"$name"`` string by the record's value; the first missing name."""
    if isinstance(args, str) and args.startswith("$") and len(args) > 1:
        if args[1:] not in values:
            return None, args[1:]
        return copy.deepcopy(values[args[1:]]), None
    if isinstance(args, Mapping):
        out: dict[str, JSONValue] = {}
        for key, item in args.items():
            out[key], missing = _fill(item, values)
            if missing:
                return None, missing
        return out, None
    if isinstance(args, list):
        items = []
        for item in args:
            new, missing = _fill(item, values)
            if missing:
                return None, missing
            items.append(new)
        return items, None
    return copy.deepcopy(args), None


def _kv(key: str, value: JSONValue) -> str:
    return f"{key} = {json.dumps(value, sort_keys=True, ensure_ascii=False)}"


def _refusal(exc: StoreError) -> dict[str, JSONValue]:
    return {"type": type(exc).__name__, "message": str(exc)}


class StateAgent:
    """Executes one persisted-state script: jobs, resumes, facts, clock, exports."""

    def __init__(self, script: Mapping[str, Any], env: Any) -> None:
        self.env = env
        self.script = script
        self.namespace = str(script["namespace"])
        knowledge = script.get("knowledge") or {}
        self.kb = f"{self.namespace}/kb/{knowledge.get('scope', 'user')}"
        self.kb_name = str(knowledge.get("scope", "user"))
        self.cap = knowledge.get("cap")
        self.lifetimes = self.lifetimes_of(knowledge.get("lifetimes") or {})
        self.jobs_seen: list[str] = []

    @staticmethod
    def lifetimes_of(configured: Mapping[str, int]) -> dict[str, int]:
        return {**LIFETIMES, **{k: int(v) for k, v in configured.items()}}

    # -- scopes ----------------------------------------------------------------------------

    def job_scope(self, job_id: str) -> str:
        return f"{self.namespace}/job/{job_id}"

    def log_thread(self, job_id: str) -> str:
        return f"{self.job_scope(job_id)}/log"

    # -- the record -------------------------------------------------------------------------

    def load_record(self, job_id: str) -> StateEntry | None:
        return self.env.store.read_state(self.job_scope(job_id), RECORD)

    def save_record(self, job_id: str, value: JSONValue, version: int | None) -> StateEntry:
        return self.env.store.write_state(self.job_scope(job_id), RECORD, value, version)

    def update(
        self, job_id: str, entry: StateEntry, change: Callable[[dict[str, Any]], None]
    ) -> StateEntry:
        """Compare-and-set ``change`` against the version read; on a conflict read
        the newer record and apply the change to it (once)."""
        record = copy.deepcopy(entry.value)
        change(record)
        try:
            return self.save_record(job_id, record, entry.version)
        except ConflictError:
            fresh = self.load_record(job_id)
            if fresh is None:
                raise
            record = copy.deepcopy(fresh.value)
            change(record)
            return self.save_record(job_id, record, fresh.version)

    @staticmethod
    def plan_of(job: Mapping[str, Any]) -> dict[str, JSONValue]:
        steps = [{
            "name": str(s["name"]), "tool": str(s["tool"]),
            "args": copy.deepcopy(dict(s.get("args") or {})),
            "record": dict(s.get("record") or {}),
            "marks": copy.deepcopy(dict(s.get("marks") or {})),
            "status": "pending",
        } for s in job["steps"]]
        return {"goal": str(job.get("goal", "unstated")), "steps": steps, "values": {},
                "blocked": None}

    # -- jobs --------------------------------------------------------------------------------

    def start_job(self, job: Mapping[str, Any], stop_after: int | None) -> dict[str, Any]:
        job_id = str(job["id"])
        if self.load_record(job_id) is not None:
            raise ScriptError(f"job {job_id!r} already has a record; resume it instead")
        self.save_record(job_id, self.plan_of(job), None)
        return self.run_job(job_id, stop_after=stop_after, resumed=False)

    def resume_job(self, job_id: str) -> dict[str, Any]:
        if self.load_record(job_id) is None:
            return {"job": job_id, "outcome": "unknown-job", "steps_run": []}
        return self.run_job(job_id, stop_after=None, resumed=True)

    def step_count(self, job_id: str) -> int:
        entry = self.load_record(job_id)
        if entry is None or not isinstance(entry.value, Mapping):
            return 0
        return len(entry.value.get("steps") or [])

    def first_step(self, job_id: str, resumed: bool) -> int:
        """Where to start looking for work; done steps are skipped anyway."""
        return 0

    def model_view(self, job_id: str, record: Mapping[str, Any], index: int) -> JSONValue:
        return {"job": job_id, "step": copy.deepcopy(record["steps"][index]),
                "record": copy.deepcopy(dict(record))}

    def run_job(self, job_id: str, *, stop_after: int | None, resumed: bool) -> dict[str, Any]:
        ran: list[str] = []
        outcome = "completed"
        for index in range(self.first_step(job_id, resumed), self.step_count(job_id)):
            entry = self.load_record(job_id)  # every step starts from the stored record
            if entry is None or not isinstance(entry.value, Mapping):
                outcome = "lost-record"
                break
            step = entry.value["steps"][index]
            if self.already_done(step, index, entry.value, resumed):
                continue
            if step.get("status") == "failed":
                outcome = "failed"
                break
            self.env.model("agent", self.model_view(job_id, entry.value, index))
            args, missing = _fill(step.get("args") or {}, entry.value.get("values") or {})
            if missing is not None:
                self.block_step(job_id, entry, index, f"value {missing!r} is not in the record")
                outcome = "blocked"
                break
            entry = self.before_tool(job_id, entry, index)
            try:
                result = self.env.tool(str(step["tool"]), args,
                                       call_id=f"{job_id}/{step['name']}")
            except ScriptedFailure as failure:
                self.fail_step(job_id, entry, index, failure.error)
                self.log_step(job_id, step, args, None, failure.error)
                ran.append(str(step["name"]))
                outcome = "failed"
                break
            self.finish_step(job_id, entry, index, result)
            self.log_step(job_id, step, args, result, None)
            ran.append(str(step["name"]))
            if stop_after is not None and index + 1 == stop_after:
                outcome = "handed-off"
                break
        self.env.emit("job_outcome", job=job_id, outcome=outcome, resumed=resumed)
        return {"job": job_id, "outcome": outcome, "steps_run": ran, "resumed": resumed}

    def already_done(
        self, step: Mapping[str, Any], index: int, record: Mapping[str, Any], resumed: bool
    ) -> bool:
        return step.get("status") == "done"

    def before_tool(self, job_id: str, entry: StateEntry, index: int) -> StateEntry:
        """Nothing is known about the step before its tool ran: nothing is written."""
        return entry

    def finish_step(self, job_id: str, entry: StateEntry, index: int,
                    result: JSONValue) -> StateEntry:
        def change(record: dict[str, Any]) -> None:
            step = record["steps"][index]
            values = record.setdefault("values", {})
            for name, path in (step.get("record") or {}).items():
                found, value = _field(result, str(path))
                if found:
                    values[name] = value
            values.update(copy.deepcopy(step.get("marks") or {}))
            step["status"] = "done"
            record["blocked"] = None

        return self.update(job_id, entry, change)

    def fail_step(self, job_id: str, entry: StateEntry, index: int,
                  error: JSONValue) -> StateEntry:
        def change(record: dict[str, Any]) -> None:
            record["steps"][index]["status"] = "failed"
            record["steps"][index]["error"] = copy.deepcopy(error)

        return self.update(job_id, entry, change)

    def block_step(self, job_id: str, entry: StateEntry, index: int, why: str) -> StateEntry:
        def change(record: dict[str, Any]) -> None:
            record["blocked"] = {"step": record["steps"][index]["name"], "on": why}

        return self.update(job_id, entry, change)

    def log_step(self, job_id: str, step: Mapping[str, Any], args: JSONValue,
                 result: JSONValue, error: JSONValue) -> None:
        """Audit only: the call and its result, one batch on the job's log thread."""
        name = str(step["name"])
        call = Message(id=f"{job_id}:{name}:call", role="assistant", text=f"call {step['tool']}",
                       parts=({"type": "tool_call", "tool": step["tool"], "args": args},),
                       run_id=job_id, metadata={"step": name})
        part: dict[str, JSONValue] = {"type": "tool_result", "tool": step["tool"]}
        if error is None:
            part["result"] = result
        else:
            part["error"] = error
        answer = Message(id=f"{job_id}:{name}:result", role="tool",
                         text="ok" if error is None else "failed", parts=(part,),
                         run_id=job_id, metadata={"step": name})
        self.env.store.append(self.log_thread(job_id), [call, answer])

    # -- durable knowledge --------------------------------------------------------------

    @staticmethod
    def is_instruction(statement: str, kind: str) -> bool:
        if kind == "instruction":
            return True
        opening = re.sub(r"^[\W_]+", "", statement.strip().lower())
        return any(opening == m or opening.startswith(m + " ") or opening.startswith(m + ",")
                   for m in IMPERATIVES)

    def build_fact(self, request: Mapping[str, Any]) -> Fact:
        kind = str(request.get("kind") or "observation")
        origin = str(request.get("origin") or "concluded")
        trust = str(request.get("trust") or ("untrusted" if origin == "copied" else "trusted"))
        lifetime = self.lifetimes.get(kind, self.lifetimes["observation"])
        recheck = _stamp(self.env.clock.now_datetime() + timedelta(seconds=lifetime))
        return Fact(subject=str(request["subject"]), statement=str(request["statement"]),
                    writer=str(request.get("writer") or "agent"),
                    source=str(request["source"]), evidence=str(request["evidence"]),
                    written_at=self.env.clock.now(), kind=kind, trust=trust, origin=origin,
                    recheck_at=recheck)

    def confirmed(self, fact: Fact) -> bool:
        return self.env.hook("confirm_durable_write", fact.to_json()).get("action") == "allow"

    def unverified(self, fact: Fact) -> bool:
        return fact.recheck_at is not None and _time(self.env.clock.now()) >= _time(fact.recheck_at)

    def eviction_order(self, facts: Sequence[Fact]) -> list[Fact]:
        def key(fact: Fact) -> tuple[int, str, str]:
            if self.unverified(fact):
                return (0, _stamp(_time(str(fact.recheck_at))), fact.subject)
            return (1, _stamp(_time(fact.written_at)), fact.subject)

        return sorted(facts, key=key)

    def make_room(self, fact: Fact) -> list[str]:
        if self.cap is None or self.env.store.get_fact(self.kb, fact.subject) is not None:
            return []
        stored = list(self.env.store.facts(self.kb))
        evicted: list[str] = []
        for victim in self.eviction_order(stored):
            if len(stored) - len(evicted) < int(self.cap):
                break
            self.env.store.forget(self.kb, victim.subject)
            evicted.append(victim.subject)
        return evicted

    def remember(self, request: Mapping[str, Any]) -> dict[str, JSONValue]:
        subject = str(request["subject"])
        outcome = "stored"
        if self.is_instruction(str(request["statement"]), str(request.get("kind") or "")):
            observation = request.get("observation")
            if not observation:
                self.env.emit("durable_write_refused", subject=subject, reason="instruction")
                return {"do": "remember", "subject": subject, "outcome": "refused-instruction"}
            request = {**request, "statement": observation, "kind": "observation"}
            outcome = "stored-observation"
        fact = self.build_fact(request)
        if not self.confirmed(fact):
            return {"do": "remember", "subject": subject, "outcome": "denied"}
        evicted = self.make_room(fact)
        self.env.store.put_fact(self.kb, fact)
        return {"do": "remember", "subject": subject, "outcome": outcome,
                "evicted": evicted, "fact": fact.to_json()}

    def present(self, fact: Fact) -> dict[str, JSONValue]:
        status = "unverified" if self.unverified(fact) else "current"
        labels: list[str] = []
        if status == "unverified":
            labels.append(f"unverified since {fact.recheck_at}")
        if fact.trust == "untrusted":
            labels.append(f"claim from {fact.source}, untrusted, not established")
        labels.append(f"copied from {fact.source}" if fact.origin == "copied"
                      else f"concluded by {fact.writer}")
        return {"subject": fact.subject, "statement": fact.statement, "status": status,
                "trust": fact.trust, "origin": fact.origin, "source": fact.source,
                "shown_as": "claim" if fact.trust == "untrusted" else "fact",
                "text": f"[{'; '.join(labels)}] {fact.subject}: {fact.statement}"}

    def recall(self, subject: str | None) -> dict[str, JSONValue]:
        if subject is None:
            facts = list(self.env.store.facts(self.kb))
        else:
            one = self.env.store.get_fact(self.kb, subject)
            facts = [] if one is None else [one]
        shown = [self.present(f) for f in facts]
        self.env.model("agent", {"knowledge": copy.deepcopy(shown)})
        return {"do": "recall", "subject": subject, "facts": shown}

    def forget(self, subject: str) -> dict[str, JSONValue]:
        return {"do": "forget", "subject": subject,
                "removed": bool(self.env.store.forget(self.kb, subject))}

    # -- export ---------------------------------------------------------------------------

    def export(self, jobs: Sequence[str] | None) -> str:
        lines = ["# persisted state", _kv("knowledge", self.kb_name), ""]
        for job_id in sorted(jobs if jobs is not None else self.jobs_seen):
            entry = self.load_record(job_id) if self.env.store.has("state") else None
            record = None if entry is None else entry.value
            lines.append(f"[job {json.dumps(job_id, ensure_ascii=False)}]")
            fields: dict[str, JSONValue] = {}
            if isinstance(record, Mapping):
                fields["goal"] = record.get("goal")
                fields["blocked"] = record.get("blocked")
                for n, step in enumerate(record.get("steps") or [], 1):
                    brief = {"name": step.get("name"), "status": step.get("status")}
                    if step.get("error") is not None:
                        brief["error"] = step.get("error")
                    fields[f"step.{n:03d}"] = brief
                for name, value in (record.get("values") or {}).items():
                    fields[f"values.{name}"] = value
            else:
                fields["record"] = None
            lines.extend(_kv(k, fields[k]) for k in sorted(fields))
            lines.append("")
        facts = self.env.store.facts(self.kb) if self.env.store.has("knowledge") else []
        for fact in sorted(facts, key=lambda f: f.subject):
            data = fact.to_json()
            subject = data.pop("subject")
            lines.append(f"[fact {json.dumps(subject, ensure_ascii=False)}]")
            lines.extend(_kv(k, data[k]) for k in sorted(data))
            lines.append("")
        return "\n".join(lines).rstrip("\n") + "\n"

    # -- the script ---------------------------------------------------------------------

    def job_refused(self, job_id: str, exc: StoreError) -> dict[str, Any]:
        self.env.emit("job_outcome", job=job_id, outcome="failed", resumed=False)
        return {"job": job_id, "outcome": "failed", "error": _refusal(exc)}

    def run(self) -> dict[str, JSONValue]:
        outcomes: list[dict[str, JSONValue]] = []
        exports: list[str] = []
        for action in self.script.get("actions") or []:
            do = action["do"]
            if do in ("job", "resume") and not self.env.store.has("state"):
                outcomes.append({"do": do, "outcome": "unsupported", "needs": "state"})
                continue
            if do in ("remember", "recall", "forget") and not self.env.store.has("knowledge"):
                outcomes.append({"do": do, "outcome": "unsupported", "needs": "knowledge"})
                continue
            if do in ("job", "resume"):
                job_id = str(action["job"]["id"] if do == "job" else action["job"])
                if job_id not in self.jobs_seen:
                    self.jobs_seen.append(job_id)
                try:
                    if do == "job":
                        result = self.start_job(action["job"], action.get("stop_after"))
                    else:
                        result = self.resume_job(job_id)
                except StoreError as exc:
                    result = self.job_refused(job_id, exc)
                outcomes.append({"do": do, **result})
            elif do == "remember":
                try:
                    outcomes.append(self.remember(action["fact"]))
                except StoreError as exc:
                    outcomes.append({"do": "remember", "subject": str(action["fact"]["subject"]),
                                     "outcome": "failed", "error": _refusal(exc)})
            elif do == "recall":
                outcomes.append(self.recall(action.get("subject")))
            elif do == "forget":
                outcomes.append(self.forget(str(action["subject"])))
            elif do == "advance":
                outcomes.append({"do": "advance",
                                 "now": self.env.clock.advance(float(action["seconds"]))})
            elif do == "export":
                text = self.export(action.get("jobs"))
                exports.append(text)
                outcomes.append({"do": "export", "text": text})
            else:
                raise ScriptError(f"actions: unknown action {do!r}")
        return {"namespace": self.namespace, "outcomes": outcomes, "exports": exports}


# =====================================================================================
# the runtime
# =====================================================================================


class StateCandsRuntime:
    """Both profiles in one runtime, dispatching on ``script["profile"]``."""

    profiles = frozenset({"candidates", "persisted-state"})
    package_class: type[CandidatesPackage] = CandidatesPackage
    agent_class: type[StateAgent] = StateAgent

    def execute(self, script: Mapping[str, Any], env: Any) -> dict[str, JSONValue]:
        profile = script.get("profile")
        if profile == "candidates":
            return self.package_class(script, env).run()
        if profile == "persisted-state":
            return self.agent_class(script, env).run()
        raise ScriptError(f"profile: this runtime executes candidates and persisted-state, "
                          f"got {profile!r}")


def make() -> StateCandsRuntime:
    """The correct runtime of this family."""
    return StateCandsRuntime()
