#!/usr/bin/env python3
"""A 1,000-device rollout with the Fleet screen open (issue 29, item 3): what the live table
costs the rollout and whether the page stays responsive, in one run.

Usage: ui-fleet.py MCUMGR ROUNDS COUNT [PARALLEL]   (imgtool and playwright from the peers venv
on PATH)

One `mcumgr simulator --udp --count COUNT` and one `mcumgr ui`. Each round sends a new version
(2.0.0, 3.0.0, …) so every device upgrades again, alternately started from the Fleet screen,
which then follows the rollout live, and through the same JSON API with no page (a poll of the
rollout's status once a second). Measured in the page: the live messages and their bytes (the
page's own `EventSource`, wrapped before the page's script runs), the longest task on the
page's main thread (`PerformanceObserver`, `longtask`), the longest gap between two animation
frames, and how long a click on a navigation entry takes to show its screen while the table
fills. A round's time is from the start to the rollout's end as the server's snapshot says it.
CPU seconds of `mcumgr ui` and of Chromium (all its processes) come from /proc; the renderer's
main-thread seconds (all, script, layout, style) from the DevTools protocol's Performance
metrics. PROBES=0 leaves out the clicks and the animation-frame loop (which themselves keep the
renderer busy), to see what following the rollout alone costs.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from importlib import import_module  # noqa: E402

from playwright.sync_api import sync_playwright  # noqa: E402

ui_cost = import_module("ui-cost")
CHROMIUM = os.environ.get("MCUMGR_CHROMIUM", "/usr/bin/chromium")
PROBES = os.environ.get("PROBES", "1") == "1"

# Runs before the page's own script: counts the live messages and watches the main thread.
INSTRUMENT = """
window.measured = { messages: 0, bytes: 0, longestTask: 0, longestFrameGap: 0 };
const Original = window.EventSource;
window.EventSource = class extends Original {
  addEventListener(type, listener, options) {
    const counting = (event) => {
      if (type === "fleet") { window.measured.messages += 1; window.measured.bytes += event.data.length; }
      return listener(event);
    };
    return super.addEventListener(type, counting, options);
  }
};
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) window.measured.longestTask = Math.max(window.measured.longestTask, entry.duration);
}).observe({ type: "longtask", buffered: true });
let last = null;
if (!PROBE) throw "no probes";
const frame = (now) => {
  if (last !== null) window.measured.longestFrameGap = Math.max(window.measured.longestFrameGap, now - last);
  last = now;
  requestAnimationFrame(frame);
};
requestAnimationFrame(frame);
"""


def cpu_seconds(match):
    """CPU seconds (user and system) of the running processes whose command line holds `match`."""
    total = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as file:
                if match.encode() not in file.read():
                    continue
            with open(f"/proc/{pid}/stat") as file:
                fields = file.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            continue
    return total


def renderer_metrics(cdp):
    """Seconds the page's renderer spent on its main thread: in all, in script, layout, style."""
    values = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    return {name: values.get(name, 0) for name in ["TaskDuration", "ScriptDuration", "LayoutDuration",
                                                   "RecalcStyleDuration"]}


def firmware(scratch, major):
    raw = os.path.join(scratch, "raw.bin")
    path = os.path.join(scratch, f"app-{major}.0.bin")
    with open(raw, "wb") as file:
        file.write(os.urandom(32 * 1024))
    subprocess.run(["imgtool", "create", "--version", f"{major}.0.0", "--header-size", "0x200", "--slot-size",
                    "0x80000", "--pad-header", raw, path], check=True, stdout=subprocess.DEVNULL)
    return path


def wait_finished(page, previous):
    while True:
        rollout = page.call("GET", "/api/fleet").get("rollout")
        if rollout and rollout["id"] != previous and rollout["finished"]:
            return rollout
        time.sleep(1)


def check(rollout, count):
    upgraded = sum(1 for row in rollout["devices"] if row["status"] == "upgraded")
    if rollout["status"] != "finished" or upgraded != count:
        sys.exit(f"rollout {rollout['status']}: {upgraded} of {count} upgraded; {rollout['summary']}")


def without_page(page, inventory, path, parallel, count):
    previous = (page.call("GET", "/api/fleet").get("rollout") or {}).get("id")
    with open(path, "rb") as file:
        sent = page.call("POST", f"/api/firmware?name={os.path.basename(path)}", raw=file.read())["id"]
    started = time.monotonic()
    page.call("POST", "/api/fleet", {"inventory": inventory, "firmware": sent, "parallel": parallel})
    check(wait_finished(page, previous), count)
    return time.monotonic() - started


def with_page(browser, ui_url, page, inventory, path, parallel, count):
    previous = (page.call("GET", "/api/fleet").get("rollout") or {}).get("id")
    tab = browser.new_page(viewport={"width": 1100, "height": 900})
    tab.set_default_timeout(1_800_000)
    tab.add_init_script(f"const PROBE = {'true' if PROBES else 'false'};\n" + INSTRUMENT)
    tab.goto(ui_url)
    tab.get_by_role("link", name="Fleet").click()
    tab.get_by_role("textbox", name="Inventory").fill(inventory)
    tab.get_by_label("or send one").set_input_files(path)
    tab.wait_for_function("() => document.getElementById('fleet-firmware').value !== ''")
    tab.get_by_role("spinbutton", name="Parallel").fill(str(parallel))
    tab.evaluate("() => { window.measured.longestTask = 0; window.measured.longestFrameGap = 0; }")
    cdp = tab.context.new_cdp_session(tab)
    cdp.send("Performance.enable")
    metrics_before = renderer_metrics(cdp)
    browser_cpu = cpu_seconds("chromium")
    started = time.monotonic()
    tab.get_by_role("button", name="Start rollout").click()
    clicks = []
    # While the table fills: a click on another screen and back, timed in the page.
    while True:
        rollout = page.call("GET", "/api/fleet").get("rollout")
        if rollout and rollout["id"] != previous and rollout["finished"]:
            break
        for name, view in [("Simulator", "view-simulator"), ("Fleet", "view-fleet")] if PROBES else []:
            begun = time.monotonic()
            tab.get_by_role("link", name=name).click()
            tab.wait_for_function(f"() => !document.getElementById('{view}').hidden")
            clicks.append(time.monotonic() - begun)
        time.sleep(1)
    seconds = time.monotonic() - started
    measured_cpu = cpu_seconds("chromium") - browser_cpu
    check(rollout, count)
    tab.wait_for_function("() => /: finished/.test(document.getElementById('fleet-status').textContent)")
    shown = tab.evaluate("() => document.querySelectorAll('#fleet-rows [role=row]').length")
    measured = tab.evaluate("window.measured")
    measured["browserCPU"] = measured_cpu
    after = renderer_metrics(cdp)
    measured["renderer"] = {name: round(after[name] - metrics_before[name], 1) for name in after}
    tab.close()
    if shown != count:
        sys.exit(f"the page shows {shown} rows of {count}")
    return seconds, measured, clicks


def main():
    mcumgr, rounds, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    parallel = int(sys.argv[4]) if len(sys.argv) > 4 else 64
    scratch = tempfile.mkdtemp()
    simulator = subprocess.Popen([mcumgr, "simulator", "--udp", "127.0.0.1:0", "--count", str(count),
                                  "--slot-size", "0x80000"], stdout=subprocess.PIPE, text=True)
    ui = subprocess.Popen([mcumgr, "ui", "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE, text=True,
                          env={**os.environ, "MCUMGR_CONFIG_DIR": scratch})
    try:
        lines = [ui_cost.first_line(simulator, "udp://", limit=120) for _ in range(count)]
        inventory = "\n".join(lines)
        ui_url = ui_cost.first_line(ui, "http://")
        page = ui_cost.Page(ui_url)
        plain, watched, pages, server_plain, server_watched = [], [], [], [], []
        major = 2
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            for _ in range(rounds):
                server_cpu = cpu_seconds("\0ui\0--listen")
                plain.append(round(without_page(page, inventory, firmware(scratch, major), parallel, count), 1))
                server_plain.append(round(cpu_seconds("\0ui\0--listen") - server_cpu, 1))
                server_cpu = cpu_seconds("\0ui\0--listen")
                seconds, measured, clicks = with_page(browser, ui_url, page, inventory, firmware(scratch, major + 1),
                                                      parallel, count)
                major += 2
                server_watched.append(round(cpu_seconds("\0ui\0--listen") - server_cpu, 1))
                watched.append(round(seconds, 1))
                pages.append({
                    "messages": measured["messages"],
                    "mib_received": round(measured["bytes"] / 1048576, 2),
                    "messages_per_s": round(measured["messages"] / seconds, 1),
                    "longest_task_ms": round(measured["longestTask"]),
                    "longest_frame_gap_ms": round(measured["longestFrameGap"]),
                    "slowest_click_ms": round(max(clicks) * 1000) if clicks else None,
                    "median_click_ms": round(statistics.median(clicks) * 1000) if clicks else None,
                    "browser_cpu_s": round(measured["browserCPU"], 1),
                    "renderer_main_thread_s": measured["renderer"],
                })
            browser.close()
        median_plain, median_watched = statistics.median(plain), statistics.median(watched)
        print(json.dumps({
            "rounds": rounds, "devices": count, "parallel": parallel,
            "no_page_s": plain, "page_watching_s": watched,
            "cost_percent": round((median_watched / median_plain - 1) * 100, 1),
            "server_cpu_s_no_page": server_plain, "server_cpu_s_page_watching": server_watched,
            "page": pages,
        }, indent=1))
    finally:
        simulator.terminate()
        ui.terminate()


if __name__ == "__main__":
    main()
