// The page of `neardup serve`: paste a text or choose a file, and see the
// stored documents near it (POST /v1/search) and the passages copied into
// it (POST /v1/report, whose HTML is neardup's report view, escaped by
// the server). Plain DOM and fetch, no framework; served under a strict
// Content-Security-Policy (this file is the only script).
'use strict';

(() => {
  const $ = (id) => document.getElementById(id);
  let info = null;
  let fileName = null;

  /** A request to the API; resolves to {ok, status, data}. */
  async function api(method, path, body, raw) {
    const init = { method, credentials: 'same-origin', headers: {} };
    if (raw !== undefined) {
      init.body = raw;
      init.headers['Content-Type'] = 'application/octet-stream';
    } else if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers['Content-Type'] = 'application/json';
    }
    let response;
    try {
      response = await fetch(path, init);
    } catch (e) {
      return { ok: false, status: 0, data: { error: { message: 'the server cannot be reached (' + e.message + ')' } } };
    }
    let data = null;
    try {
      data = await response.json();
    } catch (e) {
      data = { error: { message: 'the server answered ' + response.status + ' without JSON' } };
    }
    return { ok: response.ok, status: response.status, data };
  }

  function message(r) {
    return (r.data && r.data.error && r.data.error.message) || ('error ' + r.status);
  }

  function showError(text) {
    $('error').textContent = text || '';
    $('error').hidden = !text;
  }

  function status(text) {
    $('status').textContent = text;
  }

  function busy(on) {
    for (const el of document.querySelectorAll('#check button, #check input, #check textarea')) el.disabled = on;
  }

  function describe() {
    const p = info.passages;
    const parts = [info.documents + ' documents (' + info.method + ')'];
    parts.push(p ? 'passages of ' + (p.documents !== undefined && p.documents !== null ? p.documents + ' ' : '') +
      (p.texts ? 'documents whose texts are kept' : 'documents (texts not kept)')
      : 'no passages (only whole documents are compared)');
    $('about').textContent = 'Checking against ' + parts.join('; ') + '.';
  }

  async function start() {
    const r = await api('GET', '/v1/stats');
    if (r.status === 401) {
      $('about').textContent = 'This server needs its token.';
      $('login').hidden = false;
      $('token').focus();
      return;
    }
    if (!r.ok) {
      showError(message(r));
      return;
    }
    info = r.data;
    describe();
    $('login').hidden = true;
    $('check').hidden = false;
    $('logout').hidden = !info.token;
  }

  async function login(event) {
    event.preventDefault();
    const r = await api('POST', '/v1/session', { token: $('token').value });
    $('token').value = '';
    if (!r.ok) {
      showError(r.status === 401 ? 'Wrong token.' : message(r));
      $('token').focus();
      return;
    }
    showError('');
    await start();
  }

  async function logout() {
    await api('DELETE', '/v1/session');
    $('check').hidden = true;
    $('results').hidden = true;
    await start();
  }

  // Sizes as the server writes them: 1023 bytes, 1.5 KiB, 10 MiB.
  function units(n) {
    if (n < 1024) return n + ' bytes';
    const names = ['KiB', 'MiB', 'GiB', 'TiB'];
    let v = n / 1024, u = 0;
    while (v >= 1024 && u + 1 < names.length) { v /= 1024; u += 1; }
    return v.toFixed(1).replace(/\.0$/, '') + ' ' + names[u];
  }

  // Why the server would refuse `file`, before it is sent (null: it
  // would not): documents are held to the upload limit; files it reads
  // as plain text (any other name) to the text limit as well.
  function tooLarge(file) {
    const dot = file.name.lastIndexOf('.');
    const ext = dot < 0 ? '' : file.name.slice(dot + 1).toLowerCase();
    const isDocument = (info.document_extensions || []).indexOf(ext) >= 0;
    if (file.size > info.max_upload_bytes) {
      return file.name + ' is ' + units(file.size) + ', over this server\'s upload limit of ' +
        units(info.max_upload_bytes) + ' (--max-upload); paste its text instead.';
    }
    if (!isDocument && info.max_text_bytes && file.size > info.max_text_bytes) {
      return file.name + ' is ' + units(file.size) + ' of plain text, over this server\'s text limit of ' +
        units(info.max_text_bytes) + ' (--max-body); split it, or check it with neardup report.';
    }
    return null;
  }

  async function chooseFile() {
    const file = $('file').files[0];
    if (!file) return;
    showError('');
    const over = info && tooLarge(file);
    if (over) {
      showError(over);
      $('file').value = '';
      return;
    }
    busy(true);
    status('Reading ' + file.name + '…');
    const r = await api('POST', '/v1/extract?name=' + encodeURIComponent(file.name), undefined, file);
    busy(false);
    if (!r.ok) {
      status('');
      showError(message(r));
      $('file').value = '';
      return;
    }
    fileName = file.name;
    $('text').value = r.data.text;
    status('Read ' + r.data.chars + ' characters from ' + file.name + ' (' + r.data.kind + '). Check it, or edit the text first.');
    $('go').focus();
  }

  function cell(row, text) {
    const td = document.createElement('td');
    td.textContent = text;
    row.appendChild(td);
  }

  function showNear(search) {
    const body = $('near-table').tBodies[0];
    body.replaceChildren();
    const matches = search.matches;
    for (const m of matches) {
      const row = document.createElement('tr');
      cell(row, m.id);
      const sim = m.similarity !== undefined ? m.similarity : 1 - m.distance / info.bits;
      cell(row, (100 * sim).toFixed(1) + '%');
      cell(row, m.distance + (m.similarity !== undefined ? ' values' : ' bits'));
      body.appendChild(row);
    }
    $('near-table').hidden = matches.length === 0;
    $('near-none').hidden = matches.length !== 0;
  }

  function showReport(report) {
    const none = $('passages-none');
    if (!report) {
      none.textContent = 'This data directory keeps no passages: build them with `neardup index build --passages`.';
      none.hidden = false;
      $('report').replaceChildren();
      return;
    }
    none.hidden = true;
    // neardup's report view, every text in it escaped by the server.
    $('report').innerHTML = report.html;
  }

  async function check(event) {
    event.preventDefault();
    const text = $('text').value;
    if (!text.trim()) {
      showError('Paste a text or choose a file first.');
      $('text').focus();
      return;
    }
    showError('');
    busy(true);
    status('Checking…');
    const started = performance.now();
    const name = fileName || 'the pasted text';
    const [near, report] = await Promise.all([
      api('POST', '/v1/search', { text, limit: 20 }),
      info.passages ? api('POST', '/v1/report', { text, name, html: true }) : Promise.resolve(null),
    ]);
    busy(false);
    const failed = [near, report].find((r) => r && !r.ok);
    if (failed) {
      status('');
      showError(message(failed));
      return;
    }
    showNear(near.data);
    showReport(report && report.data);
    const ms = Math.round(performance.now() - started);
    let summary = near.data.matches.length + ' near-duplicate documents';
    if (report) {
      summary += '; ' + (100 * report.data.similarity).toFixed(1) + '% of the text found in ' +
        report.data.sources.length + ' sources';
    }
    status('Done in ' + ms + ' ms: ' + summary + '.');
    $('results').hidden = false;
    document.body.dataset.checked = String(Date.now());
    $('results').focus();
  }

  document.addEventListener('DOMContentLoaded', () => {
    $('login').addEventListener('submit', login);
    $('check').addEventListener('submit', check);
    $('file').addEventListener('change', chooseFile);
    $('logout').addEventListener('click', logout);
    $('text').addEventListener('input', () => { fileName = null; });
    start();
  });
})();
