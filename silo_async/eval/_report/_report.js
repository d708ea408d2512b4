/* report.html's script: filters, tables, chart and drill-down, all from the embedded data.
   No slash-slash anywhere in this file (the page must hold no URL-like text); every DOM node
   is built with textContent, so recorded data is never interpreted as HTML. */
(function () {
'use strict';
var META = JSON.parse(document.getElementById('meta').textContent);
var C = {T: 0, A: 1, RUN: 2, PASS: 3, REW: 4, REASON: 5, CALLS: 6, ERRS: 7, FAULTS: 8,
  VERR: 9, ID: 10, DIR: 11, DUR: 12, ERR: 13, CMP: 14, IN: 15, OUT: 16, STEPS: 17,
  COST: 18, DET: 19, VALID: 20, INV: 21, INJ: 22, REC: 23, BASE: 24};
var ROWS = [], DETAILS = null, PAGE = 100;
var COLORS = ['#3b6fb6', '#d9822b', '#2e9e5b', '#b63b6f', '#7a5bb6', '#8c8c2e', '#2e8c8c',
  '#b6543b'];
var SVGNS = document.getElementById('svgproto').namespaceURI;
var state = {agent: '', task: '', reason: '', result: '', fault: '', valid: '',
  equal: META.partial};

/* ---------- small DOM helpers ---------- */
function el(tag, text, cls) {
  var e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}
function svg(tag, attrs) {
  var e = document.createElementNS(SVGNS, tag);
  Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
  return e;
}
function row(cells, cls) {
  var tr = el('tr', null, cls);
  cells.forEach(function (c) {
    var td = el('td');
    if (c instanceof Node) td.appendChild(c); else td.textContent = c === null ? '' : String(c);
    tr.appendChild(td);
  });
  return tr;
}
function head(names) {
  var tr = el('tr');
  names.forEach(function (n) { tr.appendChild(el('th', n)); });
  return tr;
}
function fix(x, d) { return (x === null || x === undefined || isNaN(x)) ? '—' : x.toFixed(d); }
function num(x) { return Math.round(x).toLocaleString('en-US'); }
function longText(s, limit) {
  limit = limit || 400;
  var box = el('div'), pre = el('pre');
  box.appendChild(pre);
  if (s === null || s === undefined) { pre.textContent = ''; return box; }
  s = String(s);
  if (s.length <= limit) { pre.textContent = s; return box; }
  pre.textContent = s.slice(0, limit) + '…';
  var b = el('button', 'show all ' + s.length.toLocaleString('en-US') + ' characters', 'more');
  b.type = 'button';
  b.addEventListener('click', function () {
    var open = b.dataset.open === '1';
    pre.textContent = open ? s.slice(0, limit) + '…' : s;
    b.dataset.open = open ? '0' : '1';
    b.textContent = open ? 'show all ' + s.length.toLocaleString('en-US') + ' characters'
      : 'show less';
  });
  box.appendChild(b);
  return box;
}

/* ---------- unpacking the embedded data ----------
   The data is gzip (RFC 1952 around RFC 1951 deflate), inflated here synchronously rather than
   by the browser's DecompressionStream, whose promises settle after the page's load: a page
   drawn from them is blank to whatever captures it at load (chromium --headless --screenshot,
   --print-to-pdf, --dump-dom). Drawn while the script runs, the page (and a #run= deep link's
   rollout) is there before the load event. */
var LBASE = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83,
  99, 115, 131, 163, 195, 227, 258];
var LEXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5,
  5, 0];
var DBASE = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769,
  1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577];
var DEXTRA = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11,
  12, 12, 13, 13];
var CLORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];
var FAST = 10;  /* codes up to this many bits decode with one table look-up */
function corrupt() { throw new Error('the embedded data is damaged'); }
function huffman(lengths) {
  /* a canonical Huffman code: a look-up table of (symbol << 4 | length) indexed by the next
     FAST bits, and the counts and sorted symbols that decode the longer codes bit by bit */
  var count = new Uint16Array(16), next = new Uint16Array(16), i, len;
  var syms = new Uint16Array(lengths.length), offs = new Uint16Array(16);
  var fast = new Int32Array(1 << FAST);
  for (i = 0; i < lengths.length; i++) count[lengths[i]]++;
  count[0] = 0;
  for (len = 1, i = 0; len < 16; len++) {
    i = (i + count[len - 1]) << 1;
    next[len] = i;
    offs[len] = offs[len - 1] + count[len - 1];
  }
  for (i = 0; i < lengths.length; i++) {
    len = lengths[i];
    if (!len) continue;
    syms[offs[len]++] = i;
    var code = next[len]++, rev = 0;
    for (var b = 0; b < len; b++) rev |= ((code >> b) & 1) << (len - 1 - b);
    if (len <= FAST) for (var j = rev; j < (1 << FAST); j += 1 << len) fast[j] = (i << 4) | len;
  }
  return {count: count, syms: syms, fast: fast};
}
function bits(s, n) {
  while (s.bc < n) {
    if (s.p >= s.b.length) corrupt();
    s.bb |= s.b[s.p++] << s.bc;
    s.bc += 8;
  }
  var v = s.bb & ((1 << n) - 1);
  s.bb >>>= n;
  s.bc -= n;
  return v;
}
function symbol(s, h) {
  while (s.bc < 15 && s.p < s.b.length) { s.bb |= s.b[s.p++] << s.bc; s.bc += 8; }
  var e = h.fast[s.bb & ((1 << FAST) - 1)];
  if (e) { s.bb >>>= e & 15; s.bc -= e & 15; return e >> 4; }
  var code = 0, first = 0, index = 0;
  for (var len = 1; len < 16; len++) {
    code |= bits(s, 1);
    var c = h.count[len];
    if (code - first < c) return h.syms[index + code - first];
    index += c;
    first = (first + c) << 1;
    code <<= 1;
  }
  return corrupt();
}
function fixedCodes() {
  var l = new Uint8Array(288), d = new Uint8Array(30), i;
  for (i = 0; i < 288; i++) l[i] = i < 144 ? 8 : i < 256 ? 9 : i < 280 ? 7 : 8;
  for (i = 0; i < 30; i++) d[i] = 5;
  return [huffman(l), huffman(d)];
}
function dynamicCodes(s) {
  var nlen = bits(s, 5) + 257, ndist = bits(s, 5) + 1, ncode = bits(s, 4) + 4, i;
  var cl = new Uint8Array(19);
  for (i = 0; i < ncode; i++) cl[CLORDER[i]] = bits(s, 3);
  var ch = huffman(cl), lengths = new Uint8Array(nlen + ndist);
  for (i = 0; i < nlen + ndist;) {
    var sym = symbol(s, ch), rep = 0, val = 0;
    if (sym < 16) { lengths[i++] = sym; continue; }
    if (sym === 16) { if (!i) corrupt(); val = lengths[i - 1]; rep = 3 + bits(s, 2); }
    else if (sym === 17) rep = 3 + bits(s, 3);
    else rep = 11 + bits(s, 7);
    if (i + rep > nlen + ndist) corrupt();
    while (rep--) lengths[i++] = val;
  }
  return [huffman(lengths.subarray(0, nlen)), huffman(lengths.subarray(nlen))];
}
function inflate(b) {
  /* one gzip member: skip its header, inflate its blocks; the trailer is not checked */
  if (b[0] !== 0x1f || b[1] !== 0x8b || b[2] !== 8) corrupt();
  var flags = b[3], p = 10;
  if (flags & 4) p += 2 + (b[p] | (b[p + 1] << 8));
  if (flags & 8) while (b[p++]);
  if (flags & 16) while (b[p++]);
  if (flags & 2) p += 2;
  var s = {b: b, p: p, bb: 0, bc: 0}, out = new Uint8Array(Math.max(1024, b.length * 4)), o = 0;
  function room(n) {
    if (o + n <= out.length) return;
    var bigger = new Uint8Array(Math.max(out.length * 2, o + n));
    bigger.set(out.subarray(0, o));
    out = bigger;
  }
  var last = 0;
  while (!last) {
    last = bits(s, 1);
    var type = bits(s, 2);
    if (type === 0) {  /* stored: whole bytes, after what is left of the current one */
      s.p -= s.bc >> 3;
      s.bb = 0;
      s.bc = 0;
      var n = b[s.p] | (b[s.p + 1] << 8);
      s.p += 4;
      if (s.p + n > b.length) corrupt();
      room(n);
      out.set(b.subarray(s.p, s.p + n), o);
      o += n;
      s.p += n;
      continue;
    }
    if (type === 3) corrupt();
    var codes = type === 1 ? fixedCodes() : dynamicCodes(s);
    for (;;) {
      var sym = symbol(s, codes[0]);
      if (sym < 256) { room(1); out[o++] = sym; continue; }
      if (sym === 256) break;
      sym -= 257;
      if (sym >= 29) corrupt();
      var len = LBASE[sym] + bits(s, LEXTRA[sym]);
      var dsym = symbol(s, codes[1]);
      if (dsym >= 30) corrupt();
      var dist = DBASE[dsym] + bits(s, DEXTRA[dsym]);
      if (dist > o) corrupt();
      room(len);
      for (var k = 0; k < len; k++, o++) out[o] = out[o - dist];
    }
  }
  return out.subarray(0, o);
}
function unpack(id) {
  var text = document.getElementById(id).textContent.trim();
  var s = atob(text.replace(/-/g, '+').replace(/_/g, '\x2f'));
  var u = new Uint8Array(s.length);
  for (var i = 0; i < s.length; i++) u[i] = s.charCodeAt(i);
  return JSON.parse(new TextDecoder('utf-8').decode(inflate(u)));
}
function details() {
  if (!DETAILS) DETAILS = unpack('details');
  return DETAILS;
}

/* ---------- statistics (the same estimators as summary.json) ---------- */
var Z = 1.959963984540054;
var T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201,
  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
  2.060, 2.056, 2.052, 2.048, 2.045, 2.042];
function tq(df) {
  if (df <= T975.length) return T975[df - 1];
  var z = Z, g1 = (Math.pow(z, 3) + z) / 4;
  var g2 = (5 * Math.pow(z, 5) + 16 * Math.pow(z, 3) + 3 * z) / 96;
  var g3 = (3 * Math.pow(z, 7) + 19 * Math.pow(z, 5) + 17 * Math.pow(z, 3) - 15 * z) / 384;
  return z + g1 / df + g2 / (df * df) + g3 / (df * df * df);
}
function wilson(c, n) {
  if (n <= 0) return null;
  var p = c / n, z2 = Z * Z, d = 1 + z2 / n, ctr = (p + z2 / (2 * n)) / d;
  var h = Z * Math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / d;
  return [Math.max(0, ctr - h), Math.min(1, ctr + h)];
}
function meanCI(vals, mean) {
  var n = vals.length;
  if (n < 2) return null;
  var v = 0;
  vals.forEach(function (x) { v += (x - mean) * (x - mean); });
  var h = tq(n - 1) * Math.sqrt(v / (n - 1) / n);
  return [Math.max(0, mean - h), Math.min(1, mean + h)];
}
function passAt(n, c, k) {
  if (n - c < k) return 1;
  var r = 1;
  for (var i = 0; i < k; i++) r *= (n - c - i) / (n - i);
  return 1 - r;
}
function passHat(n, c, k) {
  if (c < k) return 0;
  var r = 1;
  for (var i = 0; i < k; i++) r *= (c - i) / (n - i);
  return r;
}
function defaultKs(runs) {
  var ks = [], i;
  if (runs <= 20) { for (i = 1; i <= runs; i++) ks.push(i); return ks; }
  var set = {1: 1, 2: 1, 3: 1, 4: 1, 5: 1};
  set[runs] = 1;
  for (var step = 10; step < runs; step *= 10)
    [step, 2 * step, 5 * step].forEach(function (x) { if (x < runs) set[x] = 1; });
  return Object.keys(set).map(Number).sort(function (a, b) { return a - b; });
}
var KS = defaultKs(META.runs);
function envFault(r) {
  return r[C.FAULTS] > 0 || r[C.VERR] === 1 || META.reasons[r[C.REASON]] === 'worker_lost';
}
function valid(r) { return r[C.VALID] !== 0; }
function invalidWhy(r) { return r[C.INV] >= 0 ? META.invalidReasons[r[C.INV]] : 'invalid'; }
/* rates are over valid rollouts only (summary.json's rule); invalid ones are counted apart */
function stats(rs, perTask) {
  var n = rs.length, s = {runs: n, valid: 0, invalid: 0, why: {}, passes: 0, failures: 0,
    faults: 0, reward: 0, calls: 0, errors: 0, early: {}, inTok: 0, outTok: 0, steps: 0,
    cost: null, injected: 0, recovered: 0};
  var rewards = [];
  rs.forEach(function (r) {
    if (envFault(r)) s.faults++;
    s.injected += r[C.INJ];
    s.recovered += r[C.REC];
    if (valid(r)) {
      s.valid++;
      s.passes += r[C.PASS];
      if (!r[C.PASS]) s.failures++;
      rewards.push(r[C.REW]);
      s.reward += r[C.REW];
    } else {
      s.invalid++;
      s.why[invalidWhy(r)] = (s.why[invalidWhy(r)] || 0) + 1;
    }
    s.calls += r[C.CALLS];
    s.errors += r[C.ERRS];
    s.inTok += r[C.IN];
    s.outTok += r[C.OUT];
    s.steps += r[C.STEPS];
    if (r[C.COST] !== null) s.cost = (s.cost || 0) + r[C.COST];
    var why = META.reasons[r[C.REASON]];
    if (why !== 'completed') s.early[why] = (s.early[why] || 0) + 1;
  });
  var v = s.valid;
  s.rate = v ? s.passes / v : null;
  s.rateCI = wilson(s.passes, v);
  s.reward = v ? s.reward / v : null;
  s.rewardCI = v ? meanCI(rewards, s.reward) : null;
  s.pat = {};
  s.phat = {};
  var ok = rs.filter(valid);
  var groups = perTask ? byTask(ok) : [ok];
  groups = groups.filter(function (g) { return g.length; });
  if (groups.length) {
    var minN = Math.min.apply(null, groups.map(function (g) { return g.length; }));
    KS.filter(function (k) { return k <= minN; }).forEach(function (k) {
      var a = 0, h = 0;
      groups.forEach(function (g) {
        var c = 0;
        g.forEach(function (r) { c += r[C.PASS]; });
        a += passAt(g.length, c, k);
        h += passHat(g.length, c, k);
      });
      s.pat[k] = a / groups.length;
      s.phat[k] = h / groups.length;
    });
  }
  return s;
}
function byTask(rs) {
  var g = {};
  rs.forEach(function (r) { (g[r[C.T]] = g[r[C.T]] || []).push(r); });
  return Object.keys(g).map(function (k) { return g[k]; });
}
function best(cells) {
  if (META.agents.length < 2) return null; /* one agent is better than no one */
  var scored = cells.filter(function (c) { return c.s && c.s.valid; });
  scored.sort(function (a, b) { return (b.s.rate - a.s.rate) || (b.s.reward - a.s.reward); });
  if (!scored.length) return null;
  if (scored.length > 1 && scored[0].s.rate === scored[1].s.rate &&
      scored[0].s.reward === scored[1].s.reward) return null;
  return scored[0].agent;
}
function invalidText(s) {
  if (!s.invalid) return '0';
  return s.invalid + ' (' + Object.keys(s.why).map(function (k) {
    return s.why[k] + ' ' + k;
  }).join(', ') + ')';
}
function pct(x) { return x === null ? '—' : (x * 100).toFixed(0) + '%'; }
function earlyText(s) {
  return Object.keys(s.early).map(function (k) { return s.early[k] + ' ' + k; }).join(', ');
}
function kmax(vals) {
  var ks = Object.keys(vals).map(Number);
  if (!ks.length) return '—';
  var k = Math.max.apply(null, ks);
  return vals[k].toFixed(2) + ' (k=' + k + ')';
}
function ci(pair) { return pair ? ' [' + pair[0].toFixed(2) + ', ' + pair[1].toFixed(2) + ']' : ''; }
function tokensText(s) {
  var n = s.runs || 1;
  return num(s.inTok / n) + ' in / ' + num(s.outTok / n) + ' out, ' + num(s.inTok + s.outTok) +
    ' total';
}
function costText(s) {
  return s.cost === null ? '—' : s.cost.toFixed(4) + ' (' + (s.cost / (s.runs || 1)).toFixed(4) +
    '/run)';
}

/* ---------- filters ---------- */
function matches(r) {
  if (state.agent !== '' && r[C.A] !== +state.agent) return false;
  if (state.task !== '' && r[C.T] !== +state.task) return false;
  if (state.reason !== '' && r[C.REASON] !== +state.reason) return false;
  if (state.result === 'passed' && !r[C.PASS]) return false;
  if (state.result === 'failed' && r[C.PASS]) return false;
  if (state.fault === 'yes' && !envFault(r)) return false;
  if (state.fault === 'no' && envFault(r)) return false;
  if (state.valid === 'valid' && !valid(r)) return false;
  if (state.valid === 'invalid' && valid(r)) return false;
  return true;
}
function shown() { return ROWS.filter(matches); }
function counted(rs) {
  /* statistics never count rollouts a cancellation cut short, nor a baseline's rollouts (the
     robustness section compares those); a partial eval compares the equal-work subset unless
     asked otherwise */
  return rs.filter(function (r) {
    return META.reasons[r[C.REASON]] !== 'cancelled' && !r[C.BASE] &&
      (!state.equal || r[C.CMP] === 1);
  });
}
function agentsShown() {
  return META.agents.map(function (a, i) { return i; })
    .filter(function (i) { return state.agent === '' || i === +state.agent; });
}
function tasksShown() {
  return META.tasks.map(function (t, i) { return i; })
    .filter(function (i) { return state.task === '' || i === +state.task; });
}

/* ---------- the tables ---------- */
function agentsTable(rs) {
  var box = document.getElementById('agents');
  box.textContent = '';
  var cols = ['#', 'agent', 'passed', 'pass rate (95% Wilson)', 'mean reward (95% t)', 'pass@1',
    'pass@k', 'pass^k', 'agent failures', 'invalid', 'env faults', 'ended early',
    'calls\x2frun', 'errors\x2frun'];
  if (META.hasTokens) cols.push('tokens (mean, total)');
  if (META.hasCost) cols.push('cost (total, per run)');
  var t = el('table');
  t.appendChild(head(cols));
  var list = agentsShown().map(function (a) {
    return {agent: a, s: stats(rs.filter(function (r) { return r[C.A] === a; }), true)};
  });
  list = list.filter(function (item) { return item.s.runs > 0; });
  var top = best(list);
  function key(s) { return s.rate === null ? [-1, -1] : [s.rate, s.reward]; }
  list.sort(function (x, y) {
    var kx = key(x.s), ky = key(y.s);
    return (ky[0] - kx[0]) || (ky[1] - kx[1]) ||
      (META.agents[x.agent] < META.agents[y.agent] ? -1 : 1);
  });
  list.forEach(function (item, rank) {
    var s = item.s, n = s.runs || 1;
    var cells = [rank + 1, META.agents[item.agent], s.passes + '\x2f' + s.valid,
      pct(s.rate) + ci(s.rateCI), fix(s.reward, 2) + ci(s.rewardCI),
      fix(s.pat[1], 2), kmax(s.pat), kmax(s.phat), s.failures, invalidText(s), s.faults,
      earlyText(s) || '—', (s.calls / n).toFixed(1), (s.errors / n).toFixed(2)];
    if (META.hasTokens) cells.push(tokensText(s));
    if (META.hasCost) cells.push(costText(s));
    var tr = row(cells, top === item.agent ? 'best' : '');
    tr.dataset.agent = META.agents[item.agent];
    t.appendChild(tr);
  });
  box.appendChild(t);
}
function cellText(s) {
  var text = s.passes + '\x2f' + s.valid + ' · ' + fix(s.reward, 2);
  if (s.invalid) text += ' · ' + s.invalid + ' invalid';
  if (s.faults) text += ' · ' + s.faults + ' faults';
  var early = earlyText(s);
  return early ? text + ' · ' + early : text;
}
function sideBySide(rs) {
  var box = document.getElementById('side-by-side');
  box.textContent = '';
  var agents = agentsShown(), t = el('table');
  t.appendChild(head(['task'].concat(agents.map(function (a) { return META.agents[a]; }))));
  tasksShown().forEach(function (ti) {
    var mine = rs.filter(function (r) { return r[C.T] === ti; });
    var cells = agents.map(function (a) {
      var g = mine.filter(function (r) { return r[C.A] === a; });
      return {agent: a, s: g.length ? stats(g, false) : null};
    });
    var top = (!state.equal || META.compared[META.tasks[ti].id]) ? best(cells) : null;
    var tr = el('tr');
    var link = el('a', META.tasks[ti].id);
    link.href = '#task-' + ti;
    var td = el('td');
    td.appendChild(link);
    tr.appendChild(td);
    cells.forEach(function (c) {
      var cell = el('td', c.s ? cellText(c.s) + (top === c.agent ? ' ★' : '') : '—');
      if (top === c.agent) cell.className = 'best';
      tr.appendChild(cell);
    });
    t.appendChild(tr);
  });
  box.appendChild(t);
}
function chart(rs) {
  var box = document.getElementById('chart');
  box.textContent = '';
  var agents = agentsShown(), tasks = tasksShown();
  var barH = 12, gap = 10, left = 150, plot = 520, top = 22;
  var groupH = agents.length * barH + gap;
  var h = top + tasks.length * groupH + 8;
  var s = svg('svg', {width: left + plot + 170, height: h, 'class': 'svgchart', role: 'img',
    'aria-label': 'pass rate per task and agent, with 95% Wilson intervals'});
  [0, 0.25, 0.5, 0.75, 1].forEach(function (x) {
    var px = left + x * plot;
    s.appendChild(svg('line', {x1: px, x2: px, y1: top - 4, y2: h - 8, stroke: '#ddd'}));
    var label = svg('text', {x: px, y: top - 8, 'text-anchor': 'middle'});
    label.textContent = (x * 100) + '%';
    s.appendChild(label);
  });
  tasks.forEach(function (ti, row) {
    var y0 = top + row * groupH;
    var name = svg('text', {x: left - 6, y: y0 + agents.length * barH / 2 + 4,
      'text-anchor': 'end'});
    name.textContent = META.tasks[ti].id;
    s.appendChild(name);
    agents.forEach(function (a, j) {
      var g = rs.filter(function (r) { return r[C.T] === ti && r[C.A] === a; });
      if (!g.length) return;
      var st = stats(g, false), y = y0 + j * barH;
      if (st.rate !== null) {
        var bar = svg('rect', {x: left, y: y + 1, height: barH - 2,
          width: Math.max(1, st.rate * plot), fill: COLORS[a % COLORS.length], 'class': 'bar',
          'data-task': META.tasks[ti].id, 'data-agent': META.agents[a],
          'data-rate': st.rate.toFixed(4)});
        var tip = svg('title');
        tip.textContent = META.tasks[ti].id + ' · ' + META.agents[a] + ': ' + st.passes +
          '\x2f' + st.valid + ' = ' + st.rate.toFixed(2) + ci(st.rateCI);
        bar.appendChild(tip);
        s.appendChild(bar);
      }
      if (st.rateCI) {
        var ym = y + barH / 2, x1 = left + st.rateCI[0] * plot, x2 = left + st.rateCI[1] * plot;
        s.appendChild(svg('line', {x1: x1, x2: x2, y1: ym, y2: ym, 'class': 'whisker'}));
        s.appendChild(svg('line', {x1: x1, x2: x1, y1: ym - 3, y2: ym + 3, 'class': 'whisker'}));
        s.appendChild(svg('line', {x1: x2, x2: x2, y1: ym - 3, y2: ym + 3, 'class': 'whisker'}));
      }
      var val = svg('text', {x: left + plot + 6, y: y + barH - 2});
      val.textContent = META.agents[a] + ' ' + st.passes + '\x2f' + st.valid +
        (st.invalid ? ' (' + st.invalid + ' invalid)' : '');
      s.appendChild(val);
    });
  });
  box.appendChild(s);
  var legend = el('p', null, 'legend');
  agents.forEach(function (a) {
    var sw = el('span');
    sw.style.background = COLORS[a % COLORS.length];
    legend.appendChild(sw);
    legend.appendChild(document.createTextNode(META.agents[a]));
  });
  box.appendChild(legend);
}

/* ---------- robustness: the same plan with and without faults (eval --baseline) ---------- */
function robustness(rs) {
  var box = document.getElementById('robustness');
  box.textContent = '';
  if (!META.baseline) return;
  var kept = rs.filter(function (r) { return META.reasons[r[C.REASON]] !== 'cancelled'; });
  box.appendChild(el('h2', 'Robustness'));
  box.appendChild(el('p', 'The same plan without faults (baseline) and with --faults ' +
    META.baseline.spec + ' (seed ' + META.baseline.seed + '): pass rates over valid ' +
    'rollouts, the drop, and how often an agent recovered from an injected fault (the same ' +
    'tool later succeeded).', 'ci'));
  var t = el('table');
  t.appendChild(head(['agent', 'without faults', 'with faults', 'drop', 'injected faults',
    'recovered']));
  var bars = [];
  agentsShown().forEach(function (a) {
    var mine = kept.filter(function (r) { return r[C.A] === a; });
    var off = stats(mine.filter(function (r) { return r[C.BASE]; }), true);
    var on = stats(mine.filter(function (r) { return !r[C.BASE]; }), true);
    if (!off.runs && !on.runs) return;
    var drop = off.rate === null || on.rate === null ? null : off.rate - on.rate;
    var tr = row([META.agents[a], pct(off.rate) + ' (' + off.passes + '\x2f' + off.valid + ')',
      pct(on.rate) + ' (' + on.passes + '\x2f' + on.valid + ')',
      drop === null ? '—' : (drop * 100).toFixed(0) + ' points', on.injected,
      on.injected ? on.recovered + ' (' + pct(on.recovered / on.injected) + ')' : '—']);
    tr.dataset.agent = META.agents[a];
    t.appendChild(tr);
    bars.push({agent: a, off: off, on: on});
  });
  box.appendChild(t);
  box.appendChild(robustnessChart(bars));
}
function robustnessChart(bars) {
  var barH = 12, left = 150, plot = 520, top = 22, groupH = 2 * barH + 10;
  var h = top + bars.length * groupH + 8;
  var s = svg('svg', {width: left + plot + 190, height: h, 'class': 'svgchart', role: 'img',
    id: 'robustness-chart', 'aria-label': 'pass rate per agent without and with faults'});
  [0, 0.5, 1].forEach(function (x) {
    var px = left + x * plot;
    s.appendChild(svg('line', {x1: px, x2: px, y1: top - 4, y2: h - 8, stroke: '#ddd'}));
    var label = svg('text', {x: px, y: top - 8, 'text-anchor': 'middle'});
    label.textContent = (x * 100) + '%';
    s.appendChild(label);
  });
  bars.forEach(function (b, i) {
    var y0 = top + i * groupH;
    var name = svg('text', {x: left - 6, y: y0 + barH + 4, 'text-anchor': 'end'});
    name.textContent = META.agents[b.agent];
    s.appendChild(name);
    [['without faults', b.off, 0.45], ['with faults', b.on, 1]].forEach(function (p, j) {
      var st = p[1], y = y0 + j * barH;
      if (st.rate !== null) {
        var bar = svg('rect', {x: left, y: y + 1, height: barH - 2,
          width: Math.max(1, st.rate * plot), fill: COLORS[b.agent % COLORS.length],
          'fill-opacity': p[2], 'class': 'bar', 'data-agent': META.agents[b.agent],
          'data-kind': j ? 'faults' : 'baseline', 'data-rate': st.rate.toFixed(4)});
        var tip = svg('title');
        tip.textContent = META.agents[b.agent] + ' ' + p[0] + ': ' + st.passes + '\x2f' +
          st.valid + ' = ' + st.rate.toFixed(2) + ci(st.rateCI);
        bar.appendChild(tip);
        s.appendChild(bar);
      }
      var val = svg('text', {x: left + plot + 6, y: y + barH - 2});
      val.textContent = p[0] + ' ' + pct(st.rate);
      s.appendChild(val);
    });
  });
  return s;
}

/* ---------- rollout lists ---------- */
function runList(holder, rs) {
  holder.textContent = '';
  var t = el('table');
  t.appendChild(head(['task', 'agent', 'run', 'result', 'reward', 'valid', 'termination',
    'calls', 'errors', 'faults', 'injected', 'run id']));
  var n = 0, btn = el('button', null, 'more');
  btn.type = 'button';
  function more() {
    var stop = Math.min(rs.length, n + PAGE);
    for (; n < stop; n++) {
      var r = rs[n], i = r.index;
      var cls = 'run ' + (!valid(r) ? 'invalid' : r[C.PASS] ? 'pass' : 'fail');
      if (META.partial && !r[C.CMP]) cls += ' uncompared';
      if (r[C.BASE]) cls += ' baseline';
      var tr = row([META.tasks[r[C.T]].id, META.agents[r[C.A]],
        r[C.RUN] + (r[C.BASE] ? ' (baseline)' : ''), r[C.PASS] ? 'PASS' : 'FAIL', r[C.REW],
        valid(r) ? 'yes' : 'no: ' + invalidWhy(r), META.reasons[r[C.REASON]], r[C.CALLS],
        r[C.ERRS], r[C.FAULTS] + (r[C.VERR] ? ' +verifier' : ''),
        r[C.INJ] ? r[C.INJ] + ' (' + r[C.REC] + ' recovered)' : '', r[C.ID]], cls);
      tr.dataset.index = i;
      tr.addEventListener('click', showRun.bind(null, i));
      t.appendChild(tr);
    }
    btn.style.display = n < rs.length ? '' : 'none';
    btn.textContent = 'show ' + Math.min(PAGE, rs.length - n) + ' more of ' + (rs.length - n);
  }
  btn.addEventListener('click', more);
  holder.appendChild(t);
  holder.appendChild(btn);
  more();
}
function taskStats(rs) {
  var ul = el('ul');
  agentsShown().forEach(function (a) {
    var g = rs.filter(function (r) { return r[C.A] === a; });
    if (!g.length) return;
    var s = stats(g, false);
    var ks = Object.keys(s.pat).map(function (k) {
      return k + ': ' + s.pat[k].toFixed(2) + '\x2f' + s.phat[k].toFixed(2);
    }).join(', ');
    var li = el('li');
    li.appendChild(el('b', META.agents[a]));
    li.appendChild(document.createTextNode(': ' + s.passes + '\x2f' + s.valid + ' passed (' +
      pct(s.rate) + ci(s.rateCI) + '), reward ' + fix(s.reward, 2) +
      ci(s.rewardCI) + ', ' + (s.calls / s.runs).toFixed(1) + ' calls, ' + s.failures +
      ' agent failures, ' + invalidText(s) + ' invalid, ' + s.faults + ' env faults' +
      (earlyText(s) ? ', ended early: ' + earlyText(s) : '') +
      (META.hasTokens ? ', tokens ' + tokensText(s) : '')));
    li.appendChild(el('div', 'pass@k\x2fpass^k — ' + ks, 'ks'));
    ul.appendChild(li);
  });
  return ul;
}
function taskSections(rs) {
  var box = document.getElementById('tasks');
  var open = {};
  box.querySelectorAll('details.task').forEach(function (d) { if (d.open) open[d.id] = 1; });
  box.textContent = '';
  tasksShown().forEach(function (ti) {
    var task = META.tasks[ti], mine = rs.filter(function (r) { return r[C.T] === ti; });
    var d = el('details', null, 'task');
    d.id = 'task-' + ti;
    var sum = el('summary');
    sum.appendChild(el('b', task.id));
    sum.appendChild(document.createTextNode(' — ' + task.title + ' (' + task.difficulty +
      ') · ' + mine.length + ' rollouts shown'));
    d.appendChild(sum);
    d.appendChild(el('p', task.instruction, 'instr'));
    d.appendChild(taskStats(counted(mine)));
    var holder = el('div', null, 'runs');
    d.appendChild(holder);
    d.addEventListener('toggle', function () {
      if (d.open && !holder.firstChild) runList(holder, mine);
    });
    if (open[d.id]) { d.open = true; runList(holder, mine); }
    box.appendChild(d);
  });
}
function render() {
  var rs = shown(), c = counted(rs);
  document.getElementById('shown').textContent = 'showing ' + rs.length.toLocaleString('en-US') +
    ' of ' + ROWS.length.toLocaleString('en-US') + ' rollouts' +
    (state.equal ? ' (statistics: equal work only)' : '');
  agentsTable(c);
  robustness(rs);
  chart(c);
  sideBySide(c);
  taskSections(rs);
  runList(document.getElementById('rollouts'), rs);
}

/* ---------- one rollout ---------- */
function metaTable(r) {
  var t = el('table');
  var dir = r[C.DIR] === null ? 'runs\x2f' + r[C.ID] : r[C.DIR];
  [['task', META.tasks[r[C.T]].id], ['agent', META.agents[r[C.A]]], ['run', r[C.RUN]],
    ['result', r[C.PASS] ? 'PASS' : 'FAIL'], ['reward', r[C.REW]],
    ['reward valid', valid(r) ? 'yes' : 'no: ' + invalidWhy(r) + ' (not evidence)'],
    ['baseline', r[C.BASE] ? 'yes: run without faults' : null],
    ['injected faults', r[C.INJ] ? r[C.INJ] + ' (' + r[C.REC] + ' recovered)' : null],
    ['termination', META.reasons[r[C.REASON]]], ['tool calls', r[C.CALLS]],
    ['tool errors', r[C.ERRS]], ['tool faults', r[C.FAULTS]],
    ['verifier error', r[C.VERR] ? 'yes' : 'no'], ['model steps', r[C.STEPS]],
    ['tokens', r[C.IN] + ' in, ' + r[C.OUT] + ' out'], ['cost', r[C.COST]],
    ['duration ms', r[C.DUR]], ['run dir', r[C.ID] ? dir : null], ['error', r[C.ERR]]]
    .forEach(function (p) {
      if (p[1] !== null && p[1] !== undefined) t.appendChild(row([p[0], p[1]]));
    });
  return t;
}
function timeline(steps) {
  var t = el('table', null, 'timeline');
  t.appendChild(head(['#', 'step', 'input ⁄ text', 'output', '']));
  steps.forEach(function (s) {
    var tr;
    if (s[0] === 0) {
      var out = longText(s[4] === null ? '(no result)' : s[4]);
      if (s[6]) out.appendChild(el('pre', 'FAULT ' + s[6], 'fault'));
      tr = row([s[1], s[2], longText(s[3]), out, s[5] ? (s[6] ? 'fault' : 'error') : ''],
        s[5] ? (s[6] ? 'fault' : 'fail') : '');
    } else if (s[0] === 4) {
      var uout = longText(s[4] === null ? '(no result)' : s[4]);
      tr = row([s[1], 'user: ' + s[2], longText(s[3]), uout, s[5] ? 'error' : ''], 'step-user');
    } else if (s[0] === 3) {
      var did = s[4] && s[4].length ? ' [did: ' + s[4].join(', ') + ']' : '';
      tr = row(['', 'message_user', longText(s[1]), longText(s[2] + did),
        s[3] ? 'ended' : ''], 'step-turn');
    } else if (s[0] === 1) {
      var calls = s[6] && s[6].length ? 'calls: ' + s[6].join(', ') : '';
      var tokens = (s[2] === null ? '?' : s[2]) + ' in ⁄ ' + (s[3] === null ? '?' : s[3]) +
        ' out' + (s[4] ? ' · ' + s[4] : '');
      tr = row(['', 'model ' + (s[1] === null ? '' : s[1]), longText(s[5] || ''), calls, tokens],
        'step-model');
    } else {
      tr = row(['', s[1], longText(s[2]), '', ''], 'step-note');
    }
    t.appendChild(tr);
  });
  return t;
}
function idList(kind, ids, omitted) {
  if (!ids || !ids.length) return '';
  var shown = ids.slice(0, 20).join(', ');
  var more = (ids.length > 20 ? ids.length - 20 : 0) + (omitted || 0);
  return (ids.length + (omitted || 0)) + ' ' + kind + ' (' + shown + (more ? ', +' + more +
    ' more' : '') + ')';
}
function jsonText(v) { return v === undefined ? '' : JSON.stringify(v); }
function fieldChange(f) {
  if ('fromLength' in f) {
    var marks = (f.added || []).map(function (x) { return '+' + jsonText(x); })
      .concat((f.removed || []).map(function (x) { return '−' + jsonText(x); }))
      .concat((f.changed || []).map(function (x) { return '~' + jsonText(x); }));
    if (f.itemsOmitted) marks.push('+' + f.itemsOmitted + ' more');
    return [f.fromLength + ' items', f.toLength + ' items: ' + marks.join(', ')];
  }
  var cut = f.cut || {};
  return [('from' in f ? jsonText(f.from) : '(absent)') + (cut.from ? ' [+' + cut.from +
    ' characters]' : ''), ('to' in f ? jsonText(f.to) : '(removed)') + (cut.to ? ' [+' +
    cut.to + ' characters]' : '')];
}
function diffView(d) {
  var box = el('div', null, 'diff');
  if (typeof d === 'string') { box.appendChild(longText(d)); return box; }
  var cols = d.collections || {}, names = Object.keys(cols);
  if (!names.length && !(d.scalars || []).length) box.appendChild(el('p', 'nothing changed'));
  var t = el('table');
  t.appendChild(head(['changed', 'from', 'to']));
  names.forEach(function (name) {
    var c = cols[name];
    var what = ['added', 'removed', 'changed'].map(function (k) {
      return idList(k, c[k], c[k + 'Omitted']);
    }).filter(Boolean).join(' · ');
    box.appendChild(el('p', name + ': ' + what));
    Object.keys(c.fields || {}).forEach(function (id) {
      c.fields[id].forEach(function (f) {
        var path = f.path ? (f.path.charAt(0) === '[' ? id + f.path : id + '.' + f.path) : id;
        var ch = fieldChange(f);
        t.appendChild(row([el('span', path, 'diffpath'), ch[0], ch[1]]));
      });
    });
    if (c.fieldsOmitted) {
      box.appendChild(el('p', '(' + c.fieldsOmitted.records + ' more changed records and ' +
        c.fieldsOmitted.fields + ' more fields not detailed)', 'ci'));
    }
  });
  (d.scalars || []).forEach(function (s) {
    var ch = fieldChange(s);
    t.appendChild(row([el('span', s.field || '(world)', 'diffpath'), ch[0], ch[1]]));
  });
  if (t.rows.length > 1) box.appendChild(t);
  var raw = el('details');
  raw.appendChild(el('summary', 'state-diff as JSON'));
  raw.appendChild(el('pre', JSON.stringify(d, null, 2)));
  box.appendChild(raw);
  return box;
}
function conversation(d) {
  var t = el('table', null, 'conversation');
  t.appendChild(row(['user', longText(d.u)], 'step-user'));
  (d.s || []).forEach(function (s) {
    if (s[0] !== 3) return;
    t.appendChild(row(['agent', longText(s[1])]));
    var did = s[4] && s[4].length ? ' [did: ' + s[4].join(', ') + ']' : '';
    t.appendChild(row(['user', longText(s[2] + did + (s[3] ? ' (ended the conversation)' : ''))],
      'step-user'));
  });
  return t;
}
function rolloutDetails(box, d) {
  box.appendChild(el('h4', 'Agent output'));
  box.appendChild(longText(d.o || ''));
  if (d.u !== undefined) {
    var said = (d.s || []).filter(function (s) { return s[0] === 3; }).length;
    box.appendChild(el('h4', 'Conversation (' + said + ' user turns)'));
    box.appendChild(conversation(d));
  }
  if (d.e) { box.appendChild(el('h4', 'Error')); box.appendChild(longText(d.e)); }
  if (d.t) { box.appendChild(el('h4', 'Traceback')); box.appendChild(longText(d.t, 2000)); }
  var steps = d.s || [], calls = steps.filter(function (s) { return s[0] === 0; }).length;
  var turns = steps.filter(function (s) { return s[0] === 1; }).length;
  box.appendChild(el('h4', 'Trace (' + calls + ' tool calls, ' + turns + ' model turns)'));
  box.appendChild(timeline(steps));
  if (d.n) box.appendChild(el('p', d.n + ' more steps not shown: see trace.jsonl in the run dir.'));
  box.appendChild(el('h4', 'Checks'));
  var k = el('table');
  k.appendChild(head(['check', 'result', 'required', 'detail']));
  (d.k || []).forEach(function (c) {
    k.appendChild(row([c[0], c[1] ? 'pass' : 'FAIL', c[3] ? 'required' : 'optional', c[2]],
      c[1] ? 'pass' : 'fail'));
  });
  box.appendChild(k);
  box.appendChild(el('h4', 'State diff'));
  box.appendChild(diffView(d.d || {}));
}
function showRun(i, first) {
  /* first: the page opened on a #run= link. The rollout is then drawn at the top, above the
     filters, and nothing scrolls: a page scrolled while it loads is captured blank by
     chromium --headless --screenshot, and the rollout is what the link is for. */
  var r = ROWS[i], box = document.getElementById('run');
  if (first) {
    var filters = document.getElementById('filters');
    filters.parentNode.insertBefore(box, filters);
  }
  box.style.display = 'block';
  box.textContent = '';
  box.dataset.run = r[C.ID];
  box.appendChild(el('h3', 'Rollout ' + (r[C.ID] || '(no run directory)')));
  if (r[C.ID]) {
    var link = el('a', 'link to this rollout');
    link.href = '#run=' + encodeURIComponent(r[C.ID]);
    box.appendChild(link);
  }
  box.appendChild(metaTable(r));
  if (r[C.DET] < 0) {
    box.appendChild(el('p', 'Details of this rollout are not embedded in the report (it keeps ' +
      'those of ' + META.embedded.toLocaleString('en-US') + ' rollouts, failures first); ' +
      'see its run dir, or silo-async runs show ' + r[C.ID] + '.', 'ci'));
    if (!first) box.scrollIntoView();
    return;
  }
  try {
    rolloutDetails(box, details()[r[C.DET]] || {});
    box.dataset.loaded = '1';
  } catch (err) {
    box.appendChild(el('p', 'details unavailable: ' + err.message));
  }
  if (!first) box.scrollIntoView();
}

/* ---------- wiring ---------- */
function fromHash(first) {
  var h = decodeURIComponent(location.hash.slice(1));
  if (h.indexOf('run=') === 0) {
    var id = h.slice(4);
    for (var i = 0; i < ROWS.length; i++) if (ROWS[i][C.ID] === id) { showRun(i, first); return; }
  }
  if (h.indexOf('task-') === 0) {
    var b = document.getElementById(h);
    if (b) { b.open = true; b.scrollIntoView(); }
  }
}
function wire() {
  ['agent', 'task', 'reason', 'result', 'fault', 'valid'].forEach(function (name) {
    var sel = document.getElementById('f-' + name);
    sel.addEventListener('change', function () { state[name] = sel.value; render(); });
  });
  var eq = document.getElementById('f-equal');
  if (eq) {
    eq.checked = state.equal;
    eq.addEventListener('change', function () { state.equal = eq.checked; render(); });
  }
  window.addEventListener('hashchange', function () { fromHash(false); });
}
try {
  ROWS = unpack('index');
  ROWS.forEach(function (r, i) { r.index = i; });
  wire();
  render();
  fromHash(true);
  document.body.dataset.ready = '1';
  window.siloReadyMs = performance.now();
} catch (err) {
  document.getElementById('shown').textContent = 'the report data cannot be read: ' + err.message;
}
window.siloShowRun = function (i) { showRun(i); };
})();
