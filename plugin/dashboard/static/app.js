// The dashboard page: renders the model that /events streams (plugin/dashboard/model.ts) and sends the
// buttons' actions to /api/action with the token. Plain JavaScript and DOM: one page of cards
// re-rendered on each model needs no framework, no build step and no dependency to vet; everything it
// uses is in this file. Text goes in with textContent only, never as HTML.
'use strict';

const token = new URLSearchParams(location.search).get('token') || '';
const $ = (sel, root = document) => root.querySelector(sel);
const el = (tag, props = {}, text) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('data-')) e.setAttribute(k, v);
    else e[k] = v;
  }
  if (text !== undefined) e.textContent = text;
  return e;
};

/** age renders the time since an ISO date like kubectl does. */
function age(iso) {
  const t = Date.parse(iso || '');
  if (Number.isNaN(t)) return '';
  const s = Math.max(0, Math.floor((Date.now() - t) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60 ? `${s % 60}s` : ''}`;
  return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`;
}

/** What each button may do in a phase (the API decides in the end; this only spares useless clicks). */
const ENABLED = {
  promote: (c) => c.phase === 'Paused' && (c.promotion !== undefined || c.reason === 'Inconclusive'),
  pause: (c) => !c.paused,
  resume: (c) => c.paused,
  retry: (c) => c.phase === 'Failed' || (c.phase === 'Paused' && c.reason === 'Inconclusive'),
  abort: (c) => c.updateRevision !== undefined && c.updateRevision !== c.currentRevision,
};
const CONFIRM = {
  promote: (c) =>
    c.reason === 'Inconclusive'
      ? `Take the step of ${c.namespace}/${c.name} at partition ${c.partition} although its checks were inconclusive?`
      : `Promote ${c.namespace}/${c.name} past the pause${c.promotion !== undefined ? ` to step ${c.promotion}` : ''}?`,
  pause: (c) => `Pause ${c.namespace}/${c.name}? Nothing moves until it is resumed.`,
  resume: (c) => `Resume ${c.namespace}/${c.name}?`,
  retry: (c) => `Retry ${c.namespace}/${c.name}? Its checks start again from zero.`,
  abort: (c) => `Abort the rollout of ${c.namespace}/${c.name} and restore revision ${c.currentRevision}?`,
};

function notice(text, error) {
  const n = $('#notice');
  n.textContent = text;
  n.className = error ? 'error' : '';
  n.hidden = false;
}

async function act(card, verb) {
  if (!window.confirm(CONFIRM[verb](card))) return;
  try {
    const r = await fetch('/api/action', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Phased-Rollout-Token': token },
      body: JSON.stringify({ namespace: card.namespace, name: card.name, verb }),
    });
    const body = await r.json().catch(() => ({}));
    if (r.ok) notice(body.message || `${verb}: done`, false);
    else notice(`${verb} ${card.namespace}/${card.name} refused (${r.status}): ${body.error || r.statusText}`, true);
  } catch (err) {
    notice(`${verb} ${card.namespace}/${card.name} failed: ${err}`, true);
  }
}

function renderCard(c) {
  const node = $('#card').content.firstElementChild.cloneNode(true);
  node.dataset.name = `${c.namespace}/${c.name}`;
  node.dataset.phase = c.phase;
  node.dataset.partition = String(c.partition);
  $('.name', node).textContent = `${c.namespace}/${c.name}`;
  const phase = $('.phase', node);
  phase.textContent = c.phase;
  phase.dataset.phase = c.phase;
  $('.since', node).textContent = c.since ? `for ${age(c.since)}` : '';
  $('.message', node).textContent = c.message;

  // Pods in ordinal order; the partition is a bar before the first pod at or above it (those run, or
  // will run, the new revision).
  const pods = $('.pods', node);
  const start = c.pods.length ? Math.min(...c.pods.map((p) => p.ordinal)) : 0;
  let barDrawn = false;
  for (const p of c.pods) {
    if (!barDrawn && p.ordinal - start >= c.partition) {
      pods.append(el('span', { class: 'bar', title: `partition ${c.partition}`, 'data-partition': String(c.partition) }));
      barDrawn = true;
    }
    const cls = ['box', p.on, p.ready ? 'ready' : '', p.deleting ? 'deleting' : ''].filter(Boolean).join(' ');
    pods.append(el('span', { class: cls, title: `${p.name}: ${p.revision || 'no revision'}, ${p.ready ? 'ready' : `not ready (${p.phase})`}${p.deleting ? ', terminating' : ''}`, 'data-pod': p.name, 'data-on': p.on, 'data-ready': String(p.ready) }, String(p.ordinal)));
  }
  if (!barDrawn) pods.append(el('span', { class: 'bar', title: `partition ${c.partition}`, 'data-partition': String(c.partition) }));

  const facts = $('.facts', node);
  const fact = (k, v) => {
    if (v === undefined || v === '') return;
    facts.append(el('dt', {}, k), el('dd', {}, v));
  };
  fact('partition', `${c.partition}/${c.replicas}`);
  fact('updated', `${c.updated}/${c.replicas} on ${c.updateRevision || '?'}`);
  fact('known-good', c.currentRevision);
  const gateName = (g) => ((c.dryRun || []).includes(g) ? `${g} (dry-run)` : g);
  fact('gate', [c.streak !== undefined && c.successThreshold !== undefined ? `${c.streak}/${c.successThreshold}` : '', c.gate || ''].filter(Boolean).join(' ') + (c.gates.length ? ` (${c.gates.map(gateName).join(', ')})` : ''));
  if (c.reason === 'Inconclusive') fact('paused', 'after inconclusive checks: promote takes the step, abort rolls back');
  fact('steps', c.steps ? `${c.steps}${c.stage ? `: ${c.stage.released} of ${c.stage.of} released` : ''}${c.promotion !== undefined ? `; waiting to be promoted to step ${c.promotion}` : ''}` : undefined);
  if (c.group) fact('group', `${c.group}, order ${c.groupOrder}`);
  if (c.paused) fact('paused', 'yes (phased-rollout.io/paused)');

  for (const b of node.querySelectorAll('button[data-verb]')) {
    const verb = b.dataset.verb;
    b.disabled = !ENABLED[verb](c);
    b.addEventListener('click', () => act(c, verb));
  }
  const checks = $('.checks', node);
  for (const k of c.checks) checks.append(el('li', { 'data-verdict': k.verdict }, `${age(k.at)} ago ${k.verdict}: ${k.detail}`));
  if (!c.checks.length) checks.append(el('li', {}, 'none reported yet'));
  // Each gate's last measurements (the status's history): outcome, checks in a row, value.
  const history = $('.history', node);
  for (const [gate, runs] of Object.entries(c.history || {}).sort(([a], [b]) => a.localeCompare(b))) {
    for (const m of runs) history.append(el('li', { 'data-verdict': m.result }, `${gateName(gate)}: ${m.result} x${m.count}${m.value ? `, ${m.value}` : ''}, ${age(m.at)} ago`));
  }
  if (!history.childElementCount) history.append(el('li', {}, 'none measured yet'));
  const events = $('.events', node);
  for (const e of c.events) events.append(el('li', { 'data-type': e.type }, `${age(e.at)} ago ${e.reason}${e.count > 1 ? ` (x${e.count})` : ''}: ${e.message}`));
  return node;
}

/** Open <details> survive a re-render. */
const open = new Set();

function render(model) {
  $('#scope').textContent = model.scope;
  for (const d of document.querySelectorAll('.card details[open]')) open.add(d.closest('.card').dataset.name);
  const main = $('#cards');
  main.replaceChildren();
  if (!model.cards.length) {
    main.append(el('p', { class: 'empty' }, 'No opted-in StatefulSets here.'));
    return;
  }
  let group;
  let box = main;
  for (const c of model.cards) {
    const g = c.group ? `${c.namespace}/${c.group}` : undefined;
    if (g !== group) {
      group = g;
      box = main;
      if (g) {
        box = el('div', { class: 'group', 'data-group': g });
        box.append(el('h2', {}, `rollout group ${g} (one member at a time, in order)`));
        main.append(box);
      }
    }
    const node = renderCard(c);
    if (open.has(node.dataset.name)) $('details', node).open = true;
    box.append(node);
  }
  open.clear();
}

function connect() {
  const conn = $('#conn');
  const es = new EventSource(`/events?token=${encodeURIComponent(token)}`);
  es.addEventListener('model', (e) => {
    conn.dataset.state = 'live';
    conn.textContent = 'live';
    render(JSON.parse(e.data));
  });
  es.onerror = () => {
    conn.dataset.state = 'lost';
    conn.textContent = 'reconnecting…';
  };
}

connect();
