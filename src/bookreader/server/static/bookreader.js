/* BookReader browser client: "Ask about this" for any web page.  No build step.
 *
 *   <script src="https://SERVER/static/bookreader.js"></script>
 *   <script>BookReader.init({server: "https://SERVER", key: "TOKEN", bookId: "ID"});</script>
 *
 * Select text in the page: an "Ask about this" button appears.  The panel takes the
 * question, checks the selection as the server does (trimmed, 1-4,000 characters), calls
 * POST /query-selected-text (or the whole book with the toggle), streams the answer and
 * shows the checked answer with its citations.  `key` may be a string or a function.
 */
(function (global) {
  'use strict';

  var MAX_SELECTION = 4000;
  var MAX_QUESTION = 1000;
  var MESSAGES = {
    emptySelection: 'The selection is empty. Select some text in the book first.',
    longSelection: function (n) {
      return 'The selection is ' + n.toLocaleString('en') + ' characters long; the limit is ' +
        '4,000. Select less text and ask again.';
    },
    emptyQuestion: 'The question is empty. Type a question about the book.',
    longQuestion: function (n) {
      return 'The question is ' + n.toLocaleString('en') + ' characters long; the limit is ' +
        '1,000. Shorten it.';
    },
    noKey: 'Enter the API key your instructor gave you.',
    unreachable: function (server, origin) {
      return 'Could not reach the BookReader server at ' + server + '. It may not be ' +
        'running, or it does not accept questions from this site: the instructor starts it ' +
        'with --cors-origin ' + origin + '.';
    }
  };

  var CSS = [
    '.br-ask{position:absolute;z-index:2147483000;font:600 13px system-ui,sans-serif;',
    'background:#1f5fa8;color:#fff;border:0;border-radius:5px;padding:6px 10px;cursor:pointer;',
    'box-shadow:0 2px 6px rgba(0,0,0,.25)}',
    '.br-panel{position:fixed;z-index:2147483001;right:16px;bottom:16px;width:380px;',
    'max-height:80vh;overflow:auto;background:#fff;color:#222;border:1px solid #c9d3de;',
    'border-radius:8px;box-shadow:0 6px 24px rgba(0,0,0,.2);font:14px/1.45 system-ui,sans-serif;',
    'padding:12px}',
    '.br-panel h4{margin:0 0 6px;font-size:14px}.br-panel textarea{width:100%;box-sizing:border-box;',
    'min-height:52px;font:inherit}.br-sel{max-height:90px;overflow:auto;background:#f5f7fa;',
    'border-left:3px solid #1f5fa8;padding:4px 8px;margin:6px 0;font-size:13px;white-space:pre-wrap}',
    '.br-row{display:flex;gap:8px;align-items:center;margin-top:6px}.br-row button{font:inherit;',
    'padding:4px 10px}.br-error{color:#b00020;margin-top:6px}.br-answer{margin-top:8px;',
    'white-space:pre-wrap}.br-cites{margin:6px 0 0;padding-left:18px;font-size:13px}',
    '.br-cites li{margin-top:4px}.br-meta{color:#667;font-size:12px;margin-top:6px}',
    '.br-close{float:right;border:0;background:none;font-size:18px;cursor:pointer}'
  ].join('');

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }

  /** Trim and check a selection; returns {text} or {error}. */
  function checkSelection(raw) {
    var text = String(raw || '').trim();
    if (!text) { return {error: MESSAGES.emptySelection}; }
    if (text.length > MAX_SELECTION) { return {error: MESSAGES.longSelection(text.length)}; }
    return {text: text};
  }

  function checkQuestion(raw) {
    var text = String(raw || '').trim();
    if (!text) { return {error: MESSAGES.emptyQuestion}; }
    if (text.length > MAX_QUESTION) { return {error: MESSAGES.longQuestion(text.length)}; }
    return {text: text};
  }

  /** Read a text/event-stream response, calling onEvent(name, data) per event. */
  function readEvents(response, onEvent) {
    var reader = response.body.getReader();
    var decoder = new TextDecoder();
    var buffer = '';
    function pump() {
      return reader.read().then(function (chunk) {
        if (chunk.done) { return; }
        buffer += decoder.decode(chunk.value, {stream: true});
        var parts = buffer.split('\n\n');
        buffer = parts.pop();
        parts.forEach(function (block) {
          var name = 'message', data = '';
          block.split('\n').forEach(function (line) {
            if (line.indexOf('event:') === 0) { name = line.slice(6).trim(); }
            else if (line.indexOf('data:') === 0) { data += line.slice(5).trim(); }
          });
          if (data) { onEvent(name, JSON.parse(data)); }
        });
        return pump();
      });
    }
    return pump();
  }

  function Client(options) {
    this.server = String(options.server || '').replace(/\/+$/, '');
    this.key = options.key;
    this.bookId = options.bookId || null;
    this.sessionId = options.sessionId || ('web-' + Math.random().toString(36).slice(2, 12));
    this.fetch = options.fetch || global.fetch.bind(global);
    this.requests = 0;  // how many requests this client sent (tests read it)
  }

  Client.prototype.token = function () {
    return typeof this.key === 'function' ? this.key() : this.key;
  };

  /** Ask; calls onToken(text) while streaming; resolves with the checked answer. */
  Client.prototype.ask = function (question, selection, wholeBook, onToken) {
    var q = checkQuestion(question);
    if (q.error) { return Promise.reject(new Error(q.error)); }
    var url, body;
    if (wholeBook) {
      if (!this.bookId) { return Promise.reject(new Error('This page names no book to search.')); }
      url = this.server + '/v1/books/' + encodeURIComponent(this.bookId) + '/query';
      body = {question: q.text, mode: 'book', session_id: this.sessionId};
    } else {
      var s = checkSelection(selection);
      if (s.error) { return Promise.reject(new Error(s.error)); }
      url = this.server + '/query-selected-text';
      body = {query: q.text, selected_text: s.text, session_id: this.sessionId};
    }
    var token = this.token();
    if (!token) { return Promise.reject(new Error(MESSAGES.noKey)); }
    this.requests += 1;
    var server = this.server;
    return this.fetch(url, {
      method: 'POST',
      headers: {'Content-Type': 'application/json', 'Accept': 'text/event-stream',
                'Authorization': 'Bearer ' + token},
      body: JSON.stringify(body)
    }).catch(function () {
      // fetch rejects only when no response came: server down, or CORS refused this page
      throw new Error(MESSAGES.unreachable(server, global.location.origin));
    }).then(function (response) {
      var type = response.headers.get('content-type') || '';
      if (!response.ok || type.indexOf('text/event-stream') < 0) {
        return response.json().then(function (data) {
          var wait = response.headers.get('Retry-After');
          var said = ((data && data.error) || ('Request failed (' + response.status + ').')) +
                     (data && data.detail ? ' ' + data.detail : '');
          // the wait is added unless the server's message already says when to try again
          throw new Error(said + (wait && !/try again/i.test(said)
                                  ? ' Try again in ' + wait + ' s.' : ''));
        });
      }
      var final = null, failure = null;
      return readEvents(response, function (name, data) {
        if (name === 'token' && onToken) { onToken(data.text); }
        else if (name === 'answer') { final = data; }
        else if (name === 'error') { failure = data; }
      }).then(function () {
        if (failure) {
          throw new Error(failure.error + (failure.detail ? ' ' + failure.detail : ''));
        }
        if (!final) { throw new Error('The answer stream ended early. Ask again.'); }
        return final;
      });
    });
  };

  function Widget(client, root) {
    this.client = client;
    this.root = root || document.body;
    this.selection = '';
    var style = el('style'); style.textContent = CSS; document.head.appendChild(style);
    this.button = el('button', 'br-ask', 'Ask about this');
    this.button.type = 'button';
    this.button.style.display = 'none';
    document.body.appendChild(this.button);
    this.panel = null;
    var self = this;
    document.addEventListener('mouseup', function (e) {
      if (self.panel && self.panel.contains(e.target)) { return; }
      if (e.target === self.button) { return; }
      setTimeout(function () { self.onSelection(); }, 0);
    });
    document.addEventListener('keyup', function (e) {
      if (e.shiftKey) { self.onSelection(); }
    });
    this.button.addEventListener('mousedown', function (e) { e.preventDefault(); });
    this.button.addEventListener('click', function () { self.open(); });
  }

  Widget.prototype.onSelection = function () {
    var sel = global.getSelection();
    var text = sel ? sel.toString() : '';
    if (!text.trim() || !sel.rangeCount || !this.root.contains(sel.anchorNode)) {
      this.button.style.display = 'none';
      return;
    }
    this.selection = text;
    var rect = sel.getRangeAt(0).getBoundingClientRect();
    this.button.style.left = (global.scrollX + rect.left) + 'px';
    this.button.style.top = (global.scrollY + rect.bottom + 6) + 'px';
    this.button.style.display = 'block';
  };

  Widget.prototype.open = function () {
    var self = this;
    this.button.style.display = 'none';
    if (this.panel) { this.panel.remove(); }
    var p = this.panel = el('div', 'br-panel');
    p.setAttribute('role', 'dialog');
    var close = el('button', 'br-close', '\u00d7');
    close.title = 'Close';
    close.addEventListener('click', function () { p.remove(); self.panel = null; });
    p.appendChild(close);
    p.appendChild(el('h4', '', 'Ask about the selection'));
    var check = checkSelection(this.selection);
    var shown = String(this.selection).trim();
    p.appendChild(el('div', 'br-sel', shown.length > 400 ? shown.slice(0, 400) + '\u2026' : shown));
    var question = el('textarea', 'br-question');
    question.placeholder = 'Your question, e.g. What does this mean?';
    p.appendChild(question);
    var row = el('div', 'br-row');
    var askBtn = el('button', 'br-send', 'Ask');
    var label = el('label');
    var whole = el('input', 'br-whole');
    whole.type = 'checkbox';
    label.appendChild(whole);
    label.appendChild(document.createTextNode(' whole book instead'));
    if (!this.client.bookId) { whole.disabled = true; label.title = 'No book named'; }
    row.appendChild(askBtn); row.appendChild(label);
    p.appendChild(row);
    var error = el('div', 'br-error'), answer = el('div', 'br-answer');
    var cites = el('ol', 'br-cites'), meta = el('div', 'br-meta');
    [error, answer, cites, meta].forEach(function (x) { p.appendChild(x); });
    document.body.appendChild(p);
    if (check.error) {
      error.textContent = check.error;
      askBtn.disabled = true;
      question.disabled = true;
      return;
    }
    question.focus();
    function send() {
      error.textContent = ''; answer.textContent = ''; cites.innerHTML = ''; meta.textContent = '';
      askBtn.disabled = true;
      self.client.ask(question.value, check.text, whole.checked, function (t) {
        answer.textContent += t;
      }).then(function (data) {
        answer.textContent = data.response;
        (data.citations || []).forEach(function (c) {
          var li = el('li', 'br-citation');
          var where = c.label ? 'page ' + c.label : 'selection';
          li.textContent = (c.section ? c.section + ', ' : '') + where + ': \u201c' + c.excerpt +
            '\u201d' + (c.verified ? '' : ' (not verified)');
          if (c.page_image) {
            var a = el('a', '', ' [page]');
            a.href = '#';
            a.addEventListener('click', function (e) {
              e.preventDefault();
              self.showPage(c.page_image);
            });
            li.appendChild(a);
          }
          cites.appendChild(li);
        });
        meta.textContent = 'Confidence: ' + data.confidence_level + ' \u00b7 ' +
          (data.latency_ms / 1000).toFixed(1) + ' s' +
          (data.truncation_warning ? ' \u00b7 ' + data.truncation_warning : '');
      }).catch(function (e) {
        answer.textContent = '';  // the streamed text was never checked: show only the error
        error.textContent = e.message;
      }).then(function () { askBtn.disabled = false; });
    }
    askBtn.addEventListener('click', send);
    question.addEventListener('keydown', function (e) {
      if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); send(); }
    });
  };

  Widget.prototype.showPage = function (path) {
    var client = this.client;
    client.fetch(client.server + path, {headers: {'Authorization': 'Bearer ' + client.token()}})
      .then(function (r) { return r.blob(); })
      .then(function (blob) { global.open(URL.createObjectURL(blob), '_blank'); });
  };

  global.BookReader = {
    checkSelection: checkSelection,
    checkQuestion: checkQuestion,
    Client: Client,
    /** Start the widget: init({server, key, bookId, root}). */
    init: function (options) {
      var client = new Client(options || {});
      var widget = new Widget(client, options && options.root);
      global.BookReader.client = client;
      global.BookReader.widget = widget;
      return widget;
    }
  };
})(window);
