'use strict';
(() => {
  const csrf = document.querySelector('meta[name=csrf]').content;
  const $ = (id) => document.getElementById(id);
  let watching = null, epoch = 0, ws = null, pending = null, frames = 0, chain = Promise.resolve();
  window.cuaConsole = { frames: () => frames, epoch: () => epoch, idle: () => chain, socket: () => (ws ? ws.readyState : -1) };

  async function post(path, body) {
    const r = await fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
      body: JSON.stringify(body), credentials: 'same-origin' });
    let data = {};
    try { data = await r.json(); } catch (e) { /* no body */ }
    return { ok: r.ok, status: r.status, data };
  }
  function say(text) { $('status').textContent = text; }

  async function refresh() {
    const r = await fetch('/api/sessions', { credentials: 'same-origin' });
    if (!r.ok) { return; }
    const list = (await r.json()).sessions || [];
    const body = $('sessions').tBodies[0];
    body.replaceChildren();
    for (const w of list) {
      const tr = document.createElement('tr');
      tr.dataset.session = w.session_id;
      let eff = w.effects ? (w.effects.sent ? 'sent' : 'none sent') : '';
      if (w.human_effects && w.human_effects.length) {
        const by = w.human_effects.map((h) => h.risk + ' ' + h.role + ' "' + h.name + '" sent by ' + h.principal);
        eff = (w.effects && w.effects.sent ? 'sent; ' : '') + by.join('; ');
      }
      const state = w.lease ? w.lease.state + (w.lease.holder.startsWith('human:') ? ' (' + w.lease.holder.slice(6) + ')' : '')
        : (w.relay_error || (w.relay ? 'its worker no longer holds it' : 'not held live: the run ended (resolve it with cua interventions)'));
      const why = [w.failure_code, w.summary].filter(Boolean).join(': ') + (w.screen ? ' [screen: ' + w.screen + ']' : '');
      for (const t of [w.session_id, w.capability, w.step, why, eff, state]) {
        const td = document.createElement('td'); td.textContent = t; tr.appendChild(td);
      }
      const td = document.createElement('td');
      if (w.lease) {
        const b = document.createElement('button'); b.textContent = 'Watch'; b.className = 'watch';
        b.addEventListener('click', () => watch(w.session_id)); td.appendChild(b);
      }
      tr.appendChild(td);
      body.appendChild(tr);
      if (w.session_id === watching && w.lease) {
        $('lease').textContent = w.lease.state + ' epoch ' + w.lease.epoch;
        showHolder(w.lease);
        // Another holder at our epoch or later took the session (an expiry, a
        // colleague). A list fetched before our claim answered shows an older
        // epoch: it must not undo the claim.
        if (w.lease.holder !== 'human:' + me() && w.lease.epoch >= epoch) { epoch = 0; }
      }
    }
    if (watching) { view(); plan(); }
  }

  const me = () => document.querySelector('meta[name=operator]').content;
  // showHolder says who holds the watched session and until when; a hold of
  // this principal from another tab or browser can be picked up with Claim.
  function showHolder(l) {
    let text = 'held by the automation';
    if (l.holder.startsWith('human:')) {
      const who = l.holder.slice(6);
      text = 'held by ' + who + (l.expires_at ? ' until ' + new Date(l.expires_at).toISOString().slice(11, 19) + ' UTC' : '');
      if (who === me() && !epoch && l.state === 'HUMAN_CONTROL') { text += ' (your claim from another tab: Claim picks it up here)'; }
    } else if (l.state === 'PAUSED') {
      text = 'waiting for an operator';
    }
    $('holder').textContent = text;
  }

  // plan shows what the run will do if resumed now and disables Resume
  // with the reason when resuming would fail.
  async function plan() {
    const r = await fetch('/api/plan?session=' + encodeURIComponent(watching), { credentials: 'same-origin' });
    if (!r.ok) { return; }
    showPlan((await r.json()).plan);
  }
  function showPlan(p) {
    const ul = $('plan-steps'), li = (t, cls) => { const e = document.createElement('li'); e.textContent = t; if (cls) { e.className = cls; } ul.appendChild(e); };
    ul.replaceChildren();
    const blocked = p && p.blocked && p.blocked.length ? p.blocked.join('; ') : '';
    $('blocked').hidden = !blocked;
    $('blocked').textContent = blocked ? 'Resume blocked: ' + blocked : '';
    $('resume').disabled = !!blocked;
    $('resume').title = blocked;
    if (!p) { li('this run gives no plan'); return; }
    li('parked at ' + p.parked_at);
    li('skip (done already): ' + (p.skip && p.skip.length ? p.skip.join(', ') : 'none'));
    li(p.resume_at ? 'resume at ' + p.resume_at : 'every step is done: read the results');
    for (const a of p.ahead || []) {
      const how = !a.reached ? 'after a gate: parks before it' : a.authorized ? 'authorized for this run' : 'NOT authorized: ' + a.why;
      li('ahead: ' + a.step + ' (' + a.risk + ', ' + how + ')', a.reached && !a.authorized ? 'unauthorized' : '');
    }
  }

  async function view() {
    const r = await fetch('/api/view?session=' + encodeURIComponent(watching), { credentials: 'same-origin' });
    if (!r.ok) { return; }
    const v = await r.json();
    $('dialog').hidden = !v.dialog;
    $('dialog-msg').textContent = v.dialog || '';
  }

  function watch(id) {
    watching = id; epoch = 0;
    $('watch').hidden = false; $('watch-id').textContent = id;
    if (ws) { ws.close(); }
    const u = new URL('/ws', location.href);
    u.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:'; u.searchParams.set('session', id); u.searchParams.set('csrf', csrf);
    ws = new WebSocket(u);
    ws.binaryType = 'blob';
    ws.onmessage = (ev) => {
      if (typeof ev.data === 'string') { return; }
      const url = URL.createObjectURL(ev.data);
      const img = $('screen'), old = img.src;
      img.onload = () => { if (old.startsWith('blob:')) { URL.revokeObjectURL(old); } };
      img.src = url; frames++;
    };
  }

  async function act(input) {
    if (!watching || !epoch) { say('claim the session first'); return; }
    input.epoch = epoch;
    const r = await post('/api/input?session=' + encodeURIComponent(watching), input);
    const d = r.data || {};
    if (d.needs_confirm) {
      pending = input;
      $('confirm-msg').textContent = 'Irreversible: ' + d.role + ' "' + d.name + '". Confirm?';
      $('confirm-box').hidden = false;
      return;
    }
    say(d.dispatched ? 'sent to ' + d.role + ' "' + d.name + '"' : 'refused: ' + (d.error || r.status));
    view(); plan();
  }

  $('claim').addEventListener('click', async () => {
    const r = await post('/api/claim', { session: watching });
    if (r.ok) { epoch = r.data.epoch; say('claimed at epoch ' + epoch); $('screen').focus(); } else { say('claim refused: ' + (r.data.error || r.status)); }
    refresh();
  });
  $('release').addEventListener('click', async () => {
    const r = await post('/api/release', { session: watching, epoch });
    say(r.ok ? 'released' : 'release refused: ' + (r.data.error || r.status)); epoch = 0; refresh();
  });
  $('resume').addEventListener('click', async () => {
    const r = await post('/api/resume', { session: watching });
    if (r.data && r.data.plan) { showPlan(r.data.plan); }
    say(r.ok ? 'resumed' : (r.data.error || 'resume refused: ' + r.status)); refresh();
  });
  $('dialog-ok').addEventListener('click', () => act({ kind: 'dialog_accept' }));
  $('dialog-cancel').addEventListener('click', () => act({ kind: 'dialog_dismiss' }));
  $('confirm').addEventListener('click', () => {
    $('confirm-box').hidden = true;
    if (pending) { const p = pending; pending = null; p.confirm = true; act(p); }
  });
  $('confirm-cancel').addEventListener('click', () => { $('confirm-box').hidden = true; pending = null; say('not sent'); });
  $('screen').addEventListener('click', (e) => {
    const img = e.currentTarget;
    const sx = img.naturalWidth / img.clientWidth, sy = img.naturalHeight / img.clientHeight;
    const input = { kind: 'click', x: e.offsetX * sx, y: e.offsetY * sy };
    chain = chain.then(() => act(input));
  });
  $('screen').addEventListener('keydown', (e) => {
    if (e.key.length === 1 || ['Enter', 'Tab', 'Backspace', 'Delete', 'Escape', 'ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'Home', 'End'].includes(e.key)) {
      e.preventDefault();
      const input = { kind: 'key', key: e.key === ' ' ? 'Space' : e.key };
      chain = chain.then(() => act(input));
    }
  });
  setInterval(() => { if (epoch) { post('/api/renew', { session: watching, epoch }); } }, 20000);
  setInterval(refresh, 1000);
  refresh();
})();
