"""The playground against a server configured with API keys (.ci/browser starts it beside the
open one, with a fresh key): without a key the page says in words that the server needs one;
with a wrong one, that it is not the server's; with the key typed in the page's field, kibitz
plays its move, every call carrying `Authorization: Bearer` (streamed ones too) and no URL
carrying the key, which stays in the tab's sessionStorage across a reload."""

import json
import os

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from conftest import board_text, cell, idle, open_game, screenshot, set_field, wait


@pytest.fixture(scope="session")
def keyed():
    url = os.environ.get("KIBITZ_KEYED_URL")
    key = os.environ.get("KIBITZ_KEYED_API_KEY")
    if not url or not key:
        pytest.exit("KIBITZ_KEYED_URL / KIBITZ_KEYED_API_KEY are not set: run through .ci/browser", 2)
    return url.rstrip("/"), key


def requests_sent(driver):
    """(url, headers) of every request the browser sent since the log was last read."""
    sent = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            request = message["params"]["request"]
            headers = {k.lower(): v for k, v in request.get("headers", {}).items()}
            sent.append((request["url"], headers))
    return sent


def type_key(driver, key):
    """Types `key` over the field's text and leaves the field (its change event)."""
    set_field(driver, "api-key", key)
    driver.find_element(By.ID, "api-key").send_keys(Keys.TAB)


def stones(driver, side):
    return sum(row.count(side) for row in board_text(driver))


def test_without_the_key_the_page_asks_for_one_and_with_it_kibitz_plays(browser, keyed, screenshot_dir):
    base, key = keyed
    open_game(browser, base, "tictactoe")  # GET /games needs no key
    cell(browser, 1, 1).click()
    problem = browser.find_element(By.ID, "problem")
    field = browser.find_element(By.ID, "api-key")
    wait(browser, lambda d: idle(d) and problem.is_displayed(), message="no 401 message")
    assert problem.get_attribute("data-problem") == "unauthorized"
    assert "needs an API key" in problem.text, problem.text
    assert "API key field" in problem.text, problem.text
    assert field.get_attribute("aria-invalid") == "true"
    assert board_text(browser) == ["...", ".X.", "..."]
    screenshot(browser, screenshot_dir, "api-key-missing")

    type_key(browser, "not-a-key-of-this-server")
    wait(browser, lambda d: idle(d) and "not one of this server's" in problem.text, message="no bad-key message")
    assert problem.get_attribute("data-problem") == "unauthorized"
    assert stones(browser, "O") == 0

    requests_sent(browser)  # only what follows
    type_key(browser, key)
    wait(browser, lambda d: idle(d) and stones(d, "O") == 1, message="kibitz did not move with the key")
    assert not problem.is_displayed()
    assert field.get_attribute("aria-invalid") is None
    moves = [headers for url, headers in requests_sent(browser) if url.endswith("/move")]
    assert moves, "no /move was sent"
    for headers in moves:
        assert headers.get("authorization") == f"Bearer {key}", headers
    # The engine's move is a streamed call: it went out with the key too.
    assert any(h.get("accept") == "text/event-stream" for h in moves), moves
    assert browser.execute_script("return sessionStorage.getItem('kibitz.apiKey')") == key
    assert browser.execute_script("return localStorage.length") == 0
    # The curl command names the key by a variable, never shows it.
    curl = browser.find_element(By.ID, "request-curl").get_attribute("textContent")
    assert "Authorization: Bearer $KIBITZ_API_KEY" in curl and key not in curl
    screenshot(browser, screenshot_dir, "api-key-played")

    # A reload keeps the key for this tab; the teaching tree's POST /tree carries it too.
    open_game(browser, base, "tree")
    wait(browser, lambda d: idle(d) and d.find_elements(By.CSS_SELECTOR, "#tree-drawing [data-node]"))
    assert browser.find_element(By.ID, "tree-problem").get_attribute("hidden") is not None
    assert browser.find_element(By.ID, "api-key").get_attribute("value") == key
    sent = requests_sent(browser)
    assert [h.get("authorization") for u, h in sent if u.endswith("/tree")] == [f"Bearer {key}"]
    assert not any(key in url for url, _ in sent)
