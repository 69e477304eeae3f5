/* rmq console: a read-only single page over the name server's JSON API.
 * Views are chosen by the URL hash (#view=topics&topic=T, #view=groups&group=G,
 * #view=message&id=ID, #view=controller); the cluster view polls /api/cluster and
 * /api/tps once a second and draws the name server's last hour (per broker
 * address in and out TPS, the busiest topics' put TPS) on canvases, full from the
 * first load; a group's view lists its clients, its queues' lag and a pop
 * consumer's messages in flight, and charts its lag over the hour;
 * the controller view polls /api/controller (controller mode's groups, epochs and
 * elections). No libraries. */
'use strict';

const POLL_MS = 1000;
/* per broker address: [in, out] colours */
const COLORS = [['#2563eb', '#16a34a'], ['#9333ea', '#d97706'], ['#0891b2', '#dc2626'], ['#4f46e5', '#65a30d']];

const $ = (sel) => document.querySelector(sel);

function esc(v) {
  return String(v === undefined || v === null ? '' : v)
    .replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function fmtNum(n) {
  if (n === undefined || n === null || n === '' || isNaN(Number(n))) return '–';
  return Number(n).toLocaleString('en-US');
}

function fmtTps(n) {
  n = Number(n) || 0;
  return n >= 100 ? n.toFixed(0) : n.toFixed(1);
}

function fmtBytes(n) {
  n = Number(n);
  if (!isFinite(n) || n < 0) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let u = 0;
  while (n >= 1024 && u < units.length - 1) { n /= 1024; u++; }
  return (u ? n.toFixed(1) : n.toFixed(0)) + ' ' + units[u];
}

function fmtTime(ms) {
  if (!ms || ms <= 0) return '–';
  const d = new Date(Number(ms));
  return d.toLocaleString('sv-SE').replace('T', ' ');
}

function hashState() {
  const s = {};
  new URLSearchParams(location.hash.replace(/^#/, '')).forEach((v, k) => { s[k] = v; });
  s.view = s.view || 'cluster';
  return s;
}

function setHash(obj) {
  location.hash = new URLSearchParams(obj).toString();
}

async function getJSON(url) {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), 8000);
  try {
    /* from the origin: a page opened as https://user:pass@host/ has a base
       URL with credentials, which fetch refuses; the browser still sends
       the account it logged in with (same origin, same realm) */
    const r = await fetch(location.origin + url, { signal: ctl.signal, cache: 'no-store',
                                                   credentials: 'same-origin' });
    const text = await r.text();
    if (!r.ok) throw new Error(url + ': HTTP ' + r.status + ' ' + text.trim());
    return JSON.parse(text);
  } finally {
    clearTimeout(timer);
  }
}

function setStatus(text, bad) {
  const el = $('#status');
  el.textContent = text;
  el.className = 'status' + (bad ? ' bad' : '');
}

/* ---- cluster view --------------------------------------------------------- */

function roleOf(b) {
  if (b.info && b.info.brokerRole) return b.info.brokerRole;
  return b.id === 0 ? 'MASTER' : 'SLAVE';
}

function replicationCell(b) {
  const info = b.info || {};
  if (b.id === 0) {
    const n = Number(info.haSlaveCount || 0);
    if (!info.haSlaveCount) return '<span class="muted">–</span>';
    if (n === 0) return '<span class="pill warn">no slaves</span>';
    const parts = [];
    for (let i = 0; i < n; i++) {
      const lag = Number(info['haSlave' + i + '.lagBytes']);
      const inSync = info['haSlave' + i + '.inSync'] === 'true';
      parts.push('<span class="pill ' + (inSync ? 'ok' : 'warn') + '">slave ' +
        esc(info['haSlave' + i + '.brokerId']) + ' lag ' + esc(fmtBytes(lag)) + '</span>');
    }
    return parts.join(' ');
  }
  const connected = info.haConnected === 'true';
  const lag = b.lagBytes !== undefined && b.lagBytes >= 0 ? fmtBytes(b.lagBytes) : '?';
  return '<span class="pill ' + (connected ? 'ok' : 'bad') + '">' + (connected ? 'connected' : 'disconnected') +
    '</span> lag ' + esc(lag);
}

function renderCluster(c) {
  const ns = c.namesrv;
  $('#ns-summary').innerHTML = [
    ['Broker addresses live', ns.brokersLive], ['Broker sets', ns.brokerNames],
    ['Topics', ns.topics], ['Name server connections', ns.connections],
    ['Total in TPS', fmtTps(c.brokers.reduce((a, b) => a + (b.inTps || 0), 0))],
    ['Total out TPS', fmtTps(c.brokers.reduce((a, b) => a + (b.outTps || 0), 0))],
  ].map(([k, v]) => '<div class="card"><div class="k">' + esc(k) + '</div><div class="v">' + esc(v) + '</div></div>').join('');
  const rows = c.brokers.slice().sort((a, b) =>
    a.cluster.localeCompare(b.cluster) || a.name.localeCompare(b.name) || a.id - b.id);
  $('#brokers tbody').innerHTML = rows.map((b) => {
    const info = b.info || {};
    const state = b.ok ? (info.storeState || 'OK') : 'UNREACHABLE';
    const cls = !b.ok ? 'bad' : state === 'WRITABLE' ? 'ok' : 'warn';
    const disk = info.diskRatio !== undefined ? (Number(info.diskRatio) * 100).toFixed(1) + '%' : '–';
    return '<tr class="broker-row" data-broker="' + esc(b.name) + '">' +
      '<td>' + esc(b.cluster) + '</td><td>' + esc(b.name) + '</td><td class="num">' + esc(b.id) + '</td>' +
      '<td>' + esc(roleOf(b)) + '</td><td>' + esc(b.addr) + '</td>' +
      '<td><span class="pill ' + cls + '" title="' + esc(b.error) + '">' + esc(state) + '</span></td>' +
      '<td class="num">' + fmtTps(b.inTps) + '</td><td class="num">' + fmtTps(b.outTps) + '</td>' +
      '<td class="num">' + fmtNum(info.commitLogMaxOffset) + '</td><td class="num">' + esc(disk) + '</td>' +
      '<td>' + replicationCell(b) + '</td></tr>';
  }).join('') || '<tr><td colspan="11" class="muted">no brokers registered</td></tr>';
}

const PALETTE = ['#2563eb', '#16a34a', '#9333ea', '#d97706', '#0891b2', '#dc2626', '#4f46e5', '#65a30d'];

function fmtAgo(ms) {
  const m = Math.round(ms / 60000);
  return m >= 1 ? '-' + m + ' min' : '-' + Math.round(ms / 1000) + ' s';
}

/* Draws series ({label, color, dash, pts: [[t, v]...]}) over the window
 * [now - span, now] on canvas, its legend under it. What it shows is readable
 * from the DOM (data-points, data-last: tests compare it over time). */
function drawSeries(canvas, legend, series, now, span, unit) {
  const ratio = window.devicePixelRatio || 1;
  const w = canvas.clientWidth || 1200, h = canvas.clientHeight || 280;
  canvas.width = Math.round(w * ratio);
  canvas.height = Math.round(h * ratio);
  const g = canvas.getContext('2d');
  g.setTransform(ratio, 0, 0, ratio, 0, 0);
  g.clearRect(0, 0, w, h);
  const pad = { l: 64, r: 12, t: 12, b: 26 };
  const t0 = now - span;
  let ymax = 10;
  series.forEach((s) => s.pts.forEach((p) => { if (p[0] >= t0 && p[1] > ymax) ymax = p[1]; }));
  const mag = Math.pow(10, Math.floor(Math.log10(ymax)));
  ymax = Math.ceil(ymax / mag) * mag;
  const x = (t) => pad.l + (t - t0) / span * (w - pad.l - pad.r);
  const y = (v) => h - pad.b - v / ymax * (h - pad.t - pad.b);
  g.font = '11px system-ui, sans-serif';
  g.strokeStyle = '#e5e7eb';
  g.fillStyle = '#6b7385';
  g.lineWidth = 1;
  for (let i = 0; i <= 4; i++) {
    const v = ymax * i / 4;
    g.beginPath();
    g.moveTo(pad.l, y(v));
    g.lineTo(w - pad.r, y(v));
    g.stroke();
    g.textAlign = 'right';
    g.fillText(fmtTps(v) + unit, pad.l - 6, y(v) + 4);
  }
  g.textAlign = 'center';
  for (let k = 0; k <= 6; k++) {
    const s = span * k / 6;
    g.fillText(k === 6 ? 'now' : fmtAgo(span - s), x(t0 + s), h - 8);
  }
  let total = 0;
  series.forEach((s) => {
    const pts = s.pts.filter((p) => p[0] >= t0);
    total += pts.length;
    if (!pts.length) return;
    g.strokeStyle = s.color;
    g.lineWidth = 2;
    g.setLineDash(s.dash);
    g.beginPath();
    pts.forEach((p, k) => (k ? g.lineTo(x(p[0]), y(p[1])) : g.moveTo(x(p[0]), y(p[1]))));
    g.stroke();
  });
  g.setLineDash([]);
  const last = series.map((s) => (s.pts.length ? s.pts[s.pts.length - 1] : [0, 0]));
  canvas.dataset.points = String(total);
  canvas.dataset.last = last.map((p) => p[0] + ':' + p[1]).join(',');
  legend.innerHTML = series.map((s, i) =>
    '<span><i style="background:' + s.color + '"></i>' +
    esc(s.label) + ' ' + fmtTps(last[i][1]) + unit + '</span>').join('') || 'no data yet';
  legend.dataset.last = canvas.dataset.last;
}

/* The hour the name server kept: in (solid) and out (dashed) TPS per broker
 * address, and each kept topic's put TPS. */
function drawChart(tps) {
  const span = tps.periodMs * tps.slots;
  const series = [];
  tps.brokers.forEach((b, i) => {
    const color = COLORS[i % COLORS.length];
    const label = b.name + (b.id ? ' #' + b.id : '') + ' ' + b.addr;
    series.push({ label: label + ' in', color: color[0], dash: [], pts: b.points.map((p) => [p[0], p[1]]) });
    series.push({ label: label + ' out', color: color[1], dash: [6, 4], pts: b.points.map((p) => [p[0], p[2]]) });
  });
  drawSeries($('#tps-chart'), $('#tps-legend'), series, tps.nowMs, span, '/s');
  const topics = tps.topics.map((t, i) => ({ label: t.name, color: PALETTE[i % PALETTE.length], dash: [], pts: t.points }));
  drawSeries($('#topic-chart'), $('#topic-legend'), topics, tps.nowMs, span, '/s');
  $('#topic-kept').textContent = tps.topicsKept + ' of at most ' + tps.topicsMax + ' topics kept (the busiest)';
}

async function pollCluster() {
  const [c, t] = await Promise.all([getJSON('/api/cluster'), getJSON('/api/tps')]);
  renderCluster(c);
  drawChart(t);
}

/* ---- topics ---------------------------------------------------------------- */

let topicsCache = [];

function renderTopics() {
  const f = $('#topic-filter').value.trim().toLowerCase();
  const sel = hashState().topic;
  $('#topics tbody').innerHTML = topicsCache.filter((t) => !f || t.name.toLowerCase().includes(f)).map((t) =>
    '<tr class="click' + (t.name === sel ? ' sel' : '') + '" data-topic="' + esc(t.name) + '"><td>' + esc(t.name) +
    '</td><td>' + esc(t.brokers.map((b) => b.name).join(', ')) + '</td><td>' +
    esc(t.brokers.map((b) => b.readQueues + '/' + b.writeQueues).join(', ')) + '</td></tr>').join('') ||
    '<tr><td colspan="3" class="muted">no topics</td></tr>';
}

async function pollTopics() {
  const r = await getJSON('/api/topics');
  topicsCache = r.topics;
  renderTopics();
  const sel = hashState().topic;
  if (sel) await showTopic(sel);
}

async function showTopic(name) {
  const r = await getJSON('/api/topic?name=' + encodeURIComponent(name));
  let html = '<h3 id="topic-title">Topic ' + esc(r.topic) + '</h3>';
  r.brokers.forEach((b) => {
    if (!b.ok) {
      html += '<p class="error">' + esc(b.name) + ' (' + esc(b.addr) + '): ' + esc(b.error) + '</p>';
      return;
    }
    const total = b.queues.reduce((a, q) => a + (q.maxOffset - q.minOffset), 0);
    html += '<h3>' + esc(b.name) + ' <span class="muted">' + esc(b.addr) + ' · ' + fmtNum(total) +
      ' messages</span></h3><table class="grid topic-queues"><thead><tr><th class="num">Queue</th>' +
      '<th class="num">Min offset</th><th class="num">Max offset</th><th class="num">Messages</th>' +
      '<th>Last stored</th></tr></thead><tbody>' +
      b.queues.map((q) => '<tr><td class="num">' + q.queueId + '</td><td class="num min-offset">' + fmtNum(q.minOffset) +
        '</td><td class="num max-offset">' + fmtNum(q.maxOffset) + '</td><td class="num">' +
        fmtNum(q.maxOffset - q.minOffset) + '</td><td>' + esc(fmtTime(q.lastUpdateMs)) + '</td></tr>').join('') +
      '</tbody></table>';
  });
  $('#topic-detail').innerHTML = html;
}

/* ---- consumer groups ---------------------------------------------------------- */

async function pollGroups() {
  const r = await getJSON('/api/groups');
  const groups = new Map();
  r.brokers.forEach((b) => (b.entries || []).forEach((e) => {
    const g = groups.get(e.group) || { topics: new Set(), brokers: new Set() };
    g.topics.add(e.topic);
    g.brokers.add(b.name);
    groups.set(e.group, g);
  }));
  const errs = r.brokers.filter((b) => !b.ok).map((b) => esc(b.name) + ': ' + esc(b.error));
  $('#groups tbody').innerHTML = [...groups.entries()].sort().map(([name, g]) =>
    '<tr class="click" data-group="' + esc(name) + '"><td>' + esc(name) + '</td><td>' +
    esc([...g.topics].join(', ')) + '</td><td>' + esc([...g.brokers].join(', ')) + '</td></tr>').join('') +
    (errs.length ? '<tr><td colspan="3" class="error">' + errs.join('<br>') + '</td></tr>' : '') ||
    '<tr><td colspan="3" class="muted">no consumer offsets stored yet</td></tr>';
  const sel = hashState().group;
  if (sel) await showGroup(sel);
}

async function showGroup(name) {
  const r = await getJSON('/api/groups?group=' + encodeURIComponent(name));
  let total = 0;
  let inflight = 0;
  let rows = '';
  r.brokers.forEach((b) => {
    if (!b.ok) {
      rows += '<tr><td colspan="7" class="error">' + esc(b.name) + ': ' + esc(b.error) + '</td></tr>';
      return;
    }
    b.queues.forEach((q) => {
      total += q.lag;
      inflight += q.inflight;
      rows += '<tr><td>' + esc(q.topic) + '</td><td>' + esc(b.name) + '</td><td class="num">' + q.queueId +
        '</td><td class="num">' + fmtNum(q.brokerOffset) + '</td><td class="num">' + fmtNum(q.consumerOffset) +
        '</td><td class="num">' + fmtNum(q.lag) + '</td><td class="num">' + fmtNum(q.inflight) + '</td></tr>';
    });
  });
  const clients = r.clients.map((c) => '<tr class="client"><td>' + esc(c.clientId) + '</td><td>' + esc(c.host) +
    '</td><td>' + esc(c.language) + '</td><td class="num">' + esc(c.version) + '</td><td>' + esc(c.protocol) +
    '</td><td>' + esc(fmtTime(c.lastHeartbeatMs)) + '</td></tr>').join('');
  $('#group-detail').innerHTML = '<h3>Group ' + esc(r.group) + ' <span class="muted">total lag ' + fmtNum(total) +
    (inflight ? ', ' + fmtNum(inflight) + ' in flight' : '') + '</span></h3><h3>Clients</h3><table id="group-clients" class="grid"><thead><tr><th>Client id</th><th>Host</th>' +
    '<th>Language</th><th class="num">Version</th><th>Protocol</th><th>Last heartbeat</th></tr></thead><tbody>' +
    (clients || '<tr><td colspan="6" class="muted">no client online</td></tr>') + '</tbody></table>' +
    '<h3>Lag over the last hour</h3><div class="chart-wrap"><canvas id="lag-chart" width="1200" height="200" ' +
    'data-points="0"></canvas><div id="lag-legend" class="legend"></div></div>' +
    '<h3>Queues</h3><table class="grid"><thead><tr><th>Topic</th><th>Broker</th><th class="num">Queue</th>' +
    '<th class="num">Broker offset</th><th class="num">Consumer offset</th><th class="num">Lag</th>' +
    '<th class="num" title="popped by a pop consumer, not yet acked">In flight</th></tr></thead>' +
    '<tbody>' + (rows || '<tr><td colspan="7" class="muted">no queues</td></tr>') + '</tbody></table>';
  const now = Date.now();
  const span = r.lagHistory.length ? Math.max(now - r.lagHistory[0][0], 60000) : 3600000;
  drawSeries($('#lag-chart'), $('#lag-legend'), [{ label: 'lag', color: PALETTE[0], dash: [], pts: r.lagHistory }],
    now, span, '');
}

/* ---- message lookup ---------------------------------------------------------- */

async function showMessage(id) {
  $('#msg-id').value = id;
  if (!id) return;
  let r;
  try {
    r = await getJSON('/api/message?id=' + encodeURIComponent(id));
  } catch (e) {
    $('#msg-detail').innerHTML = '<p class="error">' + esc(e.message) + '</p>';
    return;
  }
  if (!r.found) {
    $('#msg-detail').innerHTML = '<p class="error">' + esc(r.addr) + ': ' + esc(r.error) + '</p>';
    return;
  }
  const kv = [['Topic', r.topic], ['Tags', r.tags], ['Keys', r.keys], ['Broker', r.addr], ['Queue', r.queueId],
    ['Queue offset', r.queueOffset], ['Commit-log offset', r.commitLogOffset], ['Born', fmtTime(r.bornTimestampMs)],
    ['Stored', fmtTime(r.storeTimestampMs)], ['Born host', r.bornHost], ['Reconsume times', r.reconsumeTimes],
    ['Properties', r.properties], ['Body length', r.bodyLength + ' bytes' + (r.bodyTruncated ? ' (first 4096 shown)' : '')]];
  $('#msg-detail').innerHTML = '<dl class="kv">' + kv.map(([k, v]) => '<dt>' + esc(k) + '</dt><dd>' + esc(v) + '</dd>').join('') +
    '</dl><h3>Body</h3><pre class="body">' + esc(r.body) + '</pre>';
}

/* ---- controller ------------------------------------------------------------ */

function masterCell(id, addr) {
  return id < 0 ? '<span class="muted">none</span>' : esc(id) + ' <span class="muted">' + esc(addr) + '</span>';
}

function renderController(c) {
  $('#ctl-summary').innerHTML = [
    ['This controller', c.leader ? 'leader' : 'standby'], ['Broker groups', c.groups.length],
    ['Elections committed here', c.electionsTotal],
  ].map(([k, v]) => '<div class="card"><div class="k">' + esc(k) + '</div><div class="v">' + esc(v) + '</div></div>').join('');
  const rows = [];
  c.groups.slice().sort((a, b) => a.cluster.localeCompare(b.cluster) || a.broker.localeCompare(b.broker))
    .forEach((g) => {
      const head = '<td>' + esc(g.cluster) + '</td><td>' + esc(g.broker) + '</td><td>' +
        masterCell(g.masterBrokerId, g.masterAddress) + '</td><td class="num master-epoch">' + esc(g.masterEpoch) +
        '</td><td class="sync-set">' + esc(g.syncStateSet.join(',')) + '</td><td class="num">' +
        esc(g.syncStateSetEpoch) + '</td>';
      const reps = g.replicas.slice().sort((a, b) => a.brokerId - b.brokerId);
      (reps.length ? reps : [null]).forEach((r) => {
        if (!r) { rows.push('<tr data-group="' + esc(g.broker) + '">' + head + '<td colspan="7" class="muted">no replica heard</td></tr>'); return; }
        const cls = r.role === 'MASTER' ? 'ok' : r.role === 'DOWN' ? 'bad' : '';
        rows.push('<tr data-group="' + esc(g.broker) + '">' + head + '<td class="num">' + esc(r.brokerId) + '</td><td>' +
          esc(r.addr) + '</td><td><span class="pill ' + cls + '">' + esc(r.role) + '</span></td><td>' +
          (r.inSync ? 'yes' : 'no') + '</td><td class="num">' + fmtNum(r.epoch) + '</td><td class="num">' +
          fmtNum(r.maxOffset) + '</td><td class="num">' + (r.lagBytes === null ? '–' : esc(fmtBytes(r.lagBytes))) +
          '</td></tr>');
      });
    });
  $('#ctl-groups tbody').innerHTML = rows.join('') ||
    '<tr><td colspan="13" class="muted">no broker group has registered with the controller</td></tr>';
  $('#ctl-elections tbody').innerHTML = c.elections.map((e) =>
    '<tr class="election"><td>' + esc(fmtTime(e.timeMs)) + '</td><td>' + esc(e.cluster) + '</td><td>' + esc(e.broker) +
    '</td><td>' + masterCell(e.oldMasterId, e.oldMasterAddress) + '</td><td>' +
    masterCell(e.newMasterId, e.newMasterAddress) + '</td><td class="num">' + esc(e.masterEpoch) + '</td></tr>').join('') ||
    '<tr><td colspan="6" class="muted">no election committed by this controller</td></tr>';
}

async function pollController() {
  renderController(await getJSON('/api/controller'));
}

/* ---- wiring ---------------------------------------------------------------- */

let timer = null;

async function tick() {
  const s = hashState();
  try {
    if (s.view === 'cluster') await pollCluster();
    else if (s.view === 'topics') await pollTopics();
    else if (s.view === 'groups') await pollGroups();
    else if (s.view === 'controller') await pollController();
    setStatus('updated ' + new Date().toLocaleTimeString('sv-SE'));
  } catch (e) {
    setStatus(e.message, true);
  }
  if (s.view !== 'message') timer = setTimeout(tick, s.view === 'cluster' ? POLL_MS : 2 * POLL_MS);
}

function route() {
  const s = hashState();
  document.querySelectorAll('.view').forEach((v) => { v.hidden = v.id !== 'view-' + s.view; });
  document.querySelectorAll('nav a').forEach((a) => a.classList.toggle('active', a.dataset.view === s.view));
  if (s.view !== 'topics') $('#topic-detail').innerHTML = '';
  if (s.view !== 'groups') $('#group-detail').innerHTML = '';
  clearTimeout(timer);
  if (s.view === 'message') showMessage(s.id || '');
  tick();
}

$('#topics').addEventListener('click', (e) => {
  const tr = e.target.closest('tr[data-topic]');
  if (tr) setHash({ view: 'topics', topic: tr.dataset.topic });
});
$('#groups').addEventListener('click', (e) => {
  const tr = e.target.closest('tr[data-group]');
  if (tr) setHash({ view: 'groups', group: tr.dataset.group });
});
$('#topic-filter').addEventListener('input', renderTopics);
$('#msg-form').addEventListener('submit', (e) => {
  e.preventDefault();
  setHash({ view: 'message', id: $('#msg-id').value.trim() });
});
window.addEventListener('hashchange', route);
window.addEventListener('resize', () => { if (hashState().view === 'cluster') { clearTimeout(timer); tick(); } });
route();
