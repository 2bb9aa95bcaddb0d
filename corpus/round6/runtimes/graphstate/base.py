"""graphstate: an agent runtime built as a small graph / state-machine engine.

Everything the runtime does is a walk over named nodes. A node is a method that
reads and changes one *frame* (the state of the walk) and returns the name of
the next node, or ``None`` to halt. After every node the machine calls the
walk's checkpoint hook; what a checkpoint is depends on the graph:

- ``candidates`` (document 003). One input is one graph: ``admit`` (check and
  normalise the supplied memory), ``measure`` (render the commander prompt),
  ``summarize`` (only when the prompt is too long), ``fork``. The fork opens one
  *branch* per candidate from an immutable :class:`Snapshot` of the base memory
  (its canonical JSON text), so no branch can reach another's objects; each
  branch walks ``command`` then ``settle``. The join keeps a branch's memory
  when its commander answered and discards it when it failed.
- ``persisted-state`` (document 004). A job is a state machine over its plan:
  ``load`` (read the record from the store: the checkpoint), ``think`` (the
  model sees the record and the current step), ``bind`` (fill the step's
  arguments from the record's values), ``act`` (the tool), ``settle`` (fold the
  verified result into the record), ``log`` (audit transcript). The checkpoint
  hook writes the record by compare-and-set after every node that changed it,
  so a fresh process resumes from ``load`` with nothing but the store.
  Durable knowledge is promoted through its own pipeline: classify (standing
  instructions are refused), stamp provenance and a recheck date from the
  injected clock, confirm, make room under the cap, put.

The runtime is written against the public contract only (``memconform.contract``,
``memconform.values``, ``memconform.harness.environment``) and uses nothing but
``env``. ``make()`` builds it.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from memconform.contract import ConflictError, StoreError
from memconform.harness.environment import ScriptedFailure, ScriptError
from memconform.values import Fact, JSONValue, Message, StateEntry

__all__ = ["CandidateGraph", "GraphStateRuntime", "JobMachine", "Machine", "Snapshot", "make"]


# =====================================================================================
# the engine
# =====================================================================================


class Snapshot:
    """An immutable checkpoint of JSON state, kept as its canonical text.

    ``open()`` decodes a fresh, private object every time: two branches opened
    from one snapshot never share a list or a dict."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    @classmethod
    def take(cls, value: JSONValue) -> Snapshot:
        return cls(json.dumps(value, ensure_ascii=False, allow_nan=False))

    def open(self) -> Any:
        return json.loads(self.text)


Node = Callable[[Any], "str | None"]


class Machine:
    """Walks named nodes: each returns the next node's name, or ``None`` to halt.

    ``checkpoint(name, frame)`` runs after every node, before the next starts."""

    def __init__(self, nodes: Mapping[str, Node], limit: int = 10_000) -> None:
        self.nodes = dict(nodes)
        self.limit = limit

    def walk(self, frame: Any, start: str,
             checkpoint: Callable[[str, Any], None] | None = None) -> None:
        name: str | None = start
        hops = 0
        while name is not None:
            hops += 1
            if hops > self.limit:
                raise RuntimeError(f"graph did not halt after {self.limit} nodes")
            node = self.nodes[name]
            following = node(frame)
            if checkpoint is not None:
                checkpoint(name, frame)
            name = following


# =====================================================================================
# candidates (document 003)
# =====================================================================================

DEFAULT_THRESHOLD = 5000
SUMMARIZE_ASK = "Write a new summary of the conversation above."
FULL_HISTORY_KEYS = ("history", "summary", "memory_list")


class IncompatibleMemory(Exception):
    """The supplied memory does not fit the full-history schema; ``key`` names where."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


@dataclass
class Rendered:
    """A prompt as the component receives it and the elements it was rendered from."""

    text: str
    elements: dict[str, JSONValue]


@dataclass
class InputFrame:
    """The walk of one input's graph."""

    request: str
    index: int
    spec: Mapping[str, Any]
    supplied: JSONValue
    base: Snapshot | None = None
    prompt: Rendered | None = None
    shared_steps: list[dict[str, JSONValue]] = field(default_factory=list)
    error: dict[str, JSONValue] | None = None
    answers: list[dict[str, JSONValue]] = field(default_factory=list)

    @property
    def count(self) -> int:
        return int(self.spec.get("candidates", 1))

    @property
    def instruction(self) -> str:
        return str(self.spec["instruction"])


@dataclass
class BranchFrame:
    """The walk of one candidate's branch: its own memory, its own steps."""

    owner: InputFrame
    candidate: int
    memory: dict[str, JSONValue]
    prompt: Rendered
    steps: list[dict[str, JSONValue]]
    output: str | None = None
    answer: dict[str, JSONValue] | None = None


class CandidateGraph:
    """Answers the requests of one candidates script, one graph walk per input."""

    def __init__(self, script: Mapping[str, Any], env: Any) -> None:
        self.env = env
        package = script.get("package") or {}
        self.threshold = int(package.get("summary_threshold", DEFAULT_THRESHOLD))
        self.order = str(package.get("order", "request"))
        self.requests = list(script.get("requests") or [])
        self.input_graph = Machine({"admit": self.admit, "measure": self.measure,
                                    "summarize": self.summarize, "fork": self.fork})
        self.branch_graph = Machine({"command": self.command, "settle": self.settle})

    # -- the service side ----------------------------------------------------------

    def run(self) -> dict[str, JSONValue]:
        answered: dict[str, list[list[dict[str, JSONValue]]]] = {}
        responses: list[JSONValue] = []
        for request in self.requests:
            rid = str(request["id"])
            specs = list(request["inputs"])
            supplied = [self.supplied_memory(spec, answered) for spec in specs]
            frames = [InputFrame(rid, i, spec, supplied[i]) for i, spec in enumerate(specs)]
            for i in self.schedule(len(frames)):
                self.input_graph.walk(frames[i], "admit")
            answered[rid] = [frame.answers for frame in frames]
            responses.append({"request": rid, "inputs": [
                {"input_id": str(frame.spec["input_id"]), "candidates": frame.answers}
                for frame in frames]})
        return {"package": {"summary_threshold": self.threshold, "order": self.order},
                "responses": responses}

    def supplied_memory(self, spec: Mapping[str, Any],
                        answered: Mapping[str, list[list[dict[str, JSONValue]]]]) -> JSONValue:
        """The memory the service sends with an input, as text on the wire."""
        source = spec.get("memory_from")
        if source is None:
            return Snapshot.take(spec.get("memory")).open()
        earlier = answered.get(str(source["request"]))
        if earlier is None:
            raise ScriptError(f"memory_from.request: no earlier request {source['request']!r}")
        try:
            answer = earlier[int(source.get("input", 0))][int(source["candidate"])]
        except IndexError:
            raise ScriptError("memory_from: that request has no such candidate") from None
        if "memory" not in answer:
            raise ScriptError("memory_from: that candidate returned no memory")
        return Snapshot.take(answer["memory"]).open()

    def schedule(self, count: int) -> list[int]:
        """The order inputs and candidates are computed in (answers keep request order)."""
        order = list(range(count))
        return order[::-1] if self.order == "reverse" else order

    # -- the input graph ---------------------------------------------------------------

    def admit(self, frame: InputFrame) -> str | None:
        try:
            memory = self.normalise(frame.supplied)
        except IncompatibleMemory as exc:
            error = {"kind": "incompatible-memory", "component": None,
                     "type": "IncompatibleMemoryError", "message": str(exc), "key": exc.key}
            frame.answers = [self.failure(error, []) for _ in range(frame.count)]
            return None
        frame.base = self.freeze(memory)
        return "measure"

    def normalise(self, raw: JSONValue) -> dict[str, JSONValue]:
        """Check the full-history schema; fill absent keys; keep every other key."""
        if raw is None:
            raw = {}
        if not isinstance(raw, dict):
            raise IncompatibleMemory("memory", f"memory must be an object, not {_kind(raw)}")
        history = raw.get("history", [])
        if not isinstance(history, list):
            raise IncompatibleMemory("history", f"history must be a list, not {_kind(history)}")
        self.check_messages(history)
        summary = raw.get("summary")
        if summary is not None and not isinstance(summary, str):
            raise IncompatibleMemory("summary", f"summary must be text or null, not "
                                                f"{_kind(summary)}")
        notes = raw.get("memory_list", [])
        if not isinstance(notes, list):
            raise IncompatibleMemory("memory_list", f"memory_list must be a list, not "
                                                    f"{_kind(notes)}")
        memory = dict(raw)
        memory["history"], memory["summary"], memory["memory_list"] = history, summary, notes
        return memory

    def check_messages(self, history: Sequence[JSONValue]) -> None:
        for n, message in enumerate(history):
            where = f"history[{n}]"
            if not isinstance(message, dict):
                raise IncompatibleMemory(where, f"{where} is not a message object")
            for part in ("role", "content"):
                if not isinstance(message.get(part), str):
                    raise IncompatibleMemory(where, f"{where}.{part} must be text")

    def freeze(self, memory: Mapping[str, JSONValue]) -> Snapshot:
        return Snapshot.take(memory)

    def thaw(self, snapshot: Snapshot) -> dict[str, JSONValue]:
        value: dict[str, JSONValue] = snapshot.open()
        return value

    def measure(self, frame: InputFrame) -> str | None:
        assert frame.base is not None
        memory = self.thaw(frame.base)
        frame.prompt = self.commander_prompt(memory, frame.spec)
        if self.too_long(frame.prompt.text) and memory["history"]:
            return "summarize"
        return "fork"

    def too_long(self, prompt: str) -> bool:
        return len(prompt) > self.threshold

    def summarize(self, frame: InputFrame) -> str | None:
        assert frame.base is not None
        memory = self.thaw(frame.base)
        step, output = self.invoke("summarizer", frame, None, self.summarizer_prompt(memory))
        if output is not None and not output.strip():
            step["error"] = {"type": "BlankSummaryError",
                             "message": "the summarizer answered a blank summary"}
            output = None
        frame.shared_steps.append(step)
        if output is None:
            error = self.error_of("summary-failed", step)
            frame.answers = [self.failure(error, frame.shared_steps) for _ in range(frame.count)]
            return None
        memory["summary"] = output
        memory["history"] = []
        frame.base = self.freeze(memory)
        frame.prompt = self.commander_prompt(memory, frame.spec)  # measured once: not again
        return "fork"

    def fork(self, frame: InputFrame) -> str | None:
        assert frame.base is not None
        assert frame.prompt is not None
        answers: dict[int, dict[str, JSONValue]] = {}
        for k in self.schedule(frame.count):
            branch = self.open_branch(frame, k)
            self.branch_graph.walk(branch, "command")
            assert branch.answer is not None
            answers[k] = branch.answer
        frame.answers = [answers[k] for k in range(frame.count)]
        return None

    def open_branch(self, frame: InputFrame, candidate: int) -> BranchFrame:
        assert frame.base is not None
        assert frame.prompt is not None
        return BranchFrame(owner=frame, candidate=candidate, memory=self.thaw(frame.base),
                           prompt=Rendered(frame.prompt.text,
                                           copy.deepcopy(frame.prompt.elements)),
                           steps=copy.deepcopy(frame.shared_steps))

    # -- the branch graph -----------------------------------------------------------------

    def command(self, branch: BranchFrame) -> str | None:
        step, branch.output = self.invoke("commander", branch.owner, branch.candidate,
                                          branch.prompt)
        branch.steps.append(step)
        return "settle"

    def settle(self, branch: BranchFrame) -> str | None:
        frame = branch.owner
        if branch.output is None:  # the join discards a failed branch's memory
            branch.answer = self.failure(self.error_of("commander-failed", branch.steps[-1]),
                                         branch.steps)
            return None
        branch.memory["history"].append({"role": "user", "content": frame.instruction})
        branch.memory["history"].append({"role": "assistant", "content": branch.output})
        branch.answer = {"status": "ok", "decision": self.decision(branch.output),
                         "memory": branch.memory, "internal_steps": self.numbered(branch.steps)}
        return None

    # -- prompts -----------------------------------------------------------------------------

    def commander_prompt(self, memory: Mapping[str, Any], spec: Mapping[str, Any]) -> Rendered:
        elements: dict[str, JSONValue] = {}
        lines: list[str] = []
        tools = [str(t) for t in spec.get("tools") or []]
        if tools:
            elements["tools"] = tools
            lines.append("tools: " + ", ".join(tools))
        attributes = spec.get("attributes")
        if attributes:
            elements["attributes"] = copy.deepcopy(dict(attributes))
            lines.append("attributes: " + json.dumps(attributes, ensure_ascii=False,
                                                     sort_keys=True, separators=(",", ":")))
        summary = memory.get("summary")
        if summary:
            elements["summary"] = summary
            lines.append("summary: " + summary)
        messages = [{"role": str(m["role"]), "content": str(m["content"])}
                    for m in memory.get("history") or []]
        messages.append({"role": "user", "content": str(spec["instruction"])})
        elements["messages"] = messages
        lines.extend(f"{m['role']}: {m['content']}" for m in messages)
        lines.append("assistant:")
        return Rendered("\n".join(lines), elements)

    def summarizer_prompt(self, memory: Mapping[str, Any]) -> Rendered:
        summary = memory.get("summary")
        messages = [{"role": str(m["role"]), "content": str(m["content"])}
                    for m in memory.get("history") or []]
        lines = [f"summary: {summary}"] if summary else []
        lines.extend(f"{m['role']}: {m['content']}" for m in messages)
        lines.append(SUMMARIZE_ASK)
        return Rendered("\n".join(lines), {"previous_summary": summary, "messages": messages})

    # -- component calls --------------------------------------------------------------------

    def invoke(self, component: str, frame: InputFrame, candidate: int | None,
               prompt: Rendered) -> tuple[dict[str, JSONValue], str | None]:
        step: dict[str, JSONValue] = {
            "component": component, "origin": "model", "full_prompt": prompt.text,
            "input_elements": copy.deepcopy(prompt.elements), "output_raw": None}
        request = {"request": frame.request, "input_id": str(frame.spec["input_id"]),
                   "input": frame.index, "candidate": candidate, "prompt": prompt.text,
                   "input_elements": copy.deepcopy(prompt.elements)}
        coached = self.coaching_for(frame.spec, component, candidate)
        if coached is not None:
            step["origin"] = "coaching"
            step["output_raw"] = coached
            self.env.emit("coaching", component=component, output=coached, **request)
            return step, coached
        try:
            reply = self.env.model(component, request)
        except ScriptedFailure as failure:
            step["error"] = {"type": failure.type_name, "message": str(failure)}
            return step, None
        output = str(reply.get("reply") or "")
        step["output_raw"] = output
        return step, output

    def coaching_for(self, spec: Mapping[str, Any], component: str,
                     candidate: int | None) -> str | None:
        for entry in spec.get("coaching") or []:
            if entry.get("component") != component:
                continue
            if component == "summarizer":
                return str(entry["output"])
            if "candidate" in entry and entry["candidate"] != candidate:
                continue
            return str(entry["output"])
        return None

    # -- answers --------------------------------------------------------------------------

    @staticmethod
    def decision(output: str) -> dict[str, JSONValue]:
        try:
            parsed = json.loads(output)
        except ValueError:
            parsed = None
        return parsed if isinstance(parsed, dict) else {"say": output, "action": {}}

    @staticmethod
    def numbered(steps: Sequence[Mapping[str, JSONValue]]) -> list[dict[str, JSONValue]]:
        return [{"id": f"step-{n}", **copy.deepcopy(dict(step))} for n, step in enumerate(steps)]

    @staticmethod
    def error_of(kind: str, step: Mapping[str, Any]) -> dict[str, JSONValue]:
        cause = step.get("error") or {}
        return {"kind": kind, "component": str(step["component"]),
                "type": str(cause.get("type", "Error")), "message": str(cause.get("message", ""))}

    def failure(self, error: Mapping[str, JSONValue],
                steps: Sequence[Mapping[str, JSONValue]]) -> dict[str, JSONValue]:
        return {"status": "error", "error": copy.deepcopy(dict(error)),
                "internal_steps": self.numbered(steps)}


def _kind(value: JSONValue) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "text",
            list: "a list", dict: "an object"}.get(type(value), type(value).__name__)


# =====================================================================================
# persisted state (document 004)
# =====================================================================================

RECORD_KEY = "record"
DAY = 86_400
DEFAULT_LIFETIMES = {"preference": 365 * DAY, "correction": 365 * DAY,
                     "observation": 90 * DAY, "inference": 30 * DAY}
STANDING_ORDER_OPENINGS = ("always", "never", "from now on", "going forward", "you must",
                           "you should", "do not", "don't", "dont", "ignore", "make sure",
                           "remember to", "stop ")


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def dig(value: JSONValue, path: str) -> tuple[bool, JSONValue]:
    """``$result`` or ``$result.a.b`` applied to a tool result."""
    for part in path.split(".")[1:]:
        if not isinstance(value, dict) or part not in value:
            return False, None
        value = value[part]
    return True, copy.deepcopy(value)


def bind_args(template: JSONValue, values: Mapping[str, JSONValue]) -> JSONValue:
    """Replace each ``"$name"`` string by the record's value; KeyError names a missing one."""
    if isinstance(template, str) and len(template) > 1 and template.startswith("$"):
        name = template[1:]
        if name not in values:
            raise KeyError(name)
        return copy.deepcopy(values[name])
    if isinstance(template, dict):
        return {k: bind_args(v, values) for k, v in template.items()}
    if isinstance(template, list):
        return [bind_args(v, values) for v in template]
    return copy.deepcopy(template)


def refusal(exc: StoreError) -> dict[str, JSONValue]:
    return {"type": type(exc).__name__, "message": str(exc)}


Change = Callable[[dict[str, Any]], None]


@dataclass
class JobFrame:
    """One walk of a job's state machine; ``record`` is the last checkpoint read."""

    job: str
    stop_after: int | None
    resumed: bool
    entry: StateEntry | None = None
    index: int = -1
    args: JSONValue = None
    result: JSONValue = None
    failure: dict[str, JSONValue] | None = None
    change: Change | None = None
    outcome: str = "completed"
    ran: list[str] = field(default_factory=list)
    error: dict[str, JSONValue] | None = None

    @property
    def record(self) -> dict[str, Any]:
        assert self.entry is not None
        value: dict[str, Any] = self.entry.value
        return value

    @property
    def step(self) -> dict[str, Any]:
        step: dict[str, Any] = self.record["steps"][self.index]
        return step


class JobMachine:
    """Runs the jobs and the durable knowledge of one persisted-state script."""

    def __init__(self, script: Mapping[str, Any], env: Any, runtime: Any = None) -> None:
        self.env = env
        self.runtime = runtime
        self.script = script
        self.namespace = str(script["namespace"])
        knowledge = script.get("knowledge") or {}
        self.kb_name = str(knowledge.get("scope") or "user")
        self.kb = f"{self.namespace}/kb/{self.kb_name}"
        self.cap = knowledge.get("cap")
        self.lifetimes = {**DEFAULT_LIFETIMES,
                          **{str(k): int(v) for k, v in (knowledge.get("lifetimes") or {}).items()}}
        self.jobs_touched: list[str] = []
        self.machine = Machine({"load": self.load, "think": self.think, "bind": self.bind,
                                "act": self.act, "settle": self.settle, "log": self.log})

    # -- where things live --------------------------------------------------------------

    def scope(self, job: str) -> str:
        return f"{self.namespace}/job/{job}"

    def log_thread(self, job: str) -> str:
        return f"{self.scope(job)}/log"

    def read_record(self, job: str) -> StateEntry | None:
        entry: StateEntry | None = self.env.store.read_state(self.scope(job), RECORD_KEY)
        return entry

    def write_record(self, job: str, value: JSONValue, version: int | None) -> StateEntry:
        entry: StateEntry = self.env.store.write_state(self.scope(job), RECORD_KEY, value,
                                                       version)
        return entry

    @staticmethod
    def initial_record(job: Mapping[str, Any]) -> dict[str, JSONValue]:
        return {
            "goal": str(job.get("goal") or job["id"]),
            "steps": [{"name": str(s["name"]), "tool": str(s["tool"]),
                       "args": copy.deepcopy(s.get("args") or {}),
                       "record": copy.deepcopy(s.get("record") or {}),
                       "marks": copy.deepcopy(s.get("marks") or {}),
                       "status": "pending"} for s in job["steps"]],
            "values": {},
            "blocked": None,
        }

    # -- the checkpoint ---------------------------------------------------------------------

    def checkpoint(self, node: str, frame: JobFrame) -> None:
        """After a node that changed the record: compare-and-set it, re-reading and
        re-applying the change on a conflict, so another writer's change survives."""
        change, frame.change = frame.change, None
        if change is None:
            return
        assert frame.entry is not None
        entry = frame.entry
        for _ in range(8):
            record = copy.deepcopy(entry.value)
            change(record)
            try:
                frame.entry = self.write_record(frame.job, record, entry.version)
                return
            except ConflictError:
                fresh = self.read_record(frame.job)
                if fresh is None:
                    raise
                entry = fresh
        raise ConflictError(f"job {frame.job}: the record kept changing under the runtime")

    # -- the job machine --------------------------------------------------------------------

    def load(self, frame: JobFrame) -> str | None:
        frame.entry = self.read_record(frame.job)  # every step starts from the stored record
        if frame.entry is None or not isinstance(frame.entry.value, dict):
            frame.outcome = "lost-record"
            return None
        frame.index = self.next_step(frame.record)
        if frame.index < 0:
            return None
        if frame.step.get("status") == "failed":
            frame.outcome = "failed"
            return None
        return "think"

    @staticmethod
    def next_step(record: Mapping[str, Any]) -> int:
        for n, step in enumerate(record.get("steps") or []):
            if step.get("status") != "done":
                return n
        return -1

    def think(self, frame: JobFrame) -> str | None:
        view = {"job": frame.job, "record": copy.deepcopy(frame.record),
                "step": copy.deepcopy(frame.step)}
        self.env.model("agent", view)
        return "bind"

    def known_values(self, frame: JobFrame) -> dict[str, JSONValue]:
        return dict(frame.record.get("values") or {})

    def bind(self, frame: JobFrame) -> str | None:
        try:
            frame.args = bind_args(frame.step.get("args") or {}, self.known_values(frame))
        except KeyError as missing:
            name, why = frame.step["name"], f"value {missing.args[0]!r} is not in the record"

            def block(record: dict[str, Any]) -> None:
                record["blocked"] = {"step": name, "on": why}

            frame.change = block
            frame.outcome = "blocked"
            return None
        return "act"

    def act(self, frame: JobFrame) -> str | None:
        step = frame.step
        frame.result, frame.failure = None, None
        try:
            frame.result = self.env.tool(str(step["tool"]), frame.args,
                                         call_id=f"{frame.job}/{step['name']}")
        except ScriptedFailure as failed:
            frame.failure = dict(failed.error)
        return "settle"

    def settle(self, frame: JobFrame) -> str | None:
        index, result, failure = frame.index, frame.result, frame.failure
        if failure is not None:
            def fail(record: dict[str, Any]) -> None:
                record["steps"][index]["status"] = "failed"
                record["steps"][index]["error"] = copy.deepcopy(failure)

            frame.change = fail
            return "log"
        frame.change = self.completion(index, result)
        return "log"

    def completion(self, index: int, result: JSONValue) -> Change:
        def complete(record: dict[str, Any]) -> None:
            step = record["steps"][index]
            values = record.setdefault("values", {})
            for name, path in (step.get("record") or {}).items():
                found, value = dig(result, str(path))
                if found:
                    values[name] = value
            values.update(copy.deepcopy(step.get("marks") or {}))
            step["status"] = "done"
            step.pop("error", None)
            record["blocked"] = None

        return complete

    def log(self, frame: JobFrame) -> str | None:
        step = frame.step
        name, tool = str(step["name"]), str(step["tool"])
        frame.ran.append(name)
        outcome: dict[str, JSONValue] = {"type": "tool_result", "tool": tool}
        if frame.failure is None:
            outcome["result"] = copy.deepcopy(frame.result)
        else:
            outcome["error"] = copy.deepcopy(frame.failure)
        turn = f"{frame.index + 1:03d}-{name}"  # one exchange per plan step: ids survive restarts
        batch = [
            Message(id=f"{frame.job}/{turn}/call", role="assistant", text=f"{tool}({name})",
                    parts=({"type": "tool_call", "tool": tool, "args": frame.args},),
                    run_id=frame.job, metadata={"step": name}),
            Message(id=f"{frame.job}/{turn}/result", role="tool",
                    text="failed" if frame.failure else "succeeded", parts=(outcome,),
                    run_id=frame.job, metadata={"step": name}),
        ]
        self.env.store.append(self.log_thread(frame.job), batch)
        if frame.failure is not None:
            frame.outcome = "failed"
            return None
        if frame.stop_after is not None and frame.index + 1 >= frame.stop_after:
            frame.outcome = "handed-off"
            return None
        return "load"

    def drive(self, job: str, stop_after: int | None, resumed: bool) -> dict[str, JSONValue]:
        frame = JobFrame(job=job, stop_after=stop_after, resumed=resumed)
        try:
            self.machine.walk(frame, "load", self.checkpoint)
        except StoreError as exc:  # the store refused a write: the job has no such progress
            frame.outcome, frame.error = "failed", refusal(exc)
        self.env.emit("job_outcome", job=job, outcome=frame.outcome, resumed=resumed)
        answer: dict[str, JSONValue] = {"job": job, "outcome": frame.outcome,
                                        "steps_run": frame.ran, "resumed": resumed}
        if frame.error is not None:
            answer["error"] = frame.error
        return answer

    def start(self, job: Mapping[str, Any], stop_after: int | None) -> dict[str, JSONValue]:
        job_id = str(job["id"])
        try:
            existing = self.read_record(job_id)
            if existing is None:
                self.write_record(job_id, self.initial_record(job), None)
        except StoreError as exc:
            self.env.emit("job_outcome", job=job_id, outcome="failed", resumed=False)
            return {"job": job_id, "outcome": "failed", "steps_run": [], "resumed": False,
                    "error": refusal(exc)}
        return self.drive(job_id, stop_after, resumed=existing is not None)

    def resume(self, job: str) -> dict[str, JSONValue]:
        if self.read_record(job) is None:
            return {"job": job, "outcome": "unknown-job", "steps_run": [], "resumed": True}
        return self.drive(job, None, resumed=True)

    # -- durable knowledge: the promotion pipeline ---------------------------------------

    @staticmethod
    def standing_order(statement: str, kind: str) -> bool:
        if kind == "instruction":
            return True
        opening = statement.strip().lstrip("\"'*-•>([ ").casefold()
        opening = opening.replace("\u2019", "'")
        for marker in STANDING_ORDER_OPENINGS:
            if opening == marker.strip() or opening.startswith(marker):
                rest = opening[len(marker):]
                if marker.endswith(" ") or not rest or not rest[0].isalnum():
                    return True
        return False

    def provenance(self, request: Mapping[str, Any]) -> Fact:
        kind = str(request.get("kind") or "observation")
        origin = str(request.get("origin") or "concluded")
        trust = str(request.get("trust") or ("untrusted" if origin == "copied" else "trusted"))
        now = self.env.clock.now_datetime()
        lifetime = self.lifetimes.get(kind, self.lifetimes["observation"])
        return Fact(subject=str(request["subject"]), statement=str(request["statement"]),
                    writer=str(request.get("writer") or "agent"), source=str(request["source"]),
                    evidence=str(request["evidence"]), written_at=stamp(now), kind=kind,
                    trust=trust, origin=origin,
                    recheck_at=stamp(now + timedelta(seconds=lifetime)))

    def confirmed(self, fact: Fact) -> bool:
        answer = self.env.hook("confirm_durable_write", {"scope": self.kb, **fact.to_json()})
        return answer.get("action") == "allow"

    def stale(self, fact: Fact) -> bool:
        if fact.recheck_at is None:
            return False
        return self.env.clock.now_datetime() >= parse_time(fact.recheck_at)

    def victims(self, stored: Sequence[Fact]) -> list[Fact]:
        """Eviction order: facts past their recheck date first (earliest date first),
        then the oldest written; ties by subject."""
        def rank(fact: Fact) -> tuple[int, datetime, str]:
            if self.stale(fact):
                return (0, parse_time(str(fact.recheck_at)), fact.subject)
            return (1, parse_time(fact.written_at), fact.subject)

        return sorted(stored, key=rank)

    def store_fact(self, fact: Fact) -> list[str]:
        """Make room under the cap (a known subject is superseded, evicting nothing),
        then put the fact."""
        evicted: list[str] = []
        if self.cap is not None and self.env.store.get_fact(self.kb, fact.subject) is None:
            stored = list(self.env.store.facts(self.kb))
            for victim in self.victims(stored):
                if len(stored) - len(evicted) < int(self.cap):
                    break
                if self.env.store.forget(self.kb, victim.subject):
                    evicted.append(victim.subject)
        self.env.store.put_fact(self.kb, fact)
        return evicted

    def remember(self, request: Mapping[str, Any]) -> dict[str, JSONValue]:
        subject = str(request["subject"])
        outcome = "stored"
        if self.standing_order(str(request["statement"]), str(request.get("kind") or "")):
            if not request.get("observation"):
                self.env.emit("durable_write_refused", subject=subject, reason="instruction")
                return {"do": "remember", "subject": subject, "outcome": "refused-instruction"}
            request = {**request, "statement": str(request["observation"]),
                       "kind": "observation"}
            outcome = "stored-observation"
        fact = self.provenance(request)
        if not self.confirmed(fact):
            return {"do": "remember", "subject": subject, "outcome": "denied"}
        try:
            evicted = self.store_fact(fact)
        except StoreError as exc:
            return {"do": "remember", "subject": subject, "outcome": "failed",
                    "error": refusal(exc)}
        return {"do": "remember", "subject": subject, "outcome": outcome, "evicted": evicted,
                "fact": fact.to_json()}

    def present(self, fact: Fact) -> dict[str, JSONValue]:
        status = "unverified" if self.stale(fact) else "current"
        shown_as = "claim" if fact.trust == "untrusted" else "fact"
        notes = []
        if shown_as == "claim":
            notes.append(f"claim from {fact.source}, untrusted, not an established fact")
        if status == "unverified":
            notes.append(f"unverified: due for recheck since {fact.recheck_at}")
        notes.append(f"copied from {fact.source}" if fact.origin == "copied"
                     else f"concluded by {fact.writer}")
        return {"subject": fact.subject, "statement": fact.statement, "status": status,
                "trust": fact.trust, "origin": fact.origin, "source": fact.source,
                "shown_as": shown_as,
                "text": f"{fact.subject}: {fact.statement} ({'; '.join(notes)})"}

    def recall_facts(self, subject: str | None) -> list[Fact]:
        if subject is None:
            return list(self.env.store.facts(self.kb))
        one = self.env.store.get_fact(self.kb, subject)
        return [] if one is None else [one]

    def recall(self, subject: str | None) -> dict[str, JSONValue]:
        shown = [self.present(f) for f in self.recall_facts(subject)]
        self.env.model("agent", {"knowledge": copy.deepcopy(shown)})
        return {"do": "recall", "subject": subject, "facts": shown}

    def forget(self, subject: str) -> dict[str, JSONValue]:
        removed = bool(self.env.store.forget(self.kb, subject))
        return {"do": "forget", "subject": subject, "removed": removed}

    # -- export -----------------------------------------------------------------------------

    def export(self, jobs: Sequence[str] | None) -> str:
        out = ["# graphstate export", line("knowledge", self.kb_name), ""]
        for job in sorted(jobs if jobs is not None else self.jobs_touched):
            entry = self.read_record(job) if self.env.store.has("state") else None
            out.append(f"[job {json.dumps(job, ensure_ascii=False)}]")
            fields: dict[str, JSONValue] = {}
            record = None if entry is None else entry.value
            if isinstance(record, dict):
                fields["goal"] = record.get("goal")
                fields["blocked"] = record.get("blocked")
                for n, step in enumerate(record.get("steps") or [], 1):
                    row = {"name": step.get("name"), "status": step.get("status")}
                    if step.get("error") is not None:
                        row["error"] = step["error"]
                    fields[f"step.{n:03d}"] = row
                for name, value in (record.get("values") or {}).items():
                    fields[f"values.{name}"] = value
            else:
                fields["record"] = None
            out.extend(line(k, fields[k]) for k in sorted(fields))
            out.append("")
        facts = list(self.env.store.facts(self.kb)) if self.env.store.has("knowledge") else []
        for fact in sorted(facts, key=lambda f: f.subject):
            data = fact.to_json()
            subject = data.pop("subject")
            out.append(f"[fact {json.dumps(subject, ensure_ascii=False)}]")
            out.extend(line(k, data[k]) for k in sorted(data))
            out.append("")
        return "\n".join(out).rstrip("\n") + "\n"

    # -- the script -------------------------------------------------------------------------

    def run(self) -> dict[str, JSONValue]:
        outcomes: list[dict[str, JSONValue]] = []
        exports: list[str] = []
        for action in self.script.get("actions") or []:
            do = str(action["do"])
            needs = {"job": "state", "resume": "state", "remember": "knowledge",
                     "recall": "knowledge", "forget": "knowledge"}.get(do)
            if needs is not None and not self.env.store.has(needs):
                outcomes.append({"do": do, "outcome": "unsupported", "needs": needs})
                continue
            if do == "job":
                job_id = str(action["job"]["id"])
                self.touch(job_id)
                outcomes.append({"do": do, **self.start(action["job"], action.get("stop_after"))})
            elif do == "resume":
                self.touch(str(action["job"]))
                outcomes.append({"do": do, **self.resume(str(action["job"]))})
            elif do == "remember":
                outcomes.append(self.remember(action["fact"]))
            elif do == "recall":
                outcomes.append(self.recall(action.get("subject")))
            elif do == "forget":
                outcomes.append(self.forget(str(action["subject"])))
            elif do == "advance":
                now = self.env.clock.advance(float(action["seconds"]))
                outcomes.append({"do": "advance", "now": now})
            elif do == "export":
                text = self.export(action.get("jobs"))
                exports.append(text)
                outcomes.append({"do": "export", "text": text})
            else:
                raise ScriptError(f"actions: unknown action {do!r}")
        return {"namespace": self.namespace, "outcomes": outcomes, "exports": exports}

    def touch(self, job: str) -> None:
        if job not in self.jobs_touched:
            self.jobs_touched.append(job)


def line(key: str, value: JSONValue) -> str:
    return f"{key} = {json.dumps(value, ensure_ascii=False, sort_keys=True)}"


# =====================================================================================
# the runtime
# =====================================================================================


class GraphStateRuntime:
    """Both profiles on one engine, dispatched on ``script["profile"]``."""

    profiles = frozenset({"candidates", "persisted-state"})
    candidate_graph: type[CandidateGraph] = CandidateGraph
    job_machine: type[JobMachine] = JobMachine

    def execute(self, script: Mapping[str, Any], env: Any) -> dict[str, JSONValue]:
        profile = script.get("profile")
        if profile == "candidates":
            return self.candidate_graph(script, env).run()
        if profile == "persisted-state":
            return self.job_machine(script, env, self).run()
        raise ScriptError(f"profile: graphstate runs candidates and persisted-state, "
                          f"not {profile!r}")


def make() -> GraphStateRuntime:
    """The correct runtime of the graphstate family."""
    return GraphStateRuntime()
