// approvalbot's approval page. Every piece of text that comes from an agent
// is set with textContent, never as HTML; the server has already made
// invisible and bidi characters visible (⟨U+202E⟩).
'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  const GUARD_MS = 600; // a new card ignores taps this long: an old tap never answers a new call
  const MAX_BATCH = 8; // gate.MaxBatch: the most calls one "Approve all" covers, as in chat
  const state = { csrf: '', approver: '', skew: 0, cards: new Map(), batches: new Map(), es: null, retry: null, tab: 'pending', linkCode: '', before: 0 };

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  async function api(method, path, body) {
    const opt = { method, headers: {}, credentials: 'same-origin', cache: 'no-store' };
    if (method !== 'GET') {
      opt.headers['Content-Type'] = 'application/json';
      opt.headers['X-CSRF-Token'] = state.csrf;
      opt.body = JSON.stringify(body || {});
    }
    let r;
    try {
      r = await fetch(path, opt);
    } catch (err) {
      return { ok: false, status: 0, data: { error: 'the daemon cannot be reached' } };
    }
    let data = {};
    try { data = await r.json(); } catch (_) { /* not JSON */ }
    if (r.status === 401 && state.csrf && !path.endsWith('/login') && !path.endsWith('/redeem')) signedOut('Signed out. Sign in again.');
    return { ok: r.ok, status: r.status, data };
  }

  function now() { return Date.now() + state.skew; }
  function setSkew(serverNow) { const t = Date.parse(serverNow); if (!isNaN(t)) state.skew = t - Date.now(); }

  // ---- sign-in ----

  function showSignin(msg) {
    $('signin').hidden = false;
    for (const id of ['pending', 'history', 'rules', 'tabs', 'logout']) $(id).hidden = true;
    $('who').textContent = '';
    $('conn').textContent = '';
    $('link-signin').hidden = !state.linkCode;
    $('signin-error').textContent = msg || '';
  }

  function signedIn(d) {
    state.csrf = d.csrf;
    state.approver = d.approver;
    setSkew(d.now);
    $('signin').hidden = true;
    $('tabs').hidden = false;
    $('logout').hidden = false;
    $('who').textContent = d.approver;
    showTab(state.tab);
    connect();
  }

  function signedOut(msg) {
    state.csrf = '';
    if (state.es) { state.es.close(); state.es = null; }
    clearTimeout(state.retry);
    state.cards.forEach((c) => c.node.remove());
    state.cards.clear();
    state.batches.forEach((b) => b.node.remove());
    state.batches.clear();
    updateCount();
    showSignin(msg);
  }

  $('login-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const tok = $('token').value.trim();
    if (!tok) return;
    const r = await api('POST', '/ui/api/login', { token: tok });
    $('token').value = '';
    if (r.ok) signedIn(r.data); else $('signin-error').textContent = r.data.error || 'sign-in failed';
  });

  $('redeem').addEventListener('click', async () => {
    const code = state.linkCode;
    state.linkCode = '';
    $('link-signin').hidden = true;
    const r = await api('POST', '/ui/api/redeem', { code });
    if (r.ok) signedIn(r.data); else showSignin(r.data.error || 'sign-in failed');
  });

  $('logout').addEventListener('click', async () => {
    await api('POST', '/ui/api/logout');
    signedOut('Signed out.');
  });

  // ---- tabs ----

  function showTab(name) {
    state.tab = name;
    for (const b of $('tabs').querySelectorAll('button')) b.setAttribute('aria-selected', String(b.dataset.tab === name));
    for (const id of ['pending', 'history', 'rules']) $(id).hidden = id !== name;
    if (name === 'history') { state.before = 0; $('history-list').textContent = ''; loadHistory(); }
    if (name === 'rules') loadRules();
  }
  $('tabs').addEventListener('click', (ev) => {
    const b = ev.target.closest('button');
    if (b && b.dataset.tab) showTab(b.dataset.tab);
  });

  // ---- live pending approvals ----

  function connect() {
    if (state.es) state.es.close();
    const es = new EventSource('/ui/api/events');
    state.es = es;
    es.addEventListener('hello', (e) => {
      const d = JSON.parse(e.data);
      setSkew(d.now);
      setConn('live', true);
      // The replay that follows re-sends every pending approval; a card
      // it does not re-send was decided while we were away: ask.
      const seen = new Set();
      state.seen = seen;
      setTimeout(() => { if (state.seen === seen) recheck(seen); }, 2000);
    });
    es.addEventListener('approval', (e) => {
      const v = JSON.parse(e.data);
      if (state.seen) state.seen.add(v.id);
      upsert(v);
    });
    es.onerror = async () => {
      setConn('reconnecting…', false);
      if (es.readyState !== EventSource.CLOSED) return; // the browser retries by itself
      const s = await api('GET', '/ui/api/session');
      if (!s.data.signed_in) { signedOut('Signed out. Sign in again.'); return; }
      clearTimeout(state.retry);
      state.retry = setTimeout(connect, 2000);
    };
  }

  async function recheck(seen) {
    for (const [id, c] of state.cards) {
      if (seen.has(id) || !c.v.pending) continue;
      const r = await api('GET', '/ui/api/approvals/' + encodeURIComponent(id));
      if (r.ok) upsert(r.data); else if (r.status === 404) remove(id);
    }
  }

  function setConn(text, ok) {
    const c = $('conn');
    c.textContent = text;
    c.classList.toggle('ok', ok);
  }

  function upsert(v) {
    const c = state.cards.get(v.id);
    if (v.pending) {
      if (c) { c.v = v; return; }
      const node = card(v);
      state.cards.set(v.id, { v, node });
      place(node, v);
    } else if (c) {
      resolve(c, v);
    }
    updateCount();
  }

  // place keeps cards oldest first.
  function place(node, v) {
    const list = $('cards');
    for (const other of list.children) {
      const o = state.cards.get(other.dataset.id);
      if (o && o.v.created_at > v.created_at) { list.insertBefore(node, other); return; }
    }
    list.appendChild(node);
  }

  function remove(id) {
    const c = state.cards.get(id);
    if (!c) return;
    c.node.remove();
    state.cards.delete(id);
    updateCount();
  }

  function resolve(c, v) {
    c.v = v;
    c.node.classList.add('done', v.good ? 'good' : 'bad');
    for (const x of c.node.querySelectorAll('.actions, .panel-scope, .panel-reason, .countdown')) x.remove();
    const out = c.node.querySelector('.outcome');
    out.textContent = v.icon + ' ' + (v.outcome || v.headline);
    out.hidden = false;
    setTimeout(() => remove(v.id), 8000);
  }

  function updateCount() {
    let n = 0;
    state.cards.forEach((c) => { if (c.v.pending) n++; });
    $('count').textContent = n ? String(n) : '';
    $('empty').hidden = state.cards.size > 0;
    document.title = n ? '(' + n + ') approvalbot' : 'approvalbot';
    renderBatches();
  }

  // renderBatches offers "Approve all N" / "Deny all N" for each agent
  // session with two or more calls pending. A bar lists its calls when it
  // is drawn and decides exactly those, each with the digest it showed;
  // when the set changes the bar is drawn anew and ignores taps for a
  // moment, so a call that just arrived is never decided unseen.
  function renderBatches() {
    const groups = new Map();
    state.cards.forEach((c) => {
      if (!c.v.pending) return;
      const k = JSON.stringify([c.v.agent, c.v.session || '']);
      if (!groups.has(k)) groups.set(k, []);
      groups.get(k).push(c.v);
    });
    for (const [k, b] of state.batches) {
      const vs = groups.get(k);
      if (!vs || vs.length < 2) { b.node.remove(); state.batches.delete(k); }
    }
    for (const [k, vs] of groups) {
      if (vs.length < 2) continue;
      vs.sort((a, b) => (a.created_at < b.created_at ? -1 : 1));
      const members = vs.slice(0, MAX_BATCH).map((v) => ({ id: v.id, digest: v.digest }));
      const sig = members.map((m) => m.id + ':' + m.digest).join(',');
      const old = state.batches.get(k);
      if (old && old.sig === sig) continue;
      const node = batchBar(vs[0], vs.length, members);
      if (old) old.node.replaceWith(node); else $('batches').appendChild(node);
      state.batches.set(k, { sig, node });
    }
  }

  function batchBar(first, total, members) {
    const node = el('div', 'batch');
    let what = members.length + ' calls from ' + first.agent + (first.session ? ' · session ' + first.session : '');
    if (total > members.length) what += ' (the oldest ' + members.length + ' of ' + total + ')';
    node.appendChild(el('p', '', what));
    const actions = el('div', 'actions');
    const err = el('p', 'error');
    const buttons = [];
    const decide = async (choice) => {
      buttons.forEach((b) => { b.disabled = true; });
      const r = await api('POST', '/ui/api/batch', { choice, members });
      if (!r.ok) { err.textContent = r.data.error || 'failed'; buttons.forEach((b) => { b.disabled = false; }); return; }
      for (const res of r.data.results) if (res.approval) upsert(res.approval);
    };
    for (const [choice, cls, label] of [['approve', 'approve', 'Approve all ' + members.length], ['deny', 'deny', 'Deny all ' + members.length]]) {
      const b = el('button', cls, label);
      b.type = 'button';
      b.disabled = true;
      b.addEventListener('click', () => decide(choice));
      actions.appendChild(b);
      buttons.push(b);
    }
    node.appendChild(actions);
    node.appendChild(err);
    setTimeout(() => buttons.forEach((b) => { b.disabled = false; }), GUARD_MS);
    return node;
  }

  function card(v) {
    const node = el('article', 'card');
    node.dataset.id = v.id;
    if (v.outside.length) node.classList.add('outside');

    const head = el('div', 'head');
    head.appendChild(el('h2', 'title', v.title));
    head.appendChild(el('span', 'countdown'));
    node.appendChild(head);
    if (v.note) node.appendChild(el('p', 'note', v.note));

    if (v.risks.length) {
      const risks = el('ul', 'risks');
      for (const r of v.risks) risks.appendChild(el('li', 'risk', r));
      node.appendChild(risks);
    }
    if (v.outside.length) node.appendChild(el('p', 'banner', '⚠ OUTSIDE PROJECT: ' + v.outside.join(', ')));
    for (const w of v.warnings) node.appendChild(el('p', 'warning', '⚠ ' + w));

    if (v.body) {
      node.appendChild(el('div', 'label', v.body_label));
      const pre = el('pre', 'body ' + v.body_kind);
      if (v.body_kind === 'diff') {
        for (const line of v.body.split('\n')) {
          const cls = line.startsWith('+') && !line.startsWith('+++') ? 'add' : line.startsWith('-') && !line.startsWith('---') ? 'del' : '';
          pre.appendChild(el('span', cls, line + '\n'));
        }
      } else {
        pre.textContent = v.body;
      }
      node.appendChild(pre);
      if (v.body.length > 600 || v.body.split('\n').length > 12) {
        pre.classList.add('clamp');
        const full = el('button', 'link full', 'Full');
        full.type = 'button';
        full.addEventListener('click', () => {
          const open = pre.classList.toggle('clamp');
          full.textContent = open ? 'Full' : 'Less';
        });
        node.appendChild(full);
      }
    }

    const dl = el('dl', 'fields');
    for (const f of v.fields) {
      dl.appendChild(el('dt', '', f.name));
      dl.appendChild(el('dd', '', f.value));
    }
    node.appendChild(dl);
    if (v.always.length) {
      const p = el('p', 'always-save', 'Always would save: ');
      for (const a of v.always) p.appendChild(el('code', '', a));
      node.appendChild(p);
    }

    const actions = el('div', 'actions');
    const scope = el('div', 'panel-scope');
    scope.hidden = true;
    const reason = el('form', 'panel-reason');
    reason.hidden = true;
    const err = el('p', 'error');
    err.setAttribute('role', 'alert');
    const buttons = [];
    const button = (parent, cls, label, fn) => {
      const b = el('button', cls, label);
      b.type = 'button';
      b.disabled = true;
      b.addEventListener('click', fn);
      parent.appendChild(b);
      buttons.push(b);
      return b;
    };
    const decide = async (choice, extra) => {
      buttons.forEach((b) => { b.disabled = true; });
      err.textContent = '';
      const body = Object.assign({ choice, digest: v.digest }, extra || {});
      const r = await api('POST', '/ui/api/approvals/' + encodeURIComponent(v.id) + '/decide', body);
      if (r.ok) { upsert(r.data); return; }
      if (r.data.approval) { upsert(r.data.approval); return; }
      err.textContent = r.data.error || 'failed';
      buttons.forEach((b) => { b.disabled = false; });
    };
    const kinds = new Set(v.choices.map((ch) => ch.kind));
    if (kinds.has('approve')) button(actions, 'approve', 'Approve', () => decide('approve'));
    if (kinds.has('always')) {
      button(actions, 'always', 'Always…', () => { scope.hidden = !scope.hidden; reason.hidden = true; });
      scope.appendChild(el('p', '', 'Always allow ' + v.always.join(', ') + '? For how long?'));
      for (const s of v.scopes) button(scope, 'always', s.label, () => decide('always', { scope_key: s.key }));
    }
    if (kinds.has('deny') || kinds.has('deny_reason')) {
      button(actions, 'deny', 'Deny…', () => {
        reason.hidden = !reason.hidden;
        scope.hidden = true;
        if (!reason.hidden) input.focus();
      });
    }
    if (kinds.has('stop')) button(actions, 'stop', 'Stop', () => decide('stop', { reason: input.value.trim() }));
    const input = el('input', 'reason');
    input.type = 'text';
    input.maxLength = 2000;
    input.placeholder = 'Reason for the agent (optional)';
    input.setAttribute('aria-label', 'Reason');
    reason.appendChild(input);
    const send = button(reason, 'deny', 'Deny', () => {});
    send.type = 'submit';
    reason.addEventListener('submit', (ev) => { ev.preventDefault(); decide('deny', { reason: input.value.trim() }); });

    node.appendChild(actions);
    node.appendChild(scope);
    node.appendChild(reason);
    node.appendChild(el('p', 'outcome')).hidden = true;
    node.appendChild(err);
    setTimeout(() => buttons.forEach((b) => { b.disabled = false; }), GUARD_MS);
    tickCard(node, v);
    return node;
  }

  function tickCard(node, v) {
    const cd = node.querySelector('.countdown');
    if (!cd || !v.deadline) return;
    const left = Math.max(0, Math.round((Date.parse(v.deadline) - now()) / 1000));
    const m = Math.floor(left / 60), s = left % 60;
    cd.textContent = left > 0 ? m + ':' + String(s).padStart(2, '0') + ' left' : 'expiring';
    cd.classList.toggle('late', left < 60);
  }
  setInterval(() => state.cards.forEach((c) => { if (c.v.pending) tickCard(c.node, c.v); }), 1000);

  // ---- history ----

  const EVENTS = { pending: 'asked', evaluated: 'answered by the rules', decided: 'decided', rule_added: 'Always rule added', rule_removed: 'Always rule revoked', mode: 'mode changed' };

  function fmtTime(t) {
    const d = new Date(t);
    return isNaN(d) ? '' : d.toLocaleString();
  }

  async function loadHistory() {
    const r = await api('GET', '/ui/api/history' + (state.before ? '?before=' + state.before : ''));
    if (!r.ok) return;
    const list = $('history-list');
    for (const e of r.data.entries) {
      const li = el('li', 'entry ' + (e.decision ? (e.good ? 'good' : 'bad') : ''));
      const what = [EVENTS[e.event] || e.event.replace(/_/g, ' ')];
      if (e.status && e.status !== e.event && e.event !== 'pending') what.push(e.status.replace(/_/g, ' '));
      if (e.by) what.push('by ' + e.by);
      const head = el('div', 'entry-head');
      head.appendChild(el('strong', '', what.join(' · ')));
      head.appendChild(el('time', '', fmtTime(e.time)));
      li.appendChild(head);
      const who = [e.agent, e.tool].filter(Boolean).join(' · ');
      if (who) li.appendChild(el('div', 'meta', who));
      if (e.summary) li.appendChild(el('code', 'summary', e.summary));
      if (e.detail) li.appendChild(el('div', 'meta', e.detail));
      list.appendChild(li);
    }
    state.before = r.data.before || 0;
    $('older').hidden = !state.before;
    if (!list.children.length) list.appendChild(el('li', 'empty', 'Nothing yet.'));
  }
  $('older').addEventListener('click', loadHistory);

  // ---- Always rules ----

  async function loadRules() {
    const r = await api('GET', '/ui/api/rules');
    if (!r.ok) return;
    const list = $('rules-list');
    list.textContent = '';
    $('rules-empty').hidden = r.data.rules.length > 0;
    for (const rule of r.data.rules) {
      const li = el('li', 'entry');
      const head = el('div', 'entry-head');
      head.appendChild(el('code', 'pattern', rule.tool + ': ' + rule.pattern));
      li.appendChild(head);
      const scope = rule.scope === 'session' ? 'this session (' + rule.session + ')' : 'this agent';
      const meta = [rule.agent, scope, 'by ' + (rule.created_by || '?'), fmtTime(rule.created_at)];
      if (rule.expires_at) meta.push('expires ' + fmtTime(rule.expires_at));
      li.appendChild(el('div', 'meta', meta.join(' · ')));
      const b = el('button', 'deny', 'Revoke');
      b.type = 'button';
      const msg = el('p', 'error');
      b.addEventListener('click', async () => {
        if (!b.dataset.armed) { b.dataset.armed = '1'; b.textContent = 'Tap again to revoke'; return; }
        b.disabled = true;
        const res = await api('POST', '/ui/api/rules/' + encodeURIComponent(rule.id) + '/revoke');
        if (res.ok) li.remove(); else { msg.textContent = res.data.error || 'failed'; b.disabled = false; }
        $('rules-empty').hidden = list.children.length > 0;
      });
      li.appendChild(b);
      li.appendChild(msg);
      list.appendChild(li);
    }
  }

  // ---- start ----

  async function start() {
    const m = location.hash.match(/^#link=([A-Za-z0-9_-]+)$/);
    if (m) {
      state.linkCode = m[1];
      history.replaceState(null, '', location.pathname + location.search);
    }
    const s = await api('GET', '/ui/api/session');
    if (s.data.signed_in) { state.linkCode = ''; signedIn(s.data); } else showSignin(s.status === 0 ? s.data.error : '');
  }
  start();
})();
