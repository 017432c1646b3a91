(() => {
  'use strict';
  const $ = (id) => document.getElementById(id);
  const csrf = document.querySelector('meta[name=csrf]').content;
  const session = document.querySelector('meta[name=session]').content;
  let epoch = 0, frames = 0, chain = Promise.resolve(), marking = null, pending = null, stopped = false;

  async function post(path, body) {
    const r = await fetch(path, { method: 'POST', credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf }, body: JSON.stringify(body) });
    let data = {};
    try { data = await r.json(); } catch (e) { data = {}; }
    return { ok: r.ok, status: r.status, data };
  }
  function say(s) { $('status').textContent = s; }

  function show(state) {
    if (!state || !state.recording) { return; }
    const rec = state.recording;
    $('pass').textContent = rec.pass;
    $('steps').replaceChildren(...rec.steps.map((s) => { const li = document.createElement('li'); li.textContent = s; return li; }));
    $('marks').replaceChildren(...rec.marks.map((s) => { const li = document.createElement('li'); li.textContent = s; return li; }));
    if (state.error) { say(state.error); }
  }
  async function refresh() {
    if (stopped) { return; }
    const r = await fetch('/record/api/state', { credentials: 'same-origin' });
    if (r.ok) { show(await r.json()); }
  }

  async function claim(tries) {
    const r = await post('/api/claim', { session });
    if (r.ok) { epoch = r.data.epoch; say('recording: act on the picture'); $('screen').focus(); return; }
    say('claim refused: ' + (r.data.error || r.status));
    if (tries > 0) { setTimeout(() => claim(tries - 1), 500); }
  }

  function cast() {
    const u = new URL('/ws', location.href);
    u.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:'; u.searchParams.set('session', session); u.searchParams.set('csrf', csrf);
    const ws = new WebSocket(u);
    ws.binaryType = 'blob';
    ws.onmessage = (ev) => {
      if (typeof ev.data === 'string') { return; }
      const img = $('screen'), old = img.src;
      img.onload = () => { if (old.startsWith('blob:')) { URL.revokeObjectURL(old); } };
      img.src = URL.createObjectURL(ev.data); frames++;
    };
  }

  async function act(input) {
    if (!epoch) { say('not claimed'); return; }
    input.epoch = epoch;
    const r = await post('/api/input?session=' + encodeURIComponent(session), input);
    const d = r.data || {};
    if (d.needs_confirm) {
      pending = input;
      $('confirm-msg').textContent = 'Irreversible: ' + d.role + ' "' + d.name + '". Confirm?';
      $('confirm-box').hidden = false;
      return;
    }
    say(d.dispatched ? 'recorded: ' + d.role + ' "' + d.name + '"' : 'refused: ' + (d.error || r.status));
    await refresh();
  }

  async function mark(m, x, y) {
    const r = await post('/record/api/mark', { kind: m.kind, name: m.name, type: m.type, x, y });
    show(r.data);
    say(r.ok ? 'marked ' + m.kind + ' ' + (m.name || '') : 'not marked: ' + ((r.data && r.data.error) || r.status));
  }

  function arm(kind) {
    const name = $('mark-name').value.trim(), type = $('mark-type').value;
    if (kind !== 'checkpoint' && !name) { say('give the ' + kind + ' a name first'); return; }
    marking = { kind, name, type };
    $('screen').classList.add('marking');
    say('click the ' + kind + ' on the picture');
  }
  $('mark-output').addEventListener('click', () => arm('output'));
  $('mark-outcome').addEventListener('click', () => arm('outcome'));
  $('mark-checkpoint').addEventListener('click', () => arm('checkpoint'));
  $('branch').addEventListener('click', () => { chain = chain.then(async () => {
    const r = await post('/record/api/branch', {});
    show(r.data); say(r.ok ? 'branch: show the other path from the start, then mark its outcome' : 'refused');
  }); });
  $('stop').addEventListener('click', () => { chain = chain.then(async () => {
    say('compiling, sealing and replaying…');
    const r = await post('/record/api/stop', {});
    stopped = true;
    $('result').hidden = false;
    $('result').textContent = JSON.stringify(r.data, null, 2);
    say(r.ok ? (r.data.passed ? 'sealed; the eval replay passed' : 'sealed; the eval replay did not pass') : 'stop failed: ' + (r.data.error || r.status));
  }); });
  $('confirm').addEventListener('click', () => {
    $('confirm-box').hidden = true;
    if (pending) { const p = pending; pending = null; p.confirm = true; chain = chain.then(() => act(p)); }
  });
  $('confirm-cancel').addEventListener('click', () => { $('confirm-box').hidden = true; pending = null; say('not sent'); });
  $('screen').addEventListener('click', (e) => {
    const img = e.currentTarget;
    const sx = img.naturalWidth / img.clientWidth, sy = img.naturalHeight / img.clientHeight;
    const x = e.offsetX * sx, y = e.offsetY * sy;
    if (marking) {
      const m = marking; marking = null; img.classList.remove('marking');
      chain = chain.then(() => mark(m, x, y));
      return;
    }
    chain = chain.then(() => act({ kind: 'click', x, y }));
  });
  $('screen').addEventListener('keydown', (e) => {
    if (e.key.length === 1 || ['Enter', 'Tab', 'Backspace', 'Delete', 'Escape', 'ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'Home', 'End'].includes(e.key)) {
      e.preventDefault();
      const input = { kind: 'key', key: e.key === ' ' ? 'Space' : e.key };
      chain = chain.then(() => act(input));
    }
  });
  window.cuaRecord = { frames: () => frames, epoch: () => epoch, idle: () => chain, marking: () => marking !== null };
  setInterval(() => { if (epoch && !stopped) { post('/api/renew', { session, epoch }); } }, 20000);
  setInterval(refresh, 1000);
  cast(); claim(20); refresh();
})();
