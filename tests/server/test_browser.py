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
