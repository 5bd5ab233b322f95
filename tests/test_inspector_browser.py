"""The inspector in a real browser: headless Chromium (Debian's ``chromium`` and
``chromium-driver``) driven by Selenium. One browser for the module.

A missing browser FAILS these tests (``.ci/run`` installs it). Screenshots of each page go
to ``$INSPECTOR_SCREENSHOTS`` (``docs`` regenerates the README's), else a temporary folder.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.expected_conditions import staleness_of
from selenium.webdriver.support.ui import Select, WebDriverWait

from tests.conftest import FakeClock, LiveServer
from tests.test_inspector import ADMIN, ALPHA, CANARY, build_desk, inspector_settings

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.access(p, os.X_OK)]
    if missing:
        # never a skip: CI must run these (apt-get install chromium chromium-driver)
        raise RuntimeError(f"the browser tests need {', '.join(missing)}")
    profile = tempfile.mkdtemp(prefix="inspector-chromium-")
    options = Options()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--disable-dev-shm-usage",
        "--window-size=1400,1000",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    # an explicit driver: Selenium Manager never looks for (or downloads) one
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def desk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    db = tmp_path_factory.mktemp("inspector-browser") / "channel-memory.db"
    with LiveServer(inspector_settings(db), FakeClock()) as server:
        build_desk(server)
        yield server


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = os.environ.get("INSPECTOR_SCREENSHOTS")
    path = Path(target) if target else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path


def sign_in(browser: WebDriver, server: LiveServer, token: str) -> None:
    browser.delete_all_cookies()
    browser.get(server.url + "/inspect/sign-in")
    browser.find_element(By.ID, "token").send_keys(token)
    follow(browser, browser.find_element(By.ID, "sign-in"))
    assert browser.current_url == server.url + "/inspect/"


def _gone(page: WebElement) -> Callable[[WebDriver], bool]:
    """Whether ``page`` has left the document. Chromium sometimes answers a query about
    an element of the page just left with "Node with given id does not belong to the
    document" instead of a stale-element error: that means gone as well."""

    def check(_: WebDriver) -> bool:
        try:
            return bool(staleness_of(page)(_))
        except WebDriverException as error:
            if "does not belong to the document" in str(error):
                return True
            raise

    return check


def follow(browser: WebDriver, element: WebElement) -> None:
    """Click something that loads a new page, and wait until the new page is there."""
    page = browser.find_element(By.TAG_NAME, "html")
    element.click()
    WebDriverWait(browser, 20).until(_gone(page))
    WebDriverWait(browser, 20).until(
        lambda b: b.execute_script("return document.readyState") == "complete"
    )


def text_of(browser: WebDriver, element_id: str) -> str:
    value = browser.execute_script(f"return document.getElementById('{element_id}').textContent")
    assert isinstance(value, str)
    return value


def test_operator_walks_from_channel_to_exact_sources(
    browser: WebDriver, desk: LiveServer, shots: Path
) -> None:
    browser.get(desk.url + "/inspect/")
    assert browser.current_url.endswith("/inspect/sign-in")  # no session yet
    browser.save_screenshot(str(shots / "inspector-sign-in.png"))
    sign_in(browser, desk, ADMIN)
    cookie = browser.get_cookie("cm_inspect")
    assert cookie is not None
    assert cookie["httpOnly"] is True
    assert cookie["sameSite"] == "Strict"
    assert cookie["path"] == "/inspect"
    assert "expiry" in cookie  # not a browser-session cookie: it has an expiry
    assert browser.execute_script("return document.cookie") == ""  # HttpOnly: no script reads it
    browser.save_screenshot(str(shots / "inspector-channels.png"))

    follow(browser, browser.find_element(By.LINK_TEXT, "floor"))
    assert text_of(browser, "channel") == "floor"
    wide = text_of(browser, "feed-text")
    assert "Stop moved to 410 on NVDA." in wide

    budget = browser.find_element(By.ID, "max_chars")
    budget.clear()
    budget.send_keys("900")
    follow(browser, browser.find_element(By.ID, "show"))
    narrow = text_of(browser, "feed-text")
    assert narrow != wide
    assert len(narrow) <= 900 < len(wide)
    browser.save_screenshot(str(shots / "inspector-feed.png"))

    # "what did it see at 15:10": before the stop was edited
    picker = browser.find_element(By.ID, "as_of")
    browser.execute_script("arguments[0].value = '2026-05-21T15:10'", picker)
    budget = browser.find_element(By.ID, "max_chars")
    budget.clear()
    budget.send_keys("8192")
    follow(browser, browser.find_element(By.ID, "show"))
    then = text_of(browser, "feed-text")
    assert "Stop moved to 408 on NVDA." in then
    assert "Stop moved to 410" not in then
    picked = browser.find_element(By.ID, "as_of").get_attribute("value") or ""
    assert picked.startswith("2026-05-21T15:10")  # the picker keeps what was asked

    # back to now; open the stop's block, then its exact source
    browser.get(desk.url + "/inspect/channels/floor?max_chars=8192")
    items = browser.find_elements(By.CSS_SELECTOR, "#items li.kind-hard_event a.block")
    assert items
    stop = next(
        a
        for li in browser.find_elements(By.CSS_SELECTOR, "#items li.kind-hard_event")
        if "floor/m2" in li.text
        for a in li.find_elements(By.CSS_SELECTOR, "a.block")
    )
    follow(browser, stop)
    assert browser.find_element(By.ID, "block-kind").text.startswith("hard_event")
    assert "rule" in browser.find_element(By.ID, "made-by").text
    source = browser.find_element(By.CSS_SELECTOR, "#sources tr.source")
    content_hash = source.find_element(By.CSS_SELECTOR, "code.hash").text
    assert source.find_element(By.CSS_SELECTOR, "td.state").text == "current"
    assert "Stop moved to 410 on NVDA." in source.text
    browser.save_screenshot(str(shots / "inspector-block.png"))
    follow(browser, source.find_element(By.CSS_SELECTOR, "a.source-link"))
    versions = browser.find_elements(By.CSS_SELECTOR, "#versions tr.version")
    assert [v.find_element(By.CSS_SELECTOR, "td.state").text for v in versions] == [
        "superseded",
        "current",
    ]
    assert versions[1].find_element(By.CSS_SELECTOR, "code.hash").text == content_hash
    assert "Stop moved to 408 on NVDA." in versions[0].text
    browser.save_screenshot(str(shots / "inspector-message.png"))

    browser.get(desk.url + "/inspect/channels/floor/bytes")
    assert browser.find_elements(By.CSS_SELECTOR, "#chart-sizes rect")
    assert browser.find_elements(By.CSS_SELECTOR, "#chart-omitted rect")
    browser.save_screenshot(str(shots / "inspector-bytes.png"))
    browser.get(desk.url + "/inspect/rules")
    browser.save_screenshot(str(shots / "inspector-rules.png"))

    follow(browser, browser.find_element(By.ID, "sign-out"))
    assert browser.current_url.endswith("/inspect/sign-in")
    assert browser.get_cookie("cm_inspect") is None
    browser.get(desk.url + "/inspect/channels/floor")
    assert browser.current_url.endswith("/inspect/sign-in")


def test_hostile_content_renders_as_text(browser: WebDriver, desk: LiveServer) -> None:
    sign_in(browser, desk, ADMIN)
    for path in (
        "/inspect/channels/floor?max_chars=60000",
        "/inspect/channels/floor/messages/x1",
        "/inspect/channels/floor/messages/x2",
    ):
        browser.get(desk.url + path)
        assert browser.execute_script("return window.__pwned === undefined") is True
        assert browser.find_elements(By.CSS_SELECTOR, "main img") == []
        assert browser.find_elements(By.CSS_SELECTOR, "main script") == []
    page = browser.find_element(By.TAG_NAME, "main").text
    assert '"><img src=x onerror="window.__pwned = 2">' in page
    browser.get(desk.url + "/inspect/channels/floor/messages/x1")
    assert (
        f"<script>window.__pwned = 1</script>{CANARY}"
        in browser.find_element(By.ID, "versions").text
    )


def test_read_token_cannot_open_another_channel(browser: WebDriver, desk: LiveServer) -> None:
    sign_in(browser, desk, ALPHA)
    assert browser.find_element(By.ID, "who").text == "analyst-alpha"
    listed = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "#channels a.channel")]
    assert listed == ["floor", "quiet"]
    browser.get(desk.url + "/inspect/channels/floor")
    assert [o.text for o in Select(browser.find_element(By.ID, "consumer")).options] == [
        "analyst-alpha"
    ]
    pages = {}
    for path in ("/inspect/channels/desk", "/inspect/channels/no-such-channel"):
        browser.get(desk.url + path)
        pages[path] = browser.find_element(By.TAG_NAME, "main").text
    assert pages["/inspect/channels/desk"] == pages["/inspect/channels/no-such-channel"]
    assert "404" in pages["/inspect/channels/desk"]
