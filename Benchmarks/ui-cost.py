#!/usr/bin/env python3
"""What the page costs an upload (issue 29, item 7): the same upload-only upgrade through
`mcumgr ui`'s JSON API, alternately with the Upgrade screen open in headless Chromium and
watching, and with no page at all, in one run; and how often progress reached the page.

Usage: ui-cost.py MCUMGR ROUNDS SIZE_KIB   (imgtool and playwright from the peers venv on PATH)

Each round erases the device's second slot first, so every upload sends the whole image. A
round's time is the engine's own, from the operation's result line (`uploaded in 3.9 s`, 0.1 s
resolution), so neither the browser's start-up nor this script's polling is in it.
"""

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from urllib.parse import urlsplit

from playwright.sync_api import sync_playwright

CHROMIUM = os.environ.get("MCUMGR_CHROMIUM", "/usr/bin/chromium")


def first_line(process, prefix, limit=30):
    end = time.monotonic() + limit
    while time.monotonic() < end:
        line = process.stdout.readline().strip()
        if line.startswith(prefix):
            return line
    sys.exit(f"no {prefix} line from {process.args}")


class Page:
    """The JSON API as the page calls it: the token in the query, our Origin on changes."""

    def __init__(self, url):
        parts = urlsplit(url)
        self.base = f"{parts.scheme}://{parts.netloc}"
        self.query = parts.query

    def call(self, method, path, body=None, raw=None):
        separator = "&" if "?" in path else "?"
        request = urllib.request.Request(f"{self.base}{path}{separator}{self.query}", method=method)
        if method != "GET":
            request.add_header("Origin", self.base)
        data = None
        if raw is not None:
            data = raw
            request.add_header("Content-Type", "application/octet-stream")
        elif body is not None:
            data = json.dumps(body).encode()
            request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, data=data, timeout=120) as answer:
            return json.loads(answer.read() or b"{}")


def clear_second_slot(page, device):
    """Erases slot 1 when it holds an image (a blank one the device refuses to erase)."""
    images = page.call("GET", f"/api/devices/{device}/images")["images"]
    if any(image["slot"] == 1 for image in images):
        page.call("POST", f"/api/devices/{device}/images/erase", {"slot": 1})


def upload_seconds(page, device, firmware_path):
    """Sends the file (the server keeps a few; the page's own uploads push it out), starts an upload-only upgrade, waits for its end (polling twice a second, which is no
    watching page), returns the upload's seconds from its own rate and size."""
    clear_second_slot(page, device)
    with open(firmware_path, "rb") as file:
        firmware = page.call("POST", "/api/firmware?name=app.bin", raw=file.read())["id"]
    started = time.monotonic()
    page.call("POST", f"/api/devices/{device}/upgrade", {"firmware": firmware, "mode": "upload-only"})
    while True:
        operation = page.call("GET", f"/api/devices/{device}/operation")["operation"]
        if operation["finished"]:
            break
        time.sleep(0.5)
    if operation["status"] != "succeeded":
        sys.exit(f"upgrade {operation['status']}: {operation.get('error')}")
    return seconds_in_result(operation, time.monotonic() - started)


def seconds_in_result(operation, fallback):
    """`upgraded in 1.7 s` / `uploaded in …`: the engine's own measure of the run."""
    text = " ".join(operation["result"])
    match = re.search(r" in ([0-9.]+) (ms|s)\b", text)
    if not match:
        return fallback
    value = float(match.group(1))
    return value / 1000 if match.group(2) == "ms" else value


def watched_seconds(browser, ui_url, device_url, page, device, firmware_path):
    """The same upload started from the Upgrade screen, which follows it live; returns the
    seconds and the progress updates the page drew per second of upload."""
    clear_second_slot(page, device)
    tab = browser.new_page()
    tab.set_default_timeout(120_000)
    tab.goto(ui_url)
    tab.get_by_label("Device URL").fill(device_url)
    tab.get_by_role("button", name="Connect").click()
    # Connecting ends on the Device screen; go on once it is there.
    tab.get_by_role("heading", name="Device", exact=True).wait_for()
    tab.get_by_role("link", name="Upgrade").click()
    tab.get_by_label("Firmware file", exact=True).set_input_files(firmware_path)
    tab.get_by_role("combobox", name="Mode").select_option("upload-only")
    tab.evaluate(
        """() => {
            window.drawn = [];
            new MutationObserver((changes) => {
                for (const c of changes) if (c.target instanceof HTMLProgressElement) window.drawn.push(performance.now());
            }).observe(document.body, { attributes: true, attributeFilter: ["value"], subtree: true });
        }"""
    )
    before = page.call("GET", f"/api/devices/{device}/operation")["operation"]
    tab.get_by_role("button", name="Start upgrade").click()
    # The screen showed the last round's operation when it opened: wait for this one's end.
    while True:
        operation = page.call("GET", f"/api/devices/{device}/operation")["operation"]
        if operation and operation["id"] != (before or {}).get("id") and operation["finished"]:
            break
        time.sleep(0.5)
    tab.wait_for_function("() => /: (succeeded|failed|cancelled)/.test(document.getElementById('operation-status').textContent)")
    drawn = tab.evaluate("window.drawn")
    tab.close()
    if operation["status"] != "succeeded":
        sys.exit(f"upgrade {operation['status']}: {operation.get('error')}")
    seconds = seconds_in_result(operation, 0)
    span = (drawn[-1] - drawn[0]) / 1000 if len(drawn) > 1 else 0
    return seconds, (len(drawn) - 1) / span if span > 0 else 0


def main():
    mcumgr, rounds, size_kib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    scratch = tempfile.mkdtemp()
    raw = os.path.join(scratch, "raw.bin")
    firmware_path = os.path.join(scratch, "app.bin")
    with open(raw, "wb") as file:
        file.write(os.urandom(size_kib * 1024))
    subprocess.run(["imgtool", "create", "--version", "2.0.0", "--header-size", "0x200", "--slot-size", "0x400000",
                    "--pad-header", raw, firmware_path], check=True)
    simulator = subprocess.Popen([mcumgr, "simulator", "--udp", "127.0.0.1:0", "--slot-size", "0x400000"],
                                 stdout=subprocess.PIPE, text=True)
    ui = subprocess.Popen([mcumgr, "ui", "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE, text=True,
                          env={**os.environ, "MCUMGR_CONFIG_DIR": scratch})
    try:
        device_url = first_line(simulator, "udp://").split()[0]
        ui_url = first_line(ui, "http://")
        page = Page(ui_url)
        device = page.call("POST", "/api/devices", {"url": device_url})["id"]
        plain, watched, rates = [], [], []
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            for _ in range(rounds):
                plain.append(upload_seconds(page, device, firmware_path))
                seconds, rate = watched_seconds(browser, ui_url, device_url, page, device, firmware_path)
                watched.append(seconds)
                rates.append(rate)
            browser.close()
        median_plain, median_watched = statistics.median(plain), statistics.median(watched)
        print(json.dumps({
            "rounds": rounds, "image_kib": size_kib,
            "no_page_s": plain, "page_watching_s": watched,
            "median_no_page_s": median_plain, "median_page_watching_s": median_watched,
            "cost_percent": round((median_watched / median_plain - 1) * 100, 1),
            "page_updates_per_s": [round(r, 1) for r in rates],
        }, indent=1))
    finally:
        simulator.terminate()
        ui.terminate()


if __name__ == "__main__":
    main()
