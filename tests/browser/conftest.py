"""Shared set-up of the playground's browser tests: a headless Debian chromium driven over
WebDriver by chromedriver, against a kibitz server the runner (.ci/browser) started.

Environment (set by .ci/browser):
- KIBITZ_URL: the server's base URL, e.g. http://127.0.0.1:43121
- KIBITZ_SCREENSHOTS: where the screenshots go (created if missing)
- CHROMIUM, CHROMEDRIVER: the browser and driver binaries (Debian's paths by default)
"""

import base64
import json
import os
import shutil
import tempfile
import urllib.request
from urllib.parse import urlsplit

import pytest
from selenium import webdriver
from selenium.common.exceptions import SessionNotCreatedException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

DESKTOP = (1280, 900)
PHONE = (390, 844)


@pytest.fixture(scope="session")
def base_url():
    url = os.environ.get("KIBITZ_URL")
    if not url:
        pytest.exit("KIBITZ_URL is not set: run the browser tests through .ci/browser", 2)
    return url.rstrip("/")


@pytest.fixture(scope="session")
def screenshot_dir():
    path = os.environ.get("KIBITZ_SCREENSHOTS", "target/browser-screenshots")
    os.makedirs(path, exist_ok=True)
    return path


def make_driver(width, height):
    profile = tempfile.mkdtemp(prefix="kibitz-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for flag in [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
        f"--window-size={width},{height}",
    ]:
        options.add_argument(flag)
    # Console messages and every network request, read back by the tests.
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    # One retry of the browser's start only: on a loaded machine chromium has failed to come
    # up in time. Nothing the page does is retried.
    for attempt in (1, 2):
        service = Service(executable_path=os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
        try:
            driver = webdriver.Chrome(options=options, service=service)
            break
        except SessionNotCreatedException:
            if attempt == 2:
                raise
    driver.set_page_load_timeout(30)
    return driver, profile


@pytest.fixture
def browser():
    driver, profile = make_driver(*DESKTOP)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def phone():
    driver, profile = make_driver(*PHONE)
    # A headless window has a minimum width; the phone's viewport is emulated instead.
    width, height = PHONE
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": True},
    )
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


# ---- Helpers the tests share ------------------------------------------------------------


def wait(driver, condition, seconds=30, message=""):
    return WebDriverWait(driver, seconds, poll_frequency=0.05).until(
        lambda d: condition(d), message
    )


def idle(driver):
    return driver.find_element(By.TAG_NAME, "body").get_attribute("data-busy") == "false"


def open_game(driver, base_url, game):
    """Opens the page and selects `game` through its data-game control."""
    driver.get(base_url + "/")
    button = wait(
        driver,
        lambda d: d.find_elements(By.CSS_SELECTOR, f'[data-game="{game}"]'),
        message=f"no data-game={game} control",
    )[0]
    button.click()
    if game != "tree":
        wait(driver, lambda d: d.find_element(By.ID, "board").get_attribute("data-game") == game)
    wait(driver, idle)


def cell(driver, row, col):
    return driver.find_element(By.CSS_SELECTOR, f'#board [data-row="{row}"][data-col="{col}"]')


def board_text(driver):
    """The board as the cells show it: rows of "X", "O" and "." (an empty cell)."""
    cells = driver.execute_script(
        "return [...document.querySelectorAll('#board [data-row]')]"
        ".map(c => [Number(c.dataset.row), Number(c.dataset.col), c.textContent])"
    )
    rows = max(r for r, _, _ in cells) + 1
    cols = max(c for _, c, _ in cells) + 1
    grid = [["."] * cols for _ in range(rows)]
    for r, c, text in cells:
        assert text in ("", "X", "O"), f"cell {r},{c} shows {text!r}"
        grid[r][c] = text or "."
    return ["".join(row) for row in grid]


def post_json(base_url, path, body):
    request = urllib.request.Request(
        base_url + path,
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)


def screenshot(driver, directory, name):
    """The whole page (beyond the window) as docs/screenshots-style PNG."""
    metrics = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})
    size = metrics["cssContentSize"]
    shot = driver.execute_cdp_cmd(
        "Page.captureScreenshot",
        {
            "format": "png",
            "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1},
        },
    )
    path = os.path.join(directory, f"{name}.png")
    with open(path, "wb") as f:
        f.write(base64.b64decode(shot["data"]))
    return path


def console_errors(driver):
    return [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]


def requested_urls(driver):
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def foreign(urls, base_url):
    """The network requests that went to another host than the server (the browser's own
    chrome:// pages and data: URLs are not network requests)."""
    home = urlsplit(base_url).netloc
    network = ("http", "https", "ws", "wss", "ftp")
    return [u for u in urls if urlsplit(u).scheme in network and urlsplit(u).netloc != home]


def set_field(driver, field_id, value):
    """Types `value` over a field's text as a person does (select all, type): one change event
    when the field loses focus, never one for an empty field in between (the page refuses an
    empty budget in words, and the message would move the board under the next click)."""
    field = driver.find_element(By.ID, field_id)
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys(str(value))


def set_budget(driver, ms):
    set_field(driver, "budget", ms)


def my_turn_or_over(driver):
    board = driver.find_element(By.ID, "board")
    return idle(driver) and (
        board.get_attribute("data-result") or board.get_attribute("data-to-move") == "X"
    )
