"""The browser client in a real browser: Debian's headless chromium driven by Selenium
through the system chromedriver (nothing is downloaded), against a real server.

Skips with a message when chromium, its driver or selenium is absent
(``apt-get install chromium chromium-driver``; selenium is in the dev extra).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


def _binary(path: Path, name: str) -> str:
    if path.exists():
        return str(path)
    found = shutil.which(name)
    if not found:
        pytest.skip(f"{name} not found: install Debian's 'chromium' and 'chromium-driver' "
                    "packages to run the browser client's test")
    return found


@pytest.fixture(scope="module")
def browser():
    webdriver = pytest.importorskip("selenium.webdriver",
                                    reason="selenium (the dev extra) drives the browser test")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = _binary(CHROMIUM, "chromium")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-dev-shm-usage", "--window-size=1280,900"):
        options.add_argument(flag)
    service = Service(_binary(CHROMEDRIVER, "chromedriver"))
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(120)
    try:
        yield driver
    finally:
        driver.quit()


def _wait(driver, condition, seconds=300):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, seconds).until(condition)


def test_select_ask_and_see_the_answer_with_a_citation(browser, extractive_server):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    token = extractive_server.tokens["alice"]
    browser.get("about:blank")  # a fresh page (the same URL with a new #key would not reload)
    browser.get(f"{extractive_server.url}/demo#key={token}")
    para = browser.find_element(
        By.XPATH, "//p[contains(., 'A selection may hold from 1 to 4,000 characters')]")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", para)
    w, h = para.size["width"], para.size["height"]
    # A real drag across the paragraph, as a reader selects text.
    ActionChains(browser).move_to_element_with_offset(para, -w // 2 + 1, -h // 2 + 4) \
        .click_and_hold().move_to_element_with_offset(para, w // 2 - 2, h // 2 - 4) \
        .release().perform()
    selected = browser.execute_script("return window.getSelection().toString();")
    assert "A selection may hold" in selected
    button = _wait(browser, ec.visibility_of_element_located((By.CSS_SELECTOR, ".br-ask")))
    assert button.text == "Ask about this"
    button.click()
    question = _wait(browser, ec.visibility_of_element_located(
        (By.CSS_SELECTOR, ".br-panel .br-question")))
    question.send_keys("How many characters may a selection hold?")
    browser.find_element(By.CSS_SELECTOR, ".br-panel .br-send").click()
    cite = _wait(browser, ec.visibility_of_element_located(
        (By.CSS_SELECTOR, ".br-panel .br-citation")))
    answer = browser.find_element(By.CSS_SELECTOR, ".br-panel .br-answer").text
    assert "4,000 characters" in answer
    assert "Selected text" in cite.text and "4,000" in cite.text
    assert browser.find_element(By.CSS_SELECTOR, ".br-panel .br-error").text == ""
    assert browser.execute_script("return BookReader.client.requests;") == 1


def test_a_selection_over_4000_characters_is_refused_before_any_request(browser,
                                                                          extractive_server):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    token = extractive_server.tokens["alice"]
    browser.get("about:blank")  # a fresh page (the same URL with a new #key would not reload)
    browser.get(f"{extractive_server.url}/demo#key={token}")
    before = extractive_server.health()["counters"]
    length = browser.execute_script("""
        var article = document.getElementById('book-text');
        var range = document.createRange();
        range.selectNodeContents(article);
        var sel = window.getSelection();
        sel.removeAllRanges();
        sel.addRange(range);
        document.dispatchEvent(new MouseEvent('mouseup', {bubbles: true}));
        return sel.toString().trim().length;""")
    assert length > 4000
    _wait(browser, ec.visibility_of_element_located((By.CSS_SELECTOR, ".br-ask"))).click()
    error = _wait(browser, ec.visibility_of_element_located(
        (By.CSS_SELECTOR, ".br-panel .br-error")))
    assert f"{length:,} characters long; the limit is 4,000" in error.text
    assert not browser.find_element(By.CSS_SELECTOR, ".br-panel .br-send").is_enabled()
    assert browser.execute_script("return BookReader.client.requests;") == 0
    assert extractive_server.health()["counters"] == before


# --- a web textbook on another origin (CORS) -------------------------------------------------
TEXTBOOK_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Chapter 3 · A web textbook</title></head>
<body><h1>Chapter 3: Limits</h1>
<p id="limits">A selection may hold from 1 to 4,000 characters. Longer selections are
refused before any request is sent, and the reader is told how long the selection was.</p>
<script>
  var cfg = new URLSearchParams(location.hash.slice(1));
  var s = document.createElement('script');
  s.src = cfg.get('api') + '/static/bookreader.js';
  s.onload = function () {
    BookReader.init({server: cfg.get('api'), key: cfg.get('key'), bookId: cfg.get('book')});
  };
  document.head.appendChild(s);
</script></body></html>"""


@pytest.fixture(scope="module")
def textbook_site():
    """The textbook's own web site: a plain HTTP server on another loopback port."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Page(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (the http.server API)
            body = TEXTBOOK_PAGE.encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    site = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{site.server_address[1]}"
    finally:
        site.shutdown()
        site.server_close()


@pytest.fixture(scope="module")
def cors_server(tmp_path_factory, prepared_data, textbook_site):
    """A server that accepts questions from the textbook site's origin only."""
    from serve_support import ServerProcess, add_key, copy_data

    root, info = prepared_data
    data = copy_data(root, tmp_path_factory.mktemp("serve-cors") / "data",
                     settings={"budgets": {"extractive": {"total_s": 300.0}}})
    token = add_key(data, "webbook")
    server = ServerProcess(data, "--backend", "extractive", "--timeout", "300",
                           "--queue-wait", "300", "--cors-origin", textbook_site)
    try:
        server.wait_ready()
        server.tokens, server.book = {"webbook": token}, info
        yield server
    finally:
        server.stop()


def _ask_from_the_textbook(browser, site: str, server, token: str):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    browser.get("about:blank")
    browser.get(f"{site}/chapter3.html#api={server.url}&key={token}"
                f"&book={server.book.book_id}")
    _wait(browser, lambda d: d.execute_script("return !!(window.BookReader && "
                                              "BookReader.client);"), 60)
    browser.execute_script("""
        var p = document.getElementById('limits');
        var range = document.createRange();
        range.selectNodeContents(p);
        window.getSelection().removeAllRanges();
        window.getSelection().addRange(range);
        document.dispatchEvent(new MouseEvent('mouseup', {bubbles: true}));""")
    _wait(browser, ec.visibility_of_element_located((By.CSS_SELECTOR, ".br-ask"))).click()
    question = _wait(browser, ec.visibility_of_element_located(
        (By.CSS_SELECTOR, ".br-panel .br-question")))
    question.send_keys("How many characters may a selection hold?")
    browser.find_element(By.CSS_SELECTOR, ".br-panel .br-send").click()
    _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, ".br-panel .br-citation")
          if d.find_elements(By.CSS_SELECTOR, ".br-panel .br-citation")
          else (d.find_element(By.CSS_SELECTOR, ".br-panel .br-error").text or False))
    return (browser.find_element(By.CSS_SELECTOR, ".br-panel .br-answer").text,
            browser.find_element(By.CSS_SELECTOR, ".br-panel .br-error").text)


def test_a_textbook_on_its_own_site_asks_a_server_that_allows_its_origin(
        browser, textbook_site, cors_server):
    before = cors_server.health()["counters"]["answered"]
    answer, error = _ask_from_the_textbook(browser, textbook_site, cors_server,
                                           cors_server.tokens["webbook"])
    assert error == ""
    assert "4,000 characters" in answer
    assert cors_server.health()["counters"]["answered"] == before + 1


def test_a_server_without_that_origin_is_refused_by_the_browser_with_a_clear_message(
        browser, textbook_site, extractive_server):
    before = extractive_server.health()["counters"]["answered"]
    answer, error = _ask_from_the_textbook(browser, textbook_site, extractive_server,
                                           extractive_server.tokens["alice"])
    assert answer == ""
    assert f"Could not reach the BookReader server at {extractive_server.url}" in error
    assert f"--cors-origin {textbook_site}" in error
    # the browser's preflight was refused, so the question never reached the answer pool
    assert extractive_server.health()["counters"]["answered"] == before


def test_a_refusal_says_when_to_try_again_once(browser, extractive_server):
    """503/429 replies carry Retry-After; the client adds the wait to the message unless the
    server's message already says when to try again (the browser check of a server still
    loading its model showed "... Try again in a few seconds. Try again in 5 s.")."""
    token = extractive_server.tokens["alice"]
    browser.get("about:blank")
    browser.get(f"{extractive_server.url}/demo#key={token}")
    _wait(browser, lambda d: d.execute_script("return !!(window.BookReader && "
                                              "BookReader.Client);"), 60)
    said = browser.execute_async_script("""
        var done = arguments[arguments.length - 1];
        function refusal(error, wait) {  // the server's reply, as a Response
          return function () {
            return Promise.resolve(new Response(JSON.stringify({error: error}), {
              status: 503, headers: {'Content-Type': 'application/json', 'Retry-After': wait}}));
          };
        }
        var out = [];
        var first = new BookReader.Client({server: 'http://x', key: 'k', fetch: refusal(
          'The server is still loading its models and books. Try again in a few seconds.', '5')});
        var second = new BookReader.Client({server: 'http://x', key: 'k', fetch: refusal(
          'Every worker is busy.', '7')});
        first.ask('Why?', 'A selected sentence.', false).catch(function (e) {
          out.push(e.message);
          return second.ask('Why?', 'A selected sentence.', false);
        }).catch(function (e) { out.push(e.message); done(out); });""")
    assert said == ["The server is still loading its models and books. Try again in a few "
                    "seconds.", "Every worker is busy. Try again in 7 s."]
