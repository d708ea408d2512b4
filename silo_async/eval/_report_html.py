"""report.html: one self-contained page for an eval — no network, no external URL at all.

The page carries three things:

* static HTML tables: agents ranked, the side-by-side table (best cell marked) and, per task, a
  drill-down with each agent's statistics;
* ``<script type="application/json" id="index">``: one short array per rollout (task, agent, run,
  verdict, reward, reason, counts, run id and directory), turned into run lists only when a task
  is opened;
* ``<script type="application/octet-stream" id="details">``: every rollout's compact details
  (tool calls with inputs, outputs, errors and durations; checks; state diff) as one
  gzip-compressed, base64url-encoded JSON array, decompressed in the browser
  (``DecompressionStream``) on the first click and rendered one rollout at a time.

So the page stays light at 10,000 rollouts: nothing per rollout is in the DOM until asked for.
Every ``/`` in embedded data is escaped, so no text of the page can form a URL or close a tag.
"""

from __future__ import annotations

import base64
import gzip
import html
from typing import Any

from .._jsonutil import compact_json
from ._details import truncate
from ._stats import GroupStats
from ._summary import EvalSummary

__all__ = ["render_report"]


def _h(text: object) -> str:
    """HTML-escape, and escape ``/`` too: user text can never show up as a URL in the file."""
    return html.escape(str(text), quote=True).replace("/", "&#47;")


def _script_json(value: Any) -> str:
    """JSON safe inside ``<script>``: no ``</``, no ``<!--``, no ``//`` (all escapes stay JSON)."""
    text = compact_json(value)
    return text.replace("<", "\\u003c").replace("/", "\\/")


def _packed(details: list[dict[str, Any]]) -> str:
    raw = compact_json(details).encode()
    # mtime=0: the same eval gives the same bytes. base64url: the alphabet has no "/".
    return base64.urlsafe_b64encode(gzip.compress(raw, compresslevel=6, mtime=0)).decode("ascii")


def _index(summary: EvalSummary) -> dict[str, Any]:
    tasks = [t.id for t in summary.tasks]
    agents = list(summary.agents)
    t_pos = {t: i for i, t in enumerate(tasks)}
    a_pos = {a: i for i, a in enumerate(agents)}
    rows = [
        [
            t_pos[r.task_id],
            a_pos[r.agent],
            r.run,
            1 if r.passed else 0,
            r.reward,
            r.termination_reason,
            r.tool_calls,
            r.tool_errors,
            r.tool_faults,
            1 if r.verifier_error else 0,
            r.run_id,
            r.run_dir,
            round(r.duration_ms, 1),
            None if r.error is None else truncate(r.error, 300),
        ]
        for r in summary.records
    ]
    return {"tasks": tasks, "agents": agents, "runs": rows}


def _pct(value: float) -> str:
    return f"{value * 100:.0f}%"


def _ci(stats: GroupStats, which: str) -> str:
    ci = stats.pass_rate_ci if which == "rate" else stats.reward_ci
    if ci is None:
        return ""
    return f' <span class="ci">[{ci.low:.2f}, {ci.high:.2f}]</span>'


def _kcell(values: dict[int, float]) -> str:
    if not values:
        return "—"
    k = max(values)
    return f"{values[k]:.2f} <span class=ci>k={k}</span>"


def _reasons(stats: GroupStats) -> str:
    return ", ".join(f"{_h(k)} {v}" for k, v in stats.termination_reasons.items())


def _agents_table(summary: EvalSummary) -> str:
    c = summary.comparison
    head = (
        "<tr><th>#</th><th>agent</th><th>passed</th><th>pass rate (95% Wilson)</th>"
        "<th>mean reward (95% t)</th><th>pass@1</th><th>pass@k</th><th>pass^k</th>"
        "<th>agent failures</th><th>env faults</th><th>calls&#47;run</th><th>errors&#47;run</th>"
        "<th>termination</th></tr>"
    )
    rows = []
    for rank, a in enumerate(c.ranking, start=1):
        s = c.overall[a]
        best = ' class="best"' if c.overall_best == a else ""
        rows.append(
            f"<tr{best}><td>{rank}</td><td>{_h(a)}</td><td>{s.passes}&#47;{s.runs}</td>"
            f"<td>{_pct(s.pass_rate)}{_ci(s, 'rate')}</td>"
            f"<td>{s.mean_reward:.2f}{_ci(s, 'reward')}</td>"
            f"<td>{s.pass_at_k.get(1, 0.0):.2f}</td><td>{_kcell(s.pass_at_k)}</td>"
            f"<td>{_kcell(s.pass_hat_k)}</td><td>{s.failures}</td>"
            f'<td class="{"fault" if s.faults else ""}">{s.faults}</td>'
            f"<td>{s.mean_tool_calls:.1f}</td><td>{s.mean_tool_errors:.2f}</td>"
            f"<td>{_reasons(s)}</td></tr>"
        )
    return f'<table id="agents">{head}{"".join(rows)}</table>'


def _side_by_side(summary: EvalSummary) -> str:
    c = summary.comparison
    head = "<tr><th>task</th>" + "".join(f"<th>{_h(a)}</th>" for a in c.agents) + "</tr>"
    rows = []
    for i, (task, row) in enumerate(zip(summary.tasks, c.rows, strict=True)):
        cells = []
        for a in c.agents:
            s = row.cells.get(a)
            if s is None:
                cells.append("<td>—</td>")
                continue
            mark = " ★" if row.best == a else ""
            faults = f' <span class="fault">{s.faults} faults</span>' if s.faults else ""
            cls = ' class="best"' if row.best == a else ""
            cells.append(
                f"<td{cls}>{s.passes}&#47;{s.runs} · {s.mean_reward:.2f}{mark}{faults}</td>"
            )
        rows.append(
            f'<tr><td><a href="#task-{i}" title="{_h(task.title)}">{_h(task.id)}</a></td>'
            f"{''.join(cells)}</tr>"
        )
    total = []
    for a in c.agents:
        s = c.overall[a]
        cls = ' class="best"' if c.overall_best == a else ""
        mark = " ★" if c.overall_best == a else ""
        total.append(f"<td{cls}><b>{s.passes}&#47;{s.runs} · {s.mean_reward:.2f}{mark}</b></td>")
    rows.append(f"<tr><td><b>all tasks</b></td>{''.join(total)}</tr>")
    return f'<table id="side-by-side">{head}{"".join(rows)}</table>'


def _task_stats(stats: GroupStats) -> str:
    ks = ", ".join(
        f"{k}: {stats.pass_at_k[k]:.2f}&#47;{stats.pass_hat_k[k]:.2f}" for k in stats.pass_at_k
    )
    return (
        f"{stats.passes}&#47;{stats.runs} passed ({_pct(stats.pass_rate)}{_ci(stats, 'rate')}), "
        f"reward {stats.mean_reward:.2f}{_ci(stats, 'reward')}, "
        f"{stats.mean_tool_calls:.1f} calls, {stats.failures} agent failures, "
        f"{stats.faults} env faults; {_reasons(stats)}"
        f'<div class="ks">pass@k&#47;pass^k — {ks}</div>'
    )


def _drilldown(summary: EvalSummary) -> str:
    parts = []
    for i, (task, row) in enumerate(zip(summary.tasks, summary.comparison.rows, strict=True)):
        stats = "".join(
            f"<li><b>{_h(a)}</b>{' ★' if row.best == a else ''}: {_task_stats(s)}</li>"
            for a, s in row.cells.items()
        )
        parts.append(
            f'<details class="task" id="task-{i}" data-task="{i}"><summary>'
            f"<b>{_h(task.id)}</b> — {_h(task.title)} <span class=ci>({_h(task.difficulty)})"
            f"</span></summary><p class=instr>{_h(task.instruction)}</p><ul>{stats}</ul>"
            f'<div class="runs"></div></details>'
        )
    return "".join(parts)


_CSS = """
body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0}
td,th{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f3f3f3}
.best{background:#e3f6e3;font-weight:600}
.fault{color:#b35900;font-weight:600}
.ci{color:#777;font-size:90%}
.partial{background:#fff4d6;border:1px solid #e0b040;padding:.4em .7em}
.ks{color:#555;font-size:90%}
.pass{color:#17702a}.fail{color:#b00020}
details.task{margin:.3em 0;border:1px solid #ddd;padding:.3em .6em}
.instr{white-space:pre-wrap;color:#444}
tr.run{cursor:pointer}tr.run:hover{background:#f0f4ff}
pre{white-space:pre-wrap;word-break:break-all;margin:0;font-size:12px}
#run{border:2px solid #88a;padding:.5em 1em;margin-top:1em;display:none}
"""

# Inline script: no "//" anywhere (so the file holds no URL-like text); DOM built with
# textContent only, so recorded data is never interpreted as HTML.
_JS = """
(function(){
var IX=JSON.parse(document.getElementById('index').textContent);
var D=null,PAGE=500;
function el(tag,text,cls){var e=document.createElement(tag);
 if(text!==undefined&&text!==null)e.textContent=String(text);if(cls)e.className=cls;return e;}
function row(cells,cls){var tr=el('tr',null,cls);cells.forEach(function(c){
 if(c instanceof Node){var td=el('td');td.appendChild(c);tr.appendChild(td);}
 else tr.appendChild(el('td',c));});return tr;}
function head(names){var tr=el('tr');
 names.forEach(function(n){tr.appendChild(el('th',n));});return tr;}
function details(){
 if(D)return Promise.resolve(D);
 var b=document.getElementById('details').textContent.trim();
 var s=atob(b.replace(/-/g,'+').replace(/_/g,'\\x2f'));
 var u=new Uint8Array(s.length);for(var i=0;i<s.length;i++)u[i]=s.charCodeAt(i);
 if(typeof DecompressionStream==='undefined')
  return Promise.reject(new Error('this browser cannot decompress the run details'));
 var st=new Blob([u]).stream().pipeThrough(new DecompressionStream('gzip'));
 return new Response(st).text().then(function(t){D=JSON.parse(t);return D;});
}
function showRun(i){
 var r=IX.runs[i],box=document.getElementById('run');box.style.display='block';
 box.textContent='';
 box.appendChild(el('h3','Rollout '+r[10]));
 var meta=el('table');
 [['task',IX.tasks[r[0]]],['agent',IX.agents[r[1]]],['run',r[2]],
  ['result',r[3]?'PASS':'FAIL'],['reward',r[4]],['termination',r[5]],
  ['tool calls',r[6]],['tool errors',r[7]],['tool faults',r[8]],
  ['verifier error',r[9]?'yes':'no'],['duration ms',r[12]],['run dir',r[11]],['error',r[13]]]
  .forEach(function(p){if(p[1]!==null&&p[1]!==undefined)meta.appendChild(row([p[0],p[1]]));});
 box.appendChild(meta);
 var wait=el('p','loading details…');box.appendChild(wait);
 details().then(function(all){
  var d=all[i]||{};box.removeChild(wait);
  box.appendChild(el('h4','Agent output'));box.appendChild(el('pre',d.o||''));
  if(d.e){box.appendChild(el('h4','Error'));box.appendChild(el('pre',d.e));}
  box.appendChild(el('h4','Trace ('+(d.c||[]).length+' tool calls)'));
  var t=el('table','', 'calls');t.appendChild(head(['#','tool','input','output','ms']));
  (d.c||[]).forEach(function(c){
   var out=el('pre',c[3]===null?'(no result)':c[3]);
   var tr=row([c[0],c[1],el('pre',c[2]),out,c[5]]);
   if(c[4]){tr.className=c[6]?'fault':'fail';}
   if(c[6]){out.textContent+='\\nFAULT '+c[6];}
   t.appendChild(tr);});
  box.appendChild(t);
  if(d.n)box.appendChild(el('p',d.n+' more tool calls not shown: see trace.jsonl in the run dir.'));
  box.appendChild(el('h4','Checks'));
  var k=el('table');k.appendChild(head(['check','result','required','detail']));
  (d.k||[]).forEach(function(c){k.appendChild(row([c[0],c[1]?'pass':'FAIL',c[3]?'required':'optional',c[2]],
   c[1]?'pass':'fail'));});
  box.appendChild(k);
  box.appendChild(el('h4','State diff'));
  box.appendChild(el('pre',typeof d.d==='string'?d.d:JSON.stringify(d.d,null,2)));
 }).catch(function(err){wait.textContent='details unavailable: '+err.message;});
 box.scrollIntoView();
}
function fillTask(box,t){
 var div=box.querySelector('.runs');if(div.firstChild)return;
 var mine=[];IX.runs.forEach(function(r,i){if(r[0]===t)mine.push(i);});
 var bar=el('p');var only=el('input');only.type='checkbox';
 bar.appendChild(only);bar.appendChild(document.createTextNode(' failed and faulted only'));
 div.appendChild(bar);var holder=el('div');div.appendChild(holder);
 function render(){
  holder.textContent='';
  var list=only.checked?mine.filter(function(i){return !IX.runs[i][3];}):mine;
  var tab=el('table');
  tab.appendChild(head(['agent','run','result','reward','termination','calls','errors',
   'faults','run id']));
  var shown=0;
  function more(){
   var stop=Math.min(list.length,shown+PAGE);
   for(;shown<stop;shown++){var i=list[shown],r=IX.runs[i];
    var tr=row([IX.agents[r[1]],r[2],r[3]?'PASS':'FAIL',r[4],r[5],r[6],r[7],
     r[8]+(r[9]?' +verifier':''),r[10]],
     'run '+(r[3]?'pass':((r[8]||r[9])?'fault':'fail')));
    tr.addEventListener('click',showRun.bind(null,i));tab.appendChild(tr);}
   btn.style.display=shown<list.length?'':'none';
   btn.textContent='show '+Math.min(PAGE,list.length-shown)+' more of '+(list.length-shown);
  }
  var btn=el('button');btn.type='button';btn.addEventListener('click',more);
  holder.appendChild(tab);holder.appendChild(btn);more();
 }
 only.addEventListener('change',render);render();
}
document.querySelectorAll('details.task').forEach(function(box){
 box.addEventListener('toggle',function(){if(box.open)fillTask(box,+box.dataset.task);});});
function fromHash(){
 var h=decodeURIComponent(location.hash.slice(1));
 if(h.indexOf('run=')===0){var id=h.slice(4);
  for(var i=0;i<IX.runs.length;i++)if(IX.runs[i][10]===id){showRun(i);return;}}
 if(h.indexOf('task-')===0){var b=document.getElementById(h);if(b){b.open=true;}}
}
window.addEventListener('hashchange',fromHash);fromHash();
window.siloShowRun=showRun;
})();
"""


def _partial(summary: EvalSummary) -> str:
    note = summary.partial_note()
    return "" if note is None else f'<p class="partial" id="partial"><b>{_h(note)}</b></p>'


def render_report(summary: EvalSummary, details: list[dict[str, Any]]) -> str:
    """The whole ``report.html`` for ``summary``; ``details[i]`` belongs to ``records[i]``."""
    state = (
        "complete"
        if summary.complete
        else "cancelled: this report covers the rollouts that finished"
        if summary.cancelled
        else "partial"
    )
    cfg = summary.config
    timeout = cfg.get("timeoutMs")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>Eval {_h(summary.eval_id)} — {_h(summary.environment)}</title>"
        f"<style>{_CSS}</style></head><body>"
        f"<h1>Eval {_h(summary.eval_id)}</h1>"
        f"<p>Environment <b>{_h(summary.environment)}</b> · {len(summary.tasks)} tasks · "
        f"{len(summary.agents)} agents · {cfg.get('runs')} runs each · "
        f"{summary.finished}&#47;{summary.planned} rollouts ({_h(state)}) · "
        f"concurrency {cfg.get('concurrency')} · max tool calls {cfg.get('maxToolCalls')} · "
        f"timeout {'none' if timeout is None else f'{timeout} ms'} · "
        f"{summary.wall_ms / 1000:.1f} s · started {_h(summary.started_at)}</p>"
        f"{_partial(summary)}"
        "<h2>Agents</h2>"
        f"{_agents_table(summary)}"
        "<p class=ci>Pass rate: 95% Wilson score interval. Mean reward: 95% Student t interval. "
        "pass@k = 1 − C(n−c,k)&#47;C(n,k), pass^k = C(c,k)&#47;C(n,k) (unbiased; over tasks, "
        "the mean). Env faults (a tool raised, or the verifier failed) are counted apart from "
        "agent failures.</p>"
        "<h2>Side by side</h2><p class=ci>passed&#47;runs · mean reward; ★ marks the better "
        "agent on each task.</p>"
        f"{_side_by_side(summary)}"
        "<h2>Tasks</h2><p class=ci>Open a task to list its rollouts; click a rollout to see "
        "its trace, checks and state diff.</p>"
        f"{_drilldown(summary)}"
        '<div id="run"></div>'
        f'<script type="application/json" id="index">{_script_json(_index(summary))}</script>'
        '<script type="application/octet-stream" id="details" data-encoding="gzip+base64url">'
        f"{_packed(details)}</script>"
        f"<script>{_JS}</script>"
        "</body></html>\n"
    )
