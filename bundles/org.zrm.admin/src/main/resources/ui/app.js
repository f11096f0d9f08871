// ZRM status page: polls /status and /metrics once a second and draws the pipeline. Plain
// browser JavaScript, no build step; every value shown comes from those two endpoints.
'use strict';

const POLL_MS = 1000;
const HISTORY = 120; // points per chart: two minutes at one poll a second

const $ = id => document.getElementById(id);
const text = (id, value) => { $(id).textContent = value === null || value === undefined || value === '' ? '–' : String(value); };

/** Prometheus text format → {"name{labels}": value} (comments skipped). */
function parseMetrics(body) {
  const out = {};
  for (const line of body.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    out[line.slice(0, space)] = Number(line.slice(space + 1));
  }
  return out;
}

class Chart {
  constructor(canvasId, valueId) {
    this.canvas = $(canvasId);
    this.valueId = valueId;
    this.points = [];
  }
  push(value, label) {
    this.points.push(value === null || Number.isNaN(value) ? null : value);
    if (this.points.length > HISTORY) this.points.shift();
    text(this.valueId, label);
    this.draw();
  }
  draw() {
    const c = this.canvas.getContext('2d');
    const w = this.canvas.width, h = this.canvas.height;
    c.clearRect(0, 0, w, h);
    const known = this.points.filter(p => p !== null);
    const max = Math.max(1, ...known);
    c.strokeStyle = '#3d7be0';
    c.lineWidth = 1.5;
    c.beginPath();
    let drawing = false;
    this.points.forEach((p, i) => {
      if (p === null) { drawing = false; return; }
      const x = (i / (HISTORY - 1)) * w;
      const y = h - 2 - (p / max) * (h - 6);
      if (drawing) c.lineTo(x, y); else c.moveTo(x, y);
      drawing = true;
    });
    c.stroke();
  }
}

const charts = {
  throughput: new Chart('chart-throughput', 'throughput-value'),
  frames: new Chart('chart-frames', 'frames-value'),
  lag: new Chart('chart-lag', 'lag-value'),
};
let previous = null; // {at, metrics}

function stageClass(id, cls) {
  const el = $(id);
  el.classList.remove('live', 'warn', 'down');
  if (cls) el.classList.add(cls);
}

function rate(now, name) {
  if (!previous || !(name in now.metrics) || !(name in previous.metrics)) return null;
  const seconds = (now.at - previous.at) / 1000;
  return seconds > 0 ? Math.max(0, (now.metrics[name] - previous.metrics[name]) / seconds) : null;
}

function eta(seconds) {
  if (seconds === null || seconds === undefined) return '';
  return seconds < 90 ? `${Math.round(seconds)} s left` : `${Math.round(seconds / 60)} min left`;
}

function renderProblems(status) {
  const problems = [];
  for (const c of status.components || []) {
    if (c.state !== 'ACTIVE' && c.state !== 'SATISFIED') {
      const refs = (c.unsatisfiedReferences || []).map(r => r.missing).join('; ');
      problems.push(`${c.name}: ${c.state}${refs ? ' (' + refs + ')' : ''}${c.failure ? ' ' + c.failure.split('\n')[0] : ''}`);
    }
  }
  for (const s of status.unhealthySections || []) problems.push(`section ${s} reports itself unhealthy`);
  const box = $('problems');
  box.hidden = problems.length === 0;
  box.textContent = problems.join('\n');
  box.style.whiteSpace = 'pre-line';
}

function renderPipeline(status) {
  const sections = status.sections || {};
  const source = sections['changesource.pg'] || {};
  const streamer = sections.changestreamer || {};
  const replicator = sections.replicator || {};
  const sync = source.initialSync || {};
  text('source-state', source.shard ? (sync.phase && sync.phase !== 'DONE' ? `initial sync: ${sync.phase}` : 'synced') : 'not registered');
  text('source-shard', source.shard);
  text('source-replica-version', sync.replicaVersion || streamer.replicaVersion);
  stageClass('stage-source', source.shard ? 'live' : 'down');

  const storer = streamer.storer || {};
  text('storer-state', storer.backPressure ? 'back-pressure' : (streamer.lastStoredWatermark ? 'storing' : 'waiting'));
  text('stored-watermark', streamer.lastStoredWatermark);
  text('acked-watermark', streamer.lastAckedWatermark);
  stageClass('stage-storer', storer.backPressure ? 'warn' : (streamer.lastStoredWatermark ? 'live' : null));

  text('streamer-state', streamer.state ? streamer.state + (streamer.lastError ? ': ' + streamer.lastError : '') : 'not running');
  text('streamer-transactions', streamer.transactions);
  text('streamer-changes', streamer.changes);
  stageClass('stage-streamer', streamer.state === 'streaming' ? 'live'
      : (streamer.state === 'stopped' || !streamer.state ? 'down' : 'warn'));

  const subs = streamer.subscribers || [];
  text('subscriber-count', subs.length);
  stageClass('stage-subscribers', subs.length > 0 ? 'live' : null);
  const body = $('subscribers').querySelector('tbody');
  body.replaceChildren(...subs.map(s => {
    const tr = document.createElement('tr');
    for (const v of [s.id, s.mode, s.protocolVersion, s.acked, s.bufferedBytes]) {
      const td = document.createElement('td');
      td.textContent = v === null || v === undefined ? '–' : String(v);
      tr.appendChild(td);
    }
    return tr;
  }));

  text('replica-state', replicator.phase ? `${replicator.phase} (${replicator.changeStreamer})` : 'not running');
  text('replica-watermark', replicator.stateVersion);
  stageClass('stage-replica', replicator.phase === 'REPLICATING' ? 'live' : (replicator.phase ? 'warn' : null));
}

function renderBackup(status) {
  const b = (status.sections || {}).backup;
  const dl = $('backup');
  const rows = b ? [
    ['strategy', `${b.strategy} → ${b.effectiveStrategy}`],
    ['active monitor', b.active],
    ['confirmed', b.confirmedWatermark],
    ['purging', b.purgeBlockedReason ? 'paused: ' + b.purgeBlockedReason : 'allowed'],
    ['reservations', (b.reservations || []).length],
  ] : [['backup', 'not configured']];
  dl.replaceChildren(...rows.flatMap(([k, v]) => {
    const dt = document.createElement('dt'); dt.textContent = k;
    const dd = document.createElement('dd'); dd.textContent = v === null || v === undefined ? '–' : String(v);
    return [dt, dd];
  }));
}

function renderProgress(status) {
  const source = (status.sections || {})['changesource.pg'] || {};
  const items = [];
  const sync = source.initialSync;
  if (sync && sync.phase && sync.phase !== 'DONE') {
    items.push({label: `initial sync (${sync.phase})`, done: sync.rows, total: sync.rowsEstimate, eta: sync.etaSeconds});
  }
  for (const bf of source.backfills || []) {
    items.push({label: `backfill ${bf.table} [${(bf.columns || []).join(', ')}] ${bf.state}`,
      done: bf.rows, total: bf.totalRows, eta: bf.etaSeconds, error: bf.lastError});
  }
  const box = $('progress');
  if (items.length === 0) { box.textContent = 'nothing running'; return; }
  box.replaceChildren(...items.map(i => {
    const div = document.createElement('div');
    const bar = document.createElement('progress');
    if (i.total) { bar.max = i.total; bar.value = i.done || 0; }
    div.append(`${i.label}: ${i.done || 0}${i.total ? ' / ' + i.total : ''} rows ${eta(i.eta)} `, bar);
    if (i.error) div.append(` (${i.error})`);
    return div;
  }));
}

async function poll() {
  try {
    const [statusResponse, metricsResponse] = await Promise.all([fetch('/status'), fetch('/metrics')]);
    const status = await statusResponse.json();
    const now = {at: Date.now(), metrics: parseMetrics(await metricsResponse.text())};
    const badge = $('healthy');
    badge.textContent = status.healthy ? 'healthy' : 'unhealthy';
    badge.className = 'badge ' + (status.healthy ? 'ok' : 'bad');
    renderProblems(status);
    renderPipeline(status);
    renderBackup(status);
    renderProgress(status);
    const changes = rate(now, 'zrm_changestreamer_changes_total');
    charts.throughput.push(changes, changes === null ? '–' : changes.toFixed(0));
    const frames = rate(now, 'zrm_changestreamer_http_frames_sent_total');
    charts.frames.push(frames, frames === null ? '–' : frames.toFixed(0));
    const lag = ((status.sections || {}).replicator || {}).lastCommitLagMs;
    charts.lag.push(lag === undefined ? null : lag, lag === null || lag === undefined ? '–' : lag);
    previous = now;
    text('updated', 'updated ' + new Date(now.at).toLocaleTimeString());
  } catch (e) {
    const badge = $('healthy');
    badge.textContent = 'unreachable';
    badge.className = 'badge bad';
    text('updated', String(e));
  } finally {
    setTimeout(poll, POLL_MS);
  }
}

poll();
