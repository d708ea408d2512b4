"""report.html: one self-contained page for an eval — no network, no external URL at all.

The page is a shell (header, filter bar, empty sections) plus three embedded data blocks and
an inline script (``_report.js``) that draws every table, the chart and the drill-down from
them:

* ``<script type="application/json" id="meta">``: tasks, agents, termination reasons, invalid
  reasons, what a partial eval compared, which columns apply (tokens, cost) and, for an eval
  run with ``--baseline``, its fault plan (the page then draws the robustness section);
* ``<script type="application/octet-stream" id="index">``: one short array per rollout (see
  :data:`~silo_async.eval._report._data.COLUMNS`), gzip + base64url;
* ``<script type="application/octet-stream" id="details">``: the distinct compact details
  (timeline, checks, state diff, output), gzip + base64url, decompressed on the first click.

Filters (agent, task, termination reason, passed/failed, fault, validity) apply to every table
and to the charts, which the script recomputes from the index with the estimators of
``summary.json`` (rates over valid rollouts only; baseline rollouts only in the robustness
section).
Every ``/`` in embedded data is escaped, so no text of the page can form a URL or close a tag.
When the project holds an audit of the environment (``silo-async audit``), a static table gives
each task's verdict (``_audits.py``).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from functools import cache
from importlib import resources

from ..._jsonutil import compact_json
from ..._result import INVALID_REASONS
from ._audits import audit_table, audit_verdicts
from ._cells import count
from ._data import index_rows, pack, pack_details, reasons
from ._summary import EvalSummary

__all__ = ["render_report"]


def _h(text: object) -> str:
    """HTML-escape, and escape ``/`` too: user text can never show up as a URL in the file."""
    return html.escape(str(text), quote=True).replace("/", "&#47;")


def _script_json(value: object) -> str:
    """JSON safe inside ``<script>``: no ``</``, no ``<!--``, no ``//`` (all escapes stay JSON)."""
    return compact_json(value).replace("<", "\\u003c").replace("/", "\\/")


@cache
def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def _meta(summary: EvalSummary, row_reasons: list[str], embedded: int) -> dict[str, object]:
    return {
        "evalId": summary.eval_id,
        "tasks": [
            {"id": t.id, "title": t.title, "difficulty": t.difficulty, "instruction": t.instruction}
            for t in summary.tasks
        ],
        "agents": list(summary.agents),
        "reasons": row_reasons,
        "runs": summary.config.get("runs", 1),
        "partial": summary.partial,
        "compared": dict(summary.compared),
        "hasTokens": summary.has_tokens,
        "hasCost": summary.has_cost,
        "embedded": embedded,
        "invalidReasons": list(INVALID_REASONS),
        "baseline": summary.baseline_plan(),
    }


def _select(name: str, label: str, options: Sequence[tuple[str, str]]) -> str:
    opts = "".join(f'<option value="{_h(v)}">{_h(text)}</option>' for v, text in options)
    return (
        f'<label>{label}<select id="f-{name}"><option value="">all</option>{opts}</select></label>'
    )


def _filters(summary: EvalSummary, row_reasons: list[str]) -> str:
    equal = (
        '<label><input type="checkbox" id="f-equal"> statistics on equal work only</label>'
        if summary.partial
        else ""
    )
    return (
        '<form id="filters" onsubmit="return false">'
        + _select("agent", "agent", [(str(i), a) for i, a in enumerate(summary.agents)])
        + _select("task", "task", [(str(i), t.id) for i, t in enumerate(summary.tasks)])
        + _select("reason", "termination", [(str(i), r) for i, r in enumerate(row_reasons)])
        + _select("result", "result", [("passed", "passed"), ("failed", "failed")])
        + _select("fault", "env fault", [("yes", "with a fault"), ("no", "without")])
        + _select("valid", "reward", [("valid", "valid"), ("invalid", "invalid")])
        + equal
        + '<span id="shown">loading…</span></form>'
    )


def _header(summary: EvalSummary) -> str:
    state = "complete" if summary.complete else "cancelled" if summary.cancelled else "partial"
    cfg = summary.config
    timeout = cfg.get("timeoutMs")
    note = summary.partial_note()
    return (
        f"<h1>Eval {_h(summary.eval_id)}</h1>"
        f"<p>Environment <b>{_h(summary.environment)}</b> · {count(len(summary.tasks), 'task')} · "
        f"{count(len(summary.agents), 'agent')} · {cfg.get('runs')} "
        f"{'run' if cfg.get('runs') == 1 else 'runs'} each · "
        f"{summary.finished}&#47;{summary.planned} rollouts ({_h(state)}) · "
        f"concurrency {cfg.get('concurrency')} · max tool calls {cfg.get('maxToolCalls')} · "
        f"timeout {'none' if timeout is None else f'{timeout} ms'} · "
        f"{summary.wall_ms / 1000:.1f} s · started {_h(summary.started_at)}"
        + (f" · {_h(summary.faults_text())}" if summary.fault_plan is not None else "")
        + "</p>"
        + ("" if note is None else f'<p class="partial" id="partial"><b>{_h(note)}</b></p>')
        + "".join(f'<p class="warning"><b>{_h(w)}</b></p>' for w in summary.warnings())
    )


_BODY = (
    "<h2>Agents</h2><div id=agents></div>"
    "<p class=ci>Pass rate: 95% Wilson score interval. Mean reward: 95% Student t interval. "
    "pass@k = 1 − C(n−c,k)&#47;C(n,k), pass^k = C(c,k)&#47;C(n,k) (unbiased; over tasks, the "
    "mean). Rates count valid rollouts only: an invalid one (the model API failed, a tool or "
    "the verifier raised, the worker was lost) is counted apart, never as a failure. Every "
    "table and chart follows the filters above.</p>"
    "<div id=robustness></div>"
    "<h2>Pass rate per task</h2><div id=chart></div>"
    "<h2>Side by side</h2><p class=ci>passed&#47;valid runs · mean reward (· invalid); ★ marks "
    "the better agent on each task.</p><div id=side-by-side></div>"
    "<h2>Tasks</h2><p class=ci>Open a task for its statistics and rollouts; click a rollout "
    "for its trace (model turns and tool calls), checks and field-level state diff.</p>"
    "<div id=tasks></div><h2>Rollouts</h2><div id=rollouts></div><div id=run></div>"
    '<svg id="svgproto" width="0" height="0" aria-hidden="true"></svg>'
)


#: Where the families' table goes: after the agents (and the robustness table).
_FAMILIES_AT = "<div id=robustness></div>"


def _families(summary: EvalSummary) -> str:
    """The families' table (static: it does not follow the filters), or nothing."""
    groups = summary.families
    if not groups:
        return ""
    agents = summary.agents
    head = "".join(f"<th>{_h(a)}</th>" for a in agents)
    rows = []
    for group in groups:
        cells = []
        for agent in agents:
            s = group.agents.get(agent)
            if s is None or s.pass_rate is None:
                cells.append("<td>—</td>")
                continue
            ci = s.pass_rate_ci
            band = f" [{ci.low:.2f}, {ci.high:.2f}]" if ci else ""
            cells.append(f"<td>{s.passes}&#47;{s.valid} = {s.pass_rate:.2f}{band}</td>")
        rows.append(
            f"<tr><td>{_h(group.family)}</td><td>{_h(group.split)}</td>"
            f"<td>{group.instances}</td>{''.join(cells)}</tr>"
        )
    return (
        "<h2>Task families</h2><p class=ci>Instances grouped by family and split: pass rate "
        "over every valid rollout of them, 95% Wilson interval (all rollouts, not filtered)."
        f'</p><table id="families"><tr><th>family</th><th>split</th><th>instances</th>{head}'
        f"</tr>{''.join(rows)}</table>"
    )


def _audit(summary: EvalSummary) -> str:
    """The audit table, when the project holds an audit of this environment's tasks."""
    tasks = [t.id for t in summary.tasks]
    return audit_table(audit_verdicts(summary.out_dir, summary.environment, tasks), tasks)


def render_report(summary: EvalSummary, texts: Sequence[str], refs: Sequence[int]) -> str:
    """The whole ``report.html``.

    Args:
        summary: the eval's summary.
        texts: the distinct compact details (JSON text), by id.
        refs: per record of ``summary.records`` then ``summary.baseline_records`` (the order
            the eval finished them in plan order), the id of its details in ``texts`` (-1:
            none).
    """
    finished = [*summary.records, *summary.baseline_records]
    by_record = {id(r): ref for r, ref in zip(finished, refs, strict=True)}
    rows = summary.indexed()
    row_refs = [by_record.get(id(r), -1) for r in rows]
    packed, positions = pack_details(texts, rows, row_refs)
    row_reasons = reasons(rows)
    embedded = sum(1 for p in positions if p >= 0)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>Eval {_h(summary.eval_id)} — {_h(summary.environment)}</title>"
        f"<style>{_asset('_report.css')}</style></head><body>"
        f"{_header(summary)}{_filters(summary, row_reasons)}"
        f"{_BODY.replace(_FAMILIES_AT, _FAMILIES_AT + _families(summary) + _audit(summary))}"
        '<script type="application/json" id="meta">'
        f"{_script_json(_meta(summary, row_reasons, embedded))}</script>"
        '<script type="application/octet-stream" id="index" data-encoding="gzip+base64url">'
        f"{pack(index_rows(summary, rows, positions))}</script>"
        '<script type="application/octet-stream" id="details" data-encoding="gzip+base64url">'
        f"{packed}</script>"
        f"<script>{_asset('_report.js')}</script>"
        "</body></html>\n"
    )
