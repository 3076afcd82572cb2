#!/usr/bin/env python3
"""Drives `mcumgr ui` in headless Chromium (Debian's `chromium`, through Playwright), as a person
would: controls are found by their role and accessible name, never by CSS class or id, so a page
that a screen reader cannot use fails here too.

Usage: drive-ui.py SCENARIO UI_URL DEVICE_URL [FIRMWARE] [SCREENSHOTS_DIR]

Prints one JSON object: what the page showed. The Swift test (UIBrowserTests) asserts on it and
checks the device's state with an independent client (smpclient), never with the page's word.
Every wait is bounded by Playwright's own timeouts, so a page that never answers fails, not hangs.
"""

import json
import os
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from playwright.sync_api import expect, sync_playwright

CHROMIUM = os.environ.get("MCUMGR_CHROMIUM", "/usr/bin/chromium")
# A machine running the whole suite beside this is slow; a page that never answers still ends.
STEP_TIMEOUT_MS = 120_000


def image_rows(page):
    """The Images table as the page shows it: one list of cell texts per slot."""
    page.get_by_role("link", name="Images").click()
    table = page.get_by_role("table", name="Images")
    # Showing the screen clears the earlier reading's rows at once, so a visible row is this
    # visit's; the table is busy until the device's answer is drawn.
    expect(table.get_by_role("row").nth(1)).to_be_visible()
    expect(table).to_have_attribute("aria-busy", "false")
    rows = table.get_by_role("row").all()[1:]
    return [[cell.inner_text().strip() for cell in row.get_by_role("cell").all()] for row in rows]


def connect(page, ui_url, device_url):
    page.goto(ui_url)
    page.get_by_label("Device URL").fill(device_url)
    page.get_by_role("button", name="Connect").click()
    expect(page.get_by_text(f"Device {device_url}")).to_be_visible()


def record_progress(page):
    """Keeps every value a progress bar takes (the page sets it from live events). The bar is
    hidden until an operation starts, and a hidden control has no role yet, so the whole
    document is watched."""
    page.evaluate(
        """() => {
            window.seenProgress = [];
            new MutationObserver((changes) => {
                for (const change of changes) {
                    if (change.target instanceof HTMLProgressElement) window.seenProgress.push(Number(change.target.value));
                }
            }).observe(document.body, { attributes: true, attributeFilter: ["value"], subtree: true });
        }"""
    )


def choose_firmware(page, firmware, mode):
    page.get_by_role("link", name="Upgrade").click()
    page.get_by_label("Firmware file", exact=True).set_input_files(firmware)
    expect(page.get_by_label("Firmware file information")).not_to_be_empty()
    page.get_by_role("combobox", name="Mode").select_option(mode)
    start = page.get_by_role("button", name="Start upgrade")
    expect(start).to_be_enabled()
    return start


def finished_status(page):
    """Waits for the operation to end; returns its status line and result."""
    status = page.locator("#operation-status")
    expect(status).to_have_text(re.compile(r": (succeeded|failed|cancelled)"), timeout=STEP_TIMEOUT_MS)
    return status.inner_text(), page.locator("#result").inner_text()


def upgrade(page, ui_url, device_url, firmware, shots):
    """Connect, read the slots, upgrade in test-and-confirm, read the slots again."""
    connect(page, ui_url, device_url)
    shot(page, shots, "device")
    before = image_rows(page)
    shot(page, shots, "images")
    start = choose_firmware(page, firmware, "test-and-confirm")
    record_progress(page)
    start.click()
    status, result = finished_status(page)
    shot(page, shots, "upgrade")
    progress = page.evaluate("window.seenProgress")
    steps = [item.inner_text() for item in page.locator("#steps li").all()]
    return {"before": before, "after": image_rows(page), "status": status, "result": result,
            "progress": progress, "steps": steps, "alert": alert(page)}


def cancel_and_resume(page, ui_url, device_url, firmware, shots):
    """Pause mid-upload (the bar holds), cancel, then start the same file again: the upload
    resumes where it stopped and the upgrade ends. Pausing first makes "mid-upload" an event,
    not a race with a fast link."""
    connect(page, ui_url, device_url)
    start = choose_firmware(page, firmware, "test-and-confirm")
    record_progress(page)
    start.click()
    page.wait_for_function("() => (window.seenProgress || []).some(v => v >= 10)")
    page.get_by_role("button", name="Pause").click()
    status = page.locator("#operation-status")
    expect(status).to_have_text(re.compile(r": paused"))
    shot(page, shots, "upgrade-paused")
    page.get_by_role("button", name="Cancel").click()
    cancelled, _ = finished_status(page)
    bar = page.get_by_role("progressbar", name="Upload")
    cancelled_at = int(bar.evaluate("b => b.value"))
    record_progress(page)
    page.get_by_role("button", name="Start upgrade").click()
    # The cancelled operation's line stays until the new one is drawn.
    expect(status).not_to_have_text(re.compile(r": cancelled"))
    resumed_status, result = finished_status(page)
    return {"cancelled": cancelled, "cancelled_at": cancelled_at, "progress_after": page.evaluate("window.seenProgress"),
            "status": resumed_status, "result": result, "messages": page.locator("#messages").inner_text(),
            "after": image_rows(page), "alert": alert(page)}


def refused_when_pending(page, ui_url, device_url, firmware, shots):
    """A test image is pending: the upgrade is refused in words, and nothing is changed."""
    connect(page, ui_url, device_url)
    before = image_rows(page)
    choose_firmware(page, firmware, "test-and-confirm").click()
    # The refusal comes as the alert (refused at once) or as the operation's end (refused when
    # the engine read the slots): either is a sentence for people.
    page.wait_for_function(
        """() => !document.getElementById("error").hidden
                 || /: (failed|finished|cancelled)/.test(document.getElementById("operation-status").textContent)"""
    )
    return {"before": before, "alert": alert(page), "status": page.locator("#operation-status").inner_text(),
            "result": page.locator("#result").inner_text(), "after": image_rows(page)}


def files_and_shell(page, ui_url, device_url, local_file, shots):
    """Upload a file to the device, download it back through "Save", list its folder, and run
    shell commands (the second one taken from the history with the up arrow)."""
    connect(page, ui_url, device_url)
    page.get_by_role("link", name="Files").click()
    page.get_by_label("Device path").fill("/lfs1/notes.bin")
    page.get_by_label("Local file").set_input_files(local_file)
    status = page.locator("#transfer-status")
    page.get_by_role("button", name="Upload").click()
    expect(status).to_have_text(re.compile(r"^upload /lfs1/notes.bin: succeeded"))
    uploaded = status.inner_text()
    page.get_by_role("button", name="Download").click()
    expect(status).to_have_text(re.compile(r"^download /lfs1/notes.bin: succeeded"))
    downloaded = status.inner_text()
    with page.expect_download() as saving:
        page.get_by_role("link", name="Save /lfs1/notes.bin").click()
    saved = saving.value.path()
    with open(saved, "rb") as file:
        saved_bytes = file.read()
    page.get_by_role("button", name="List").click()
    listing = page.get_by_label("Folder listing")
    expect(listing).to_contain_text("notes.bin")
    shot(page, shots, "files")
    page.get_by_role("link", name="Shell").click()
    command = page.get_by_role("textbox", name="Command")
    command.fill("echo hello from the page")
    page.get_by_role("button", name="Run").click()
    terminal = page.get_by_role("log", name="Shell output")
    expect(terminal).to_contain_text("hello from the page")
    command.fill("kernel")
    command.press("Enter")
    expect(terminal).to_contain_text("Subcommands")
    command.press("ArrowUp")
    command.press("ArrowUp")
    recalled = command.input_value()
    shot(page, shots, "shell")
    with open(local_file, "rb") as file:
        original = file.read()
    return {"uploaded": uploaded, "downloaded": downloaded, "round_trip": saved_bytes == original,
            "saved_size": len(saved_bytes), "listing": listing.inner_text(), "terminal": terminal.inner_text(),
            "shell_status": page.locator("#shell-status").inner_text(), "recalled": recalled, "alert": alert(page)}


def tour(page, ui_url, device_url, _unused, shots):
    """Every screen once, with something on it, for the screenshots in docs/UI.md."""
    connect(page, ui_url, device_url)
    page.get_by_role("link", name="Devices").click()
    expect(page.get_by_role("button", name=device_url)).to_be_visible()
    shot(page, shots, "devices")
    page.get_by_role("link", name="Device", exact=True).click()
    expect(page.locator("#device-info")).to_contain_text("MCUboot")
    shot(page, shots, "device")
    page.get_by_role("link", name="Statistics").click()
    expect(page.get_by_role("combobox", name="Statistics group").locator("option").first).to_be_attached()
    page.get_by_role("button", name="Show").click()
    expect(page.get_by_role("table", name="Statistics").get_by_role("row").nth(1)).to_be_visible()
    shot(page, shots, "statistics")
    page.get_by_role("link", name="Settings").click()
    page.get_by_label("Setting name").fill("app/greeting")
    page.get_by_label("Value", exact=True).fill("hello")
    page.get_by_role("button", name="Write").click()
    page.get_by_role("button", name="Read").click()
    expect(page.locator("#setting-result")).to_have_attribute("aria-busy", "false")
    shot(page, shots, "settings")
    page.get_by_role("link", name="Raw").click()
    page.get_by_label("Body (JSON)").fill('{"d": "hi"}')
    page.get_by_role("button", name="Send").click()
    expect(page.get_by_role("region", name="Raw")).to_contain_text("hi")
    shot(page, shots, "raw")
    return {"alert": alert(page)}


def cross_origin(page, ui_url, device_url, firmware, shots):
    """Another page on this machine, in the same browser right after a real visit, tries to erase
    the inactive slot and to reset the device; the page reached under another name (DNS
    rebinding) is turned away.

    The attacking page is served from 127.0.0.1 too, by a server of its own at another port: the
    same site, so the browser sends the token's SameSite=Strict cookie with its requests, and only
    the server's Origin rule stands between it and the device. (A page Playwright made up would
    not do: Chromium's local network rules stop its requests before they leave the browser.)"""
    connect(page, ui_url, device_url)
    device = page.evaluate(
        """url => fetch("/api/devices", { method: "POST", headers: { "Content-Type": "application/json" },
                                         body: JSON.stringify({ url }) }).then(r => r.json())""",
        device_url,
    )
    parts = urlsplit(ui_url)
    base = f"{parts.scheme}://{parts.netloc}"
    attacker = ThreadingHTTPServer(("127.0.0.1", 0), AttackerPage)
    threading.Thread(target=attacker.serve_forever, daemon=True).start()
    page.goto(f"http://127.0.0.1:{attacker.server_address[1]}/")
    attempts = page.evaluate(
        """async ([base, id]) => {
            const results = [];
            for (const path of [`/api/devices/${id}/images/erase`, `/api/devices/${id}/reset`]) {
                // A "simple" request (text/plain, no-cors), which browsers send without asking
                // first; its answer stays unreadable, but the request reaches the server.
                try {
                    const r = await fetch(base + path, { method: "POST", mode: "no-cors", credentials: "include",
                        headers: { "Content-Type": "text/plain" }, body: "{}" });
                    results.push({ path, type: r.type });
                } catch (error) {
                    results.push({ path, error: String(error) });
                }
            }
            return results;
        }""",
        [base, device["id"]],
    )
    # The same server under a name that resolves to it, as a rebinding DNS server would make it
    # (Chromium's host resolver rules map rebind.test to 127.0.0.1).
    rebound = page.goto(f"http://rebind.test:{parts.port}/?{parts.query}")
    attacker.shutdown()
    return {"attempts": attempts, "rebound_status": rebound.status if rebound else None,
            "rebound_body": page.inner_text("body")[:300]}


class AttackerPage(BaseHTTPRequestHandler):
    """Another site on this machine: an empty page whose script is the attack."""

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(b"<title>elsewhere</title>")

    def log_message(self, *arguments):
        pass


def fleet(page, ui_url, inventory, firmware, shots):
    """The Fleet screen: type the inventory (DEVICE_URL holds its lines), send the firmware, two
    waves, Start rollout; the table, the gauges and the counts line once it ended."""
    page.goto(ui_url)
    page.get_by_role("link", name="Fleet").click()
    page.get_by_role("textbox", name="Inventory").fill(inventory)
    page.get_by_label("or send one").set_input_files(firmware)
    expect(page.get_by_role("combobox", name="Rollout firmware")).not_to_have_value("")
    page.get_by_role("textbox", name="Waves (cumulative)").fill("50%,100%")
    page.get_by_role("textbox", name="Max failures (N or P%)").fill("1")
    page.get_by_role("button", name="Start rollout").click()
    status = page.locator("#fleet-status")
    expect(status).to_have_text(re.compile(r": (finished|halted|interrupted|failed)"), timeout=STEP_TIMEOUT_MS)
    shot(page, shots, "fleet")
    table = page.get_by_role("table", name="Fleet")
    rows = [[cell.inner_text().strip() for cell in row.get_by_role("cell").all()]
            for row in table.get_by_role("row").all()[1:]]
    gauges = {}
    for name in ["Waves", "Failure budget"]:
        bar = page.get_by_role("progressbar", name=name)
        gauges[name] = [int(bar.get_attribute("value")), int(bar.get_attribute("max"))]
    return {"status": status.inner_text(), "rows": rows, "gauges": gauges,
            "summary": page.locator("#fleet-summary").inner_text(),
            "halt_enabled": page.get_by_role("button", name="Halt").is_enabled(), "alert": alert(page)}


def screens(page, ui_url, device_url, _unused, shots):
    """Statistics, Settings and Raw with something to check: a group's counters, a setting
    written and read back, an echo sent raw with its frame and decoded answer."""
    connect(page, ui_url, device_url)
    page.get_by_role("link", name="Statistics").click()
    group = page.get_by_role("combobox", name="Statistics group")
    expect(group.locator("option").first).to_be_attached()
    group_name = group.input_value()
    page.get_by_role("button", name="Show").click()
    stats = page.get_by_role("table", name="Statistics")
    expect(stats.get_by_role("row").nth(1)).to_be_visible()
    counters = [[cell.inner_text().strip() for cell in row.get_by_role("cell").all()]
                for row in stats.get_by_role("row").all()[1:]]
    page.get_by_role("link", name="Settings").click()
    page.get_by_role("textbox", name="Setting name").fill("app/greeting")
    page.get_by_role("textbox", name="Value", exact=True).fill("hello web")
    page.get_by_role("button", name="Write").click()
    result = page.locator("#setting-result")
    expect(result).not_to_be_empty()
    written = result.inner_text()
    page.get_by_role("button", name="Read").click()
    # The read empties the line at once and marks it busy until the device's answer is shown.
    expect(result).to_have_attribute("aria-busy", "false")
    expect(result).not_to_have_text(written)
    read = result.inner_text()
    page.get_by_role("link", name="Raw").click()
    page.get_by_role("textbox", name="Body (JSON)").fill('{"d": "raw hi"}')
    page.get_by_role("button", name="Send").click()
    answer = page.get_by_label("Answer (decoded)")
    expect(answer).to_contain_text("raw hi")
    return {"group": group_name, "counters": counters, "written": written, "read": read,
            "request_hex": page.get_by_label("Request frame (hex)").inner_text(),
            "answer": answer.inner_text(), "alert": alert(page)}


def tab_to(page, target, backwards=False, limit=120):
    """Presses Tab (or Shift+Tab) until `target` has the focus, as a keyboard user moves;
    fails if it never gets there."""
    for _ in range(limit):
        if target.evaluate("e => e === document.activeElement"):
            return
        page.keyboard.press("Shift+Tab" if backwards else "Tab")
    raise AssertionError(f"the keyboard never reached {target}")


def keyboard(page, ui_url, device_url, firmware, shots):
    """The whole flow with the keyboard alone: connect, choose the firmware and the mode, start
    the upgrade, read the slots — every control reached with Tab and used with Enter, Space or
    an arrow key; the focused control shows a visible outline."""
    # Listen for the file chooser before anything else: Playwright turns Chromium's interception of
    # file choosers on when the first listener is added, without waiting for it, so a listener
    # added just before the key press can lose the race and the chooser then never reaches it
    # (seen once in a fresh-clone run: 120 s waiting for "filechooser").
    opened = []

    def choose(chooser):
        opened.append(chooser.element.get_attribute("id"))
        chooser.set_files(firmware)

    page.on("filechooser", choose)
    page.goto(ui_url)
    url = page.get_by_label("Device URL")
    tab_to(page, url)
    page.keyboard.type(device_url)
    page.keyboard.press("Enter")
    expect(page.get_by_text(f"Device {device_url}")).to_be_visible()
    upgrade = page.get_by_role("link", name="Upgrade")
    tab_to(page, upgrade, backwards=True)
    page.keyboard.press("Enter")
    chooser_input = page.get_by_label("Firmware file", exact=True)
    tab_to(page, chooser_input)
    page.keyboard.press("Space")
    expect(page.get_by_label("Firmware file information")).not_to_be_empty(timeout=120_000)
    assert opened == ["firmware-file"], f"the key press opened {opened}, not the firmware file chooser"
    mode = page.get_by_role("combobox", name="Mode")
    tab_to(page, mode)
    # confirm-only is preselected; the one above it is test-and-confirm.
    page.keyboard.press("ArrowUp")
    chosen = mode.input_value()
    start = page.get_by_role("button", name="Start upgrade")
    tab_to(page, start)
    outline = start.evaluate("e => { const s = getComputedStyle(e); return `${s.outlineStyle} ${s.outlineWidth}`; }")
    page.keyboard.press("Enter")
    status, result = finished_status(page)
    images = page.get_by_role("link", name="Images")
    tab_to(page, images, backwards=True)
    page.keyboard.press("Enter")
    table = page.get_by_role("table", name="Images")
    # Showing the screen clears the earlier reading's rows at once, so a visible row is this
    # visit's; the table is busy until the device's answer is drawn.
    expect(table.get_by_role("row").nth(1)).to_be_visible()
    expect(table).to_have_attribute("aria-busy", "false")
    rows = [[cell.inner_text().strip() for cell in row.get_by_role("cell").all()]
            for row in table.get_by_role("row").all()[1:]]
    return {"mode": chosen, "outline": outline, "status": status, "result": result, "rows": rows,
            "alert": alert(page)}


def appearance(page, ui_url, _device, _unused, shots):
    """Light and dark follow the system: the page's colours under each preference."""
    colours = {}
    for scheme in ["light", "dark"]:
        context = page.context.browser.new_context(color_scheme=scheme, viewport={"width": 1100, "height": 900})
        themed = context.new_page()
        themed.goto(ui_url)
        expect(themed.get_by_label("Device URL")).to_be_visible()
        colours[scheme] = themed.evaluate(
            """() => {
                const style = (selector) => getComputedStyle(document.querySelector(selector));
                return { background: style("body").backgroundColor, text: style("body").color,
                         link: style("nav a").color, muted: style("#current-device").color,
                         error: style("#error").color };
            }"""
        )
        if scheme == "dark":
            shot(themed, shots, "dark")
        context.close()
    return colours


def ble_scan(page, ui_url, adapter, _unused, shots):
    """The Devices screen's live Bluetooth scan on an adapter (DEVICE_URL holds its name): the
    SMP devices in range appear, one is connected to from its row, its slots are read over
    Bluetooth LE."""
    page.goto(ui_url)
    page.get_by_role("textbox", name="Adapter").fill(adapter)
    page.get_by_role("button", name="Scan").click()
    connect_button = page.get_by_role("button", name="Connect to Zephyr")
    expect(connect_button).to_be_visible()
    table = page.get_by_role("table", name="Bluetooth devices")
    rows = [[cell.inner_text().strip() for cell in row.get_by_role("cell").all()][:4]
            for row in table.get_by_role("row").all()[1:]]
    scanning = page.get_by_role("button", name="Stop scanning").is_visible()
    shot(page, shots, "bluetooth")
    connect_button.click()
    expect(page.get_by_text(re.compile(r"^Device ble://"))).to_be_visible()
    current = page.locator("#current-device").inner_text()
    # The Devices screen is hidden now (no role to find it by); its button's text tells.
    stopped = page.locator("#ble-scan").text_content() == "Scan"
    return {"rows": rows, "scanning": scanning, "current": current, "stopped": stopped,
            "images": image_rows(page), "alert": alert(page)}


def kept(page, ui_url, _unused, _firmware, shots):
    """The Fleet screen's kept rollout: Watch shows the state's last rollout as `mcumgr fleet
    status` prints it, again every two seconds, until every device ended (a rollout another
    process or host runs); then Stop watching."""
    page.goto(ui_url)
    page.get_by_role("link", name="Fleet").click()
    page.get_by_role("button", name="Watch").click()
    kept_text = page.get_by_label("Kept rollout")
    expect(kept_text).to_contain_text("rollout ")
    first = kept_text.inner_text()
    expect(kept_text).not_to_contain_text(re.compile(r"\b(pending|running)\b"), timeout=STEP_TIMEOUT_MS)
    shot(page, shots, "fleet-kept")
    last = kept_text.inner_text()
    page.get_by_role("button", name="Stop watching").click()
    # Show reads the list of the state's rollouts again: choose the one just watched by its entry.
    choice = page.get_by_role("combobox", name="Rollout", exact=True)
    page.get_by_role("button", name="Show").click()
    # The list the screen read when it opened may still show the rollout under way.
    expect(choice.locator("option")).to_have_count(2)
    expect(choice.locator("option").nth(1)).not_to_contain_text(re.compile(r"\b(pending|running)\b"))
    rollouts = [option.inner_text() for option in choice.locator("option").all()]
    choice.select_option(index=1)
    page.get_by_role("button", name="Show").click()
    expect(kept_text).to_contain_text(choice.input_value())
    return {"first": first, "last": last, "state": page.locator("#kept-state").inner_text(),
            "watching": page.get_by_role("button", name="Watch").is_visible(), "rollouts": rollouts,
            "chosen": kept_text.inner_text(), "alert": alert(page)}


def simulator_rows(page):
    table = page.get_by_role("table", name="Simulated devices")
    return [[cell.inner_text().strip() for cell in row.get_by_role("cell").all()][:6]
            for row in table.get_by_role("row").all()[1:]]


def simulator(page, ui_url, _unused, firmware, shots):
    """The Simulator screen: ten devices, one of them refusing uploads; one inspected (its flash
    and next boot); the devices become the Fleet screen's inventory and a rollout runs over
    them; back on the Simulator screen a healthy device is power-cycled."""
    page.goto(ui_url)
    page.get_by_role("link", name="Simulator").click()
    page.get_by_role("spinbutton", name="Devices").fill("10")
    page.get_by_role("textbox", name="Faulty share").fill("10%")
    page.get_by_role("combobox", name="Fault").select_option("refusing")
    page.get_by_role("button", name="Start devices").click()
    table = page.get_by_role("table", name="Simulated devices")
    expect(table.get_by_role("row")).to_have_count(11)
    page.get_by_role("button", name="Inspect sim-001").click()
    detail = page.get_by_role("region", name="Simulated device sim-001")
    expect(detail.get_by_role("table", name="Flash slots").get_by_role("row").nth(1)).to_be_visible()
    next_boot = detail.get_by_role("list", name="At the next reset, MCUboot will").inner_text()
    next_running = detail.locator("#sim-next-running").inner_text()
    shot(page, shots, "simulator", full_page=True)
    before = simulator_rows(page)

    page.get_by_role("button", name="Use as fleet inventory").click()
    expect(page.get_by_role("heading", name="Fleet", exact=True)).to_be_visible()
    inventory = page.get_by_role("textbox", name="Inventory").input_value()
    page.get_by_label("or send one").set_input_files(firmware)
    expect(page.get_by_role("combobox", name="Rollout firmware")).not_to_have_value("")
    page.get_by_role("textbox", name="Max failures (N or P%)").fill("1")
    page.get_by_role("button", name="Start rollout").click()
    # A rollout run before on this server may still be shown, "finished": wait for this one's ten
    # rows, then for none of them to be pending or running.
    fleet_table = page.get_by_role("table", name="Fleet")
    expect(fleet_table.get_by_role("row")).to_have_count(11)
    status = page.locator("#fleet-status")
    expect(status).to_have_text(re.compile(r": (finished|halted|interrupted|failed)"), timeout=STEP_TIMEOUT_MS)
    expect(fleet_table.get_by_role("cell", name=re.compile(r"^(pending|running)"))).to_have_count(
        0, timeout=STEP_TIMEOUT_MS)
    shot(page, shots, "fleet-simulated")
    fleet_rows = [[cell.inner_text().strip() for cell in row.get_by_role("cell").all()]
                  for row in page.get_by_role("table", name="Fleet").get_by_role("row").all()[1:]]
    summary = page.locator("#fleet-summary").inner_text()
    fleet_status = status.inner_text()

    page.get_by_role("link", name="Simulator").click()
    healthy = next(row[0] for row in before if not row[5])
    page.get_by_role("button", name=f"Inspect {healthy}").click()
    detail = page.get_by_role("region", name=f"Simulated device {healthy}")
    expect(detail).to_be_visible()
    boots_before = [row for row in simulator_rows(page) if row[0] == healthy][0][3]
    detail.get_by_role("button", name="Power cycle").click()
    expect(table.get_by_role("row").filter(has_text=healthy).get_by_role("cell").nth(3)).not_to_have_text(boots_before)
    return {"before": before, "next_boot": next_boot, "next_running": next_running, "inventory": inventory, "status": fleet_status,
            "fleet_rows": fleet_rows, "summary": summary,
            "healthy": healthy, "boots_before": boots_before, "after": simulator_rows(page),
            "detail": detail.locator("#sim-detail-summary").inner_text(), "alert": alert(page)}


def count_reads(page):
    """Counts, per region, the device reads that ended (its `aria-busy` set back to false), so a
    step waits for its own read, not an earlier one's. A page load forgets the counts."""
    page.evaluate(
        """() => {
            window.readsEnded = {};
            new MutationObserver((changes) => {
                for (const change of changes) {
                    const region = change.target;
                    if (region.getAttribute("aria-busy") !== "false") continue;
                    const key = region.id || region.getAttribute("aria-label") || region.getAttribute("aria-labelledby");
                    window.readsEnded[key] = (window.readsEnded[key] || 0) + 1;
                }
            }).observe(document.body, { attributes: true, attributeFilter: ["aria-busy"], subtree: true });
        }"""
    )


def after_read(page, key, act, shown, failing=False):
    """Does `act` (which reads the device into the region `key`), waits for that read to end, and
    returns what the region shows then, with the alert line: a failed read's line is waited for."""
    count = f"(window.readsEnded[{json.dumps(key)}] || 0)"
    before = page.evaluate(f"() => {count}")
    act()
    page.wait_for_function(f"() => {count} > {before}")
    if failing:
        expect(page.get_by_role("alert")).to_be_visible()
    return {"shown": shown(), "alert": alert(page)}


def cells(table):
    return [[cell.inner_text().strip() for cell in row.get_by_role("cell").all()]
            for row in table.get_by_role("row").all()[1:]]


def silent(page, ui_url, _unused, _firmware, shots):
    """Two devices started on the Simulator screen. The screens read the first; once the second
    is connected, none of the first's readings shows; the second falls silent, and each screen
    read again shows the error line alone, never an earlier answer beneath it; with its faults
    cleared, the device's info shows again."""
    page.goto(ui_url)
    page.get_by_role("link", name="Simulator").click()
    page.get_by_role("spinbutton", name="Devices").fill("2")
    page.get_by_role("button", name="Start devices").click()
    expect(page.get_by_role("table", name="Simulated devices").get_by_role("row")).to_have_count(3)
    count_reads(page)
    info = page.locator("#device-info")
    images = page.get_by_role("table", name="Images")
    stats = page.get_by_role("table", name="Statistics")
    groups = page.get_by_role("combobox", name="Statistics group")
    setting = page.locator("#setting-result")

    def link(name):
        return lambda: page.get_by_role("link", name=name, exact=True).click()

    def read_all(failing):
        shown = {
            "device": after_read(page, "device-info", link("Device"), info.inner_text, failing),
            "images": after_read(page, "images-title", link("Images"), lambda: cells(images), failing),
            "groups": after_read(page, "Statistics", link("Statistics"),
                                 lambda: groups.locator("option").all_inner_texts(), failing),
        }
        if failing:
            # Nothing to show a group's counters of: the ones shown before went with the list's read.
            shown["stats"] = {"shown": cells(stats), "alert": alert(page)}
        else:
            shown["stats"] = after_read(page, "Statistics", lambda: page.get_by_role("button", name="Show").click(),
                                        lambda: cells(stats))
        page.get_by_role("link", name="Settings").click()
        page.get_by_role("textbox", name="Setting name").fill("app/greeting")
        shown["setting"] = after_read(page, "setting-result", lambda: page.get_by_role("button", name="Read").click(),
                                      setting.inner_text, failing)
        shown["value"] = {"shown": page.get_by_role("textbox", name="Value", exact=True).input_value(), "alert": alert(page)}
        return shown

    devices = simulator_rows(page)
    after_read(page, "device-info", lambda: page.get_by_role("button", name="Connect to sim-001").click(), info.inner_text)
    page.get_by_role("link", name="Settings").click()
    page.get_by_role("textbox", name="Setting name").fill("app/greeting")
    page.get_by_role("textbox", name="Value", exact=True).fill("from sim-001")
    page.get_by_role("button", name="Write").click()
    expect(setting).not_to_be_empty()
    first = read_all(failing=False)

    page.get_by_role("link", name="Simulator").click()
    switched = after_read(page, "device-info", lambda: page.get_by_role("button", name="Connect to sim-002").click(),
                          info.inner_text)
    # Without a read of their own, the other screens show nothing of sim-001's.
    page.get_by_role("link", name="Settings").click()
    switched["setting"] = setting.inner_text()
    page.get_by_role("link", name="Images").click()
    switched["current"] = page.locator("#current-device").inner_text()

    page.get_by_role("link", name="Simulator").click()
    page.get_by_role("button", name="Inspect sim-002").click()
    detail = page.get_by_role("region", name="Simulated device sim-002")
    detail.get_by_role("button", name="Fall silent").click()
    expect(detail.locator("#sim-detail-summary")).not_to_contain_text("faults: none")
    quiet = read_all(failing=True)
    shot(page, shots, "silent-device")

    page.get_by_role("link", name="Simulator").click()
    detail.get_by_role("button", name="Clear faults").click()
    expect(detail.locator("#sim-detail-summary")).to_contain_text("faults: none")
    recovered = after_read(page, "device-info", link("Device"), info.inner_text)
    return {"devices": devices, "first": first, "switched": switched, "silent": quiet, "recovered": recovered}


def alert(page):
    box = page.get_by_role("alert")
    return box.inner_text() if box.is_visible() else ""


def shot(page, shots, name, full_page=False):
    if shots:
        page.screenshot(path=os.path.join(shots, f"{name}.png"), full_page=full_page)


SCENARIOS = {"upgrade": upgrade, "cancel-and-resume": cancel_and_resume,
             "refused-when-pending": refused_when_pending, "cross-origin": cross_origin,
             "files-and-shell": files_and_shell, "tour": tour, "fleet": fleet,
             "simulator": simulator, "screens": screens, "keyboard": keyboard, "appearance": appearance,
             "ble-scan": ble_scan, "kept": kept, "silent": silent}


def main():
    if len(sys.argv) < 4 or sys.argv[1] not in SCENARIOS:
        sys.exit(f"usage: drive-ui.py {{{','.join(SCENARIOS)}}} UI_URL DEVICE_URL [FIRMWARE] [SCREENSHOTS_DIR]")
    scenario, ui_url, device_url = sys.argv[1:4]
    firmware = sys.argv[4] if len(sys.argv) > 4 else None
    shots = sys.argv[5] if len(sys.argv) > 5 else None
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            # No sandbox: CI runs as root, where Chromium's sandbox refuses to start.
            args=["--no-sandbox", "--host-resolver-rules=MAP rebind.test 127.0.0.1"],
        )
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        page.set_default_timeout(STEP_TIMEOUT_MS)
        # Assertions have a default of their own (5 s), which a loaded machine reached: the
        # first image row of a busy pass came later than that.
        expect.set_options(timeout=STEP_TIMEOUT_MS)
        try:
            print(json.dumps(SCENARIOS[scenario](page, ui_url, device_url, firmware, shots)))
        finally:
            browser.close()


if __name__ == "__main__":
    main()
