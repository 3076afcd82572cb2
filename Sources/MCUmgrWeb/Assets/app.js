// The device manager's page: plain DOM, no framework. Every call goes to the JSON API; a
// failure shows the server's one line in the alert region.

const $ = (id) => document.getElementById(id);
const state = { device: null, firmware: null, events: null, history: [], historyAt: 0, shownOperation: null, received: [], fleetEvents: null, shownFleet: null, stopSim: null, simSelected: null, simInventory: "", scan: null, stopKept: null, logNext: null };

// The first visit carries the token in the address; the server has set the cookie, so take it
// out of the address bar (and of the history) at once.
if (new URLSearchParams(location.search).has("token")) {
  history.replaceState(null, "", location.pathname + location.hash);
}

async function call(method, path, body, raw) {
  const options = { method, headers: {} };
  if (raw !== undefined) {
    options.body = raw;
    options.headers["Content-Type"] = "application/octet-stream";
  } else if (body !== undefined) {
    options.body = JSON.stringify(body);
    options.headers["Content-Type"] = "application/json";
  }
  const response = await fetch(path, options);
  const text = await response.text();
  let data = {};
  try { data = text ? JSON.parse(text) : {}; } catch { data = { error: text || response.statusText }; }
  if (!response.ok) throw new Error(data.error || `${response.status} ${response.statusText}`);
  return data;
}

function showError(error) {
  const box = $("error");
  box.textContent = error ? String(error.message || error) : "";
  box.hidden = !error;
}

async function attempt(action) {
  showError(null);
  try { await action(); } catch (error) { showError(error); }
}

function list(element, items, render) {
  element.replaceChildren();
  if (items.length === 0) { const li = document.createElement("li"); li.textContent = "none"; element.append(li); }
  for (const item of items) element.append(render(item));
}

// Runs `action` now, then `every` ms after each run has ended — a slow answer (a thousand
// simulated devices, a distant database) never piles reads up — until the returned function is
// called. A failed run shows its line and the next one tries again.
function repeat(every, action) {
  let on = true;
  let timer = null;
  const round = async () => {
    await attempt(action);
    if (on) timer = setTimeout(round, every);
  };
  round();
  return () => { on = false; clearTimeout(timer); };
}

// A screen shows the device's answer to this read, never an earlier one's (from before an upgrade,
// or from before the device fell silent): `emptied` go before the device is asked, and `region` is
// busy until the answer is drawn. A read that fails leaves them empty under the error line.
async function freshReading(region, read, ...emptied) {
  for (const element of emptied) element.replaceChildren();
  region.setAttribute("aria-busy", "true");
  try { return await read(); } finally { region.setAttribute("aria-busy", "false"); }
}

function button(label, onClick) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = label;
  b.addEventListener("click", () => attempt(onClick));
  return b;
}

// Views

function show(view) {
  for (const section of document.querySelectorAll("main > section")) section.hidden = section.id !== `view-${view}`;
  for (const link of document.querySelectorAll("nav a")) {
    if (link.getAttribute("href") === location.hash) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  if (view === "devices") attempt(loadConnections);
  else stopScan();
  if (view === "device" && state.device) attempt(loadDevice);
  if (view === "images" && state.device) attempt(loadImages);
  if (view === "upgrade" && state.device) attempt(followOperation);
  if (view === "files" && state.device) attempt(loadFiles);
  if (view === "statistics" && state.device) attempt(loadStatGroups);
  if (view === "logs" && state.device) attempt(() => showLogs());
  // A rollout followed already goes on being followed (and drawn) while other screens show.
  if (view === "fleet" && !state.fleetEvents) attempt(followFleet);
  if (view === "fleet") loadKeptList();
  else stopWatching();
  watchSimulator(view === "simulator");
}

function route() {
  const link = document.querySelector(`nav a[href="${location.hash || "#devices"}"]`);
  show(link ? link.dataset.view : "devices");
}

// Devices

async function loadConnections() {
  const data = await call("GET", "/api/connections");
  list($("profiles"), data.profiles, (p) => {
    const li = document.createElement("li");
    li.append(button(`${p.name} (${p.url})`, () => connect(p.url)));
    return li;
  });
  list($("recent"), data.recent, (url) => {
    const li = document.createElement("li");
    li.append(button(url, () => connect(url)));
    return li;
  });
  $("recent-urls").replaceChildren(...data.recent.map((url) => Object.assign(document.createElement("option"), { value: url })));
  if (data.profile_error) showError(data.profile_error);
}

// A live Bluetooth scan: rounds of two seconds, one after the other while the scan is on and
// the Devices screen is shown; each round's devices replace the table's, keyed by address so
// the Connect buttons (and a keyboard user's focus) stay.

async function scanRounds(scan) {
  // A scan stopped and started again while a round was out must not leave two loops running.
  while (state.scan === scan) {
    try {
      const answer = await call("POST", "/api/ble/scan", { seconds: 2, adapter: $("ble-adapter").value.trim() });
      if (state.scan === scan) showScan(answer.devices);
    } catch (error) {
      if (state.scan === scan) { showError(error); stopScan(); }
    }
  }
}

function showScan(devices) {
  $("ble-status").textContent = `${devices.length} SMP device${devices.length === 1 ? "" : "s"} seen in the last round`;
  const body = $("ble-rows");
  const rows = new Map([...body.children].map((tr) => [tr.dataset.address, tr]));
  const next = devices.map((d) => {
    let tr = rows.get(d.address);
    const label = d.name || d.address;
    if (!tr) {
      tr = document.createElement("tr");
      tr.dataset.address = d.address;
      for (let i = 0; i < 4; i++) tr.append(document.createElement("td"));
      const actions = document.createElement("td");
      actions.append(button(`Connect to ${label}`, () => { stopScan(); return connect(d.url); }));
      tr.append(actions);
    }
    [d.name ?? "(no name)", d.address, d.rssi === null || d.rssi === undefined ? "—" : `${d.rssi} dBm`, d.adapter + (d.connected ? " (connected)" : "")].forEach((value, i) => {
      if (tr.children[i].textContent !== value) tr.children[i].textContent = value;
    });
    return tr;
  });
  if (next.length !== body.children.length || next.some((tr, i) => body.children[i] !== tr)) body.replaceChildren(...next);
}

function toggleScan() {
  if (state.scan) { stopScan(); return; }
  state.scan = {};
  $("ble-scan").textContent = "Stop scanning";
  $("ble-status").textContent = "scanning…";
  scanRounds(state.scan);
}

function stopScan() {
  state.scan = null;
  $("ble-scan").textContent = "Scan";
}

async function connect(url) {
  const device = await call("POST", "/api/devices", { url });
  if (state.device?.id !== device.id) forgetReadings();
  setDevice(device);
  location.hash = "#device";
}

function setDevice(device) {
  state.device = device;
  $("current-device").textContent = device ? `Device ${device.url} — link ${device.link}` : "No device connected";
  $("link-state").textContent = device ? device.link : "—";
  $("start-upgrade").disabled = !(device && state.firmware);
}

// What the screens read from the device connected before is not this device's: it goes at once,
// not when each screen is read again.
function forgetReadings() {
  for (const id of ["device-info", "echo-answer", "image-rows", "listing", "stat-group", "stat-rows", "stats-caption",
    "setting-result", "log-rows", "logs-status", "raw-request-hex", "raw-request", "raw-response-hex", "raw-response",
    "terminal", "shell-status"]) {
    $(id).replaceChildren();
  }
}

function needDevice() {
  if (!state.device) throw new Error("connect to a device first (Devices)");
  return `/api/devices/${state.device.id}`;
}

async function loadDevice() {
  const base = needDevice();
  const shown = $("device-info");
  try {
    const info = await freshReading(shown, () => call("GET", `${base}/info`), shown);
    setDevice(info.device);
    const rows = [
      ["OS", info.os], ["MCUmgr buffer size", info.buffer_size], ["MCUmgr buffer count", info.buffer_count],
      ["Bootloader", info.bootloader], ["Bootloader mode", info.bootloader_mode],
      ["Downgrades refused", info.no_downgrade === undefined ? undefined : String(info.no_downgrade)],
      ...info.unavailable.map((line) => ["Not available", line]),
    ];
    shown.replaceChildren(...rows.filter((r) => r[1] !== undefined && r[1] !== null).flatMap(([k, v]) => [
      Object.assign(document.createElement("dt"), { textContent: k }),
      Object.assign(document.createElement("dd"), { textContent: v }),
    ]));
  } finally {
    setDevice(await call("GET", base));
  }
}

// Images

async function loadImages(data) {
  const base = needDevice();
  const body = $("image-rows");
  const images = data ?? await freshReading(body.parentElement, () => call("GET", `${base}/images`), body);
  body.replaceChildren();
  for (const slot of images.images) {
    const tr = document.createElement("tr");
    for (const value of [slot.image, slot.slot, slot.version, slot.hash ?? "unavailable", slot.flags.join(" ")]) {
      const td = document.createElement("td");
      td.textContent = value;
      tr.append(td);
    }
    tr.children[3].className = "hash";
    const actions = document.createElement("td");
    if (slot.hash && !slot.flags.includes("active")) {
      actions.append(button(`Test image ${slot.image} slot ${slot.slot}`, async () => loadImages(await call("POST", `${base}/images/test`, { hash: slot.hash }))));
    }
    if (slot.hash && !slot.flags.includes("confirmed")) {
      actions.append(button(`Confirm image ${slot.image} slot ${slot.slot}`, async () => loadImages(await call("POST", `${base}/images/confirm`, { hash: slot.hash }))));
    }
    if (!slot.flags.includes("active")) {
      actions.append(button(`Erase slot ${slot.slot}`, async () => loadImages(await call("POST", `${base}/images/erase`, { slot: slot.slot }))));
    }
    tr.append(actions);
    body.append(tr);
  }
}

// Upgrade

async function chooseFirmware() {
  const file = $("firmware-file").files[0];
  state.firmware = null;
  $("firmware-info").textContent = "";
  setDevice(state.device);
  if (!file) return;
  const info = await call("POST", `/api/firmware?name=${encodeURIComponent(file.name)}`, undefined, file);
  state.firmware = info;
  received(info);
  $("firmware-info").textContent = info.lines.join("\n");
  setDevice(state.device);
}

async function startUpgrade() {
  const base = needDevice();
  if (!state.firmware) throw new Error("choose a firmware file first");
  const answer = await call("POST", `${base}/upgrade`, { firmware: state.firmware.id, mode: $("upgrade-mode").value });
  render(answer.operation);
  await followOperation();
}

function seconds(value) {
  if (value === undefined || value === null) return "?";
  return value < 60 ? `${Math.round(value)} s` : `${Math.floor(value / 60)} min ${Math.round(value % 60)} s`;
}

function bytes(value) {
  if (value < 1024) return `${value} B`;
  if (value < 1048576) return `${(value / 1024).toFixed(1)} KiB`;
  return `${(value / 1048576).toFixed(1)} MiB`;
}

// Whether a snapshot is news: an answer to a click can arrive after a live update that is newer
// (a cancel answered while the upgrade still ran, after the event that it ended); drawing it
// would show "running" for good.
function isNews(op) {
  const shown = state.shownOperation;
  if (op && shown && op.id === shown.id && op.revision < shown.revision) return false;
  state.shownOperation = op;
  return true;
}

function render(op) {
  if (!isNews(op)) return;
  $("operation").hidden = !op;
  if (!op) return;
  const progress = op.progress;
  $("upload-progress").value = progress ? progress.percent : 0;
  $("upload-progress").textContent = `${progress ? progress.percent : 0}%`;
  $("progress-text").textContent = progress
    ? `${bytes(progress.bytes)} of ${bytes(progress.total)}, ${bytes(Math.round(progress.bytes_per_second))}/s, ${seconds(progress.seconds_remaining)} left`
    : "";
  $("operation-status").textContent = `${op.file} (${op.mode}): ${op.status}${op.error ? " — " + op.error : ""}`;
  $("plan").textContent = op.plan.join("\n");
  list($("steps"), op.steps, (s) => Object.assign(document.createElement("li"), { textContent: `${s.name}: ${s.outcome}` }));
  list($("messages"), op.messages, (m) => Object.assign(document.createElement("li"), { textContent: m }));
  $("result").textContent = op.result.join("\n");
  $("pause").disabled = op.finished || op.status === "paused";
  $("resume").disabled = op.finished || op.status !== "paused";
  $("cancel").disabled = op.finished;
}

// The running (or last) operation, then its live events: a second tab, or this tab reopened,
// shows where it stands.
async function followOperation(draw = render) {
  const base = needDevice();
  const answer = await call("GET", `${base}/operation`);
  draw(answer.operation);
  if (state.events) state.events.close();
  state.events = null;
  if (!answer.operation || answer.operation.finished) return;
  const events = new EventSource(`${base}/operation/events`);
  state.events = events;
  events.addEventListener("operation", (event) => {
    const op = JSON.parse(event.data);
    draw(op);
    if (op.finished) { events.close(); state.events = null; }
  });
  events.addEventListener("error", () => { events.close(); state.events = null; });
}

// Files

function devicePath() {
  return $("device-path").value.trim();
}

async function loadFiles() {
  const base = needDevice();
  const data = await call("GET", `${base}/files`);
  list($("paths"), data.paths, (path) => {
    const li = document.createElement("li");
    li.append(button(path, () => { $("device-path").value = path; }));
    return li;
  });
  $("remembered-paths").replaceChildren(...data.paths.map((path) => Object.assign(document.createElement("option"), { value: path })));
  await followOperation(renderTransfer);
}

// A transfer's snapshot on the Files screen (an upgrade's shows on Upgrade).
function renderTransfer(op) {
  if (!isNews(op)) return;
  const transfer = op && (op.kind === "upload" || op.kind === "download") ? op : null;
  const progress = transfer && transfer.progress;
  $("transfer-progress").value = progress ? progress.percent : 0;
  $("transfer-progress").textContent = `${progress ? progress.percent : 0}%`;
  $("transfer-text").textContent = progress ? `${bytes(progress.bytes)} of ${bytes(progress.total)}` : "";
  $("cancel-transfer").disabled = !(op && !op.finished);
  if (op && !transfer) {
    $("transfer-status").textContent = `${op.kind} with ${op.file}: ${op.status}`;
    return;
  }
  $("transfer-status").textContent = transfer
    ? `${transfer.kind} ${transfer.file}: ${transfer.status}${transfer.error ? " — " + transfer.error : ""}${transfer.result.length ? " — " + transfer.result.join(" ") : ""}`
    : "";
  const saved = transfer && transfer.kind === "download" && transfer.status === "succeeded";
  $("save-download").hidden = !saved;
  if (saved) {
    $("save-download").href = `${needDevice()}/files/content`;
    $("save-download").setAttribute("download", transfer.file.split("/").pop() || "download");
    $("save-download").textContent = `Save ${transfer.file}`;
  }
}

async function uploadFile() {
  const base = needDevice();
  const file = $("local-file").files[0];
  if (!file) throw new Error("choose a local file to upload first");
  const answer = await call("POST", `${base}/files/upload?path=${encodeURIComponent(devicePath())}&name=${encodeURIComponent(file.name)}`, undefined, file);
  renderTransfer(answer.operation);
  await loadFiles();
}

async function downloadFile() {
  const base = needDevice();
  const answer = await call("POST", `${base}/files/download`, { path: devicePath() });
  renderTransfer(answer.operation);
  await loadFiles();
}

async function listFolder() {
  const base = needDevice();
  const directory = $("list-directory").value.trim();
  const data = await freshReading($("listing"), () => call("GET", `${base}/files/list?directory=${encodeURIComponent(directory)}`), $("listing"));
  $("listing").textContent = data.output + (data.failure ? `\n${data.failure}` : "");
}

// Shell

function terminal(text) {
  const out = $("terminal");
  out.textContent += text;
  out.scrollTop = out.scrollHeight;
}

async function runShell() {
  const base = needDevice();
  const line = $("shell-command").value;
  if (line.trim() && state.history[state.history.length - 1] !== line) state.history.push(line);
  state.historyAt = state.history.length;
  terminal(`$ ${line}\n`);
  $("shell-command").value = "";
  try {
    const answer = await call("POST", `${base}/shell`, { command: line });
    terminal(answer.output.endsWith("\n") || answer.output === "" ? answer.output : answer.output + "\n");
    $("shell-status").textContent = answer.failure || `return code ${answer.return_code ?? "not reported"}`;
  } catch (error) {
    terminal(`${error.message}\n`);
    throw error;
  }
}

// Up and down walk the history, as a terminal's shell does.
function shellKey(event) {
  if (event.key !== "ArrowUp" && event.key !== "ArrowDown") return;
  event.preventDefault();
  const step = event.key === "ArrowUp" ? -1 : 1;
  state.historyAt = Math.max(0, Math.min(state.history.length, state.historyAt + step));
  $("shell-command").value = state.history[state.historyAt] ?? "";
}

// Statistics

async function loadStatGroups() {
  const base = needDevice();
  const chosen = $("stat-group").value;
  // A group's counters shown before belong to the list read before. The table says it is being
  // read (an empty list box cannot).
  const rows = $("stat-rows");
  const data = await freshReading(rows.parentElement, () => call("GET", `${base}/stats`), $("stat-group"), rows, $("stats-caption"));
  $("stat-group").replaceChildren(...data.groups.map((name) => Object.assign(document.createElement("option"), { value: name, textContent: name })));
  if (data.groups.includes(chosen)) $("stat-group").value = chosen;
}

async function showStatGroup() {
  const base = needDevice();
  const name = $("stat-group").value;
  if (!name) throw new Error("the device lists no statistics groups");
  const rows = $("stat-rows");
  const data = await freshReading(rows.parentElement, () => call("GET", `${base}/stats/group?name=${encodeURIComponent(name)}`), rows, $("stats-caption"));
  $("stats-caption").textContent = `stat group ${data.name}`;
  const fields = data.fields.length ? data.fields : [{ name: "(no counters)", value: "" }];
  rows.replaceChildren(...fields.map((field) => {
    const tr = document.createElement("tr");
    for (const value of [field.name, String(field.value)]) tr.append(Object.assign(document.createElement("td"), { textContent: value }));
    tr.children[1].className = "number";
    return tr;
  }));
}

// Settings

async function readSetting() {
  const base = needDevice();
  const name = $("setting-name").value.trim();
  // The value field shows what a read found: a failed read must not leave an earlier one's there.
  $("setting-value").value = "";
  const data = await freshReading($("setting-result"), () => call("GET", `${base}/settings?name=${encodeURIComponent(name)}`), $("setting-result"));
  $("setting-value").value = data.is_text ? data.shown : data.hex;
  $("setting-hex").checked = !data.is_text;
  $("setting-result").textContent = `${data.name}: ${data.shown}${data.is_text ? "" : " (hex)"}`
    + (data.max_size !== undefined && data.max_size !== null ? ` — the device returns at most ${data.max_size} bytes of a value` : "");
}

async function writeSetting() {
  const base = needDevice();
  const answer = await call("POST", `${base}/settings`, { name: $("setting-name").value.trim(), value: $("setting-value").value, hex: $("setting-hex").checked });
  $("setting-result").textContent = answer.done;
}

async function settingsAction(action) {
  const answer = await call("POST", `${needDevice()}/settings/${action}`, {});
  $("setting-result").textContent = answer.done;
}

// Logs

function logTime(microseconds) {
  // Mynewt stamps entries in microseconds since 1970 once its clock is set, since boot before.
  return microseconds > 946684800e6 ? new Date(microseconds / 1000).toISOString() : `${microseconds} µs`;
}

async function showLogs(index) {
  const base = needDevice();
  const from = index ?? $("log-index").value.trim();
  const chosen = $("log-name").value;
  const data = await freshReading($("log-rows").parentElement, () => call("GET", `${base}/logs?log=${encodeURIComponent(chosen)}&index=${encodeURIComponent(from)}`), $("log-rows"), $("logs-status"));
  const select = $("log-name");
  select.replaceChildren(Object.assign(document.createElement("option"), { value: "", textContent: "all" }),
    ...data.names.map((name) => Object.assign(document.createElement("option"), { value: name, textContent: name })));
  select.value = data.names.includes(chosen) ? chosen : "";
  state.logNext = data.next_index;
  const rows = data.logs.flatMap((log) => log.entries.map((entry) => [log.name, String(entry.index), logTime(entry.timestamp), entry.module, entry.level, entry.is_text ? entry.message : `${entry.message} (hex)`]));
  $("log-rows").replaceChildren(...rows.map((cells) => {
    const tr = document.createElement("tr");
    for (const value of cells) tr.append(Object.assign(document.createElement("td"), { textContent: value }));
    return tr;
  }));
  $("logs-status").textContent = `${rows.length} entr${rows.length === 1 ? "y" : "ies"}; next index ${data.next_index}`;
}

// Raw

function number(id, label, max) {
  const text = $(id).value.trim();
  if (!/^[0-9]+$/.test(text)) throw new Error(`${label}: '${text}' is not a number from 0 to ${max}`);
  return Number(text);
}

async function sendRaw() {
  const base = needDevice();
  const request = {
    group: number("raw-group", "Group", 65535),
    command: number("raw-command", "Command", 255),
    operation: $("raw-operation").value,
    body: $("raw-body").value,
  };
  for (const id of ["raw-request-hex", "raw-request", "raw-response-hex", "raw-response"]) $(id).textContent = "";
  const answer = await call("POST", `${base}/raw`, request);
  $("raw-request-hex").textContent = answer.request_hex;
  $("raw-request").textContent = answer.request;
  $("raw-response-hex").textContent = answer.response_hex;
  $("raw-response").textContent = answer.response;
}

// Fleet

// Firmware files this page sent (Upgrade or Fleet), newest first, for the Fleet form's choice.
function received(info) {
  state.received = [info, ...state.received.filter((f) => f.id !== info.id)].slice(0, 4);
  $("fleet-firmware").replaceChildren(...state.received.map((f) => Object.assign(document.createElement("option"), { value: f.id, textContent: `${f.name} (${f.lines[0] ?? f.format})` })));
}

async function chooseFleetFirmware() {
  const file = $("fleet-firmware-file").files[0];
  if (!file) return;
  received(await call("POST", `/api/firmware?name=${encodeURIComponent(file.name)}`, undefined, file));
}

function fleetNumber(id, label, min, max) {
  const text = $(id).value.trim();
  if (!/^-?[0-9]+$/.test(text) || Number(text) < min || Number(text) > max) throw new Error(`${label}: '${text}' is not a number from ${min} to ${max}`);
  return Number(text);
}

async function startFleet() {
  const firmware = $("fleet-firmware").value;
  if (!firmware) throw new Error("choose a firmware file first");
  const answer = await call("POST", "/api/fleet", {
    inventory: $("fleet-inventory").value,
    firmware,
    mode: $("fleet-mode").value,
    canary: fleetNumber("fleet-canary", "Canary", 0, 1024),
    waves: $("fleet-waves").value.trim() || "100%",
    max_failures: $("fleet-max-failures").value.trim(),
    parallel: fleetNumber("fleet-parallel", "Parallel", 1, 1024),
    link_retries: fleetNumber("fleet-link-retries", "Link retries", 0, 100),
    ble_per_adapter: fleetNumber("fleet-ble-per-adapter", "BLE per adapter", 1, 64),
    worker: $("fleet-worker").value.trim(),
    retry_failed: $("fleet-retry-failed").checked,
  });
  renderFleet(answer.rollout);
  await followFleet();
}

// As isNews, for the rollout: a halt's answer may arrive after the event that it ended.
function isFleetNews(rollout) {
  const shown = state.shownFleet;
  if (rollout && shown && rollout.id === shown.id && rollout.revision < shown.revision) return false;
  state.shownFleet = rollout;
  return true;
}

// Draws a rollout; `changed` lists the rows that differ from the one shown (all when absent):
// the cells of a thousand devices are not rebuilt for every step of one of them.
function renderFleet(rollout, changed) {
  if (!isFleetNews(rollout)) return;
  $("fleet-run").hidden = !rollout;
  $("start-fleet").disabled = Boolean(rollout && !rollout.finished);
  if (!rollout) return;
  $("fleet-status").textContent = `${rollout.file} (${rollout.mode}): ${rollout.status}${rollout.phase ? ", " + rollout.phase : ""}${rollout.halt ? " — " + rollout.halt : ""}${rollout.error ? " — " + rollout.error : ""}`;
  for (const [id, gauge] of [["fleet-waves", rollout.waves], ["fleet-budget", rollout.budget]]) {
    $(`${id}-progress`).max = gauge.max;
    $(`${id}-progress`).value = gauge.value;
    $(`${id}-progress`).textContent = `${gauge.value} of ${gauge.max}`;
    $(`${id}-text`).textContent = gauge.text;
  }
  $("halt-fleet").disabled = rollout.finished || rollout.status === "halting";
  const body = $("fleet-rows");
  while (body.children.length > rollout.devices.length) body.lastElementChild.remove();
  while (body.children.length < rollout.devices.length) {
    const row = document.createElement("div");
    row.setAttribute("role", "row");
    for (let cell = 0; cell < 6; cell++) {
      const span = document.createElement("span");
      span.setAttribute("role", "cell");
      row.append(span);
    }
    body.append(row);
  }
  for (const index of changed ?? rollout.devices.keys()) fillFleetRow(body.children[index], rollout.devices[index]);
  $("fleet-summary").textContent = rollout.summary.join("\n");
}

function fillFleetRow(element, row) {
  const stateText = row.step ? `${row.status}: ${row.step}${row.percent !== undefined && row.percent !== null ? ` ${row.percent}%` : ""}` : row.status;
  const version = row.status === "upgraded" ? `${row.version_before ?? "?"} → ${row.version_after ?? "?"}` : (row.version_after ?? row.version_before ?? "");
  // One line a cell (the table's columns are fixed): the whole text is the cell's title, the
  // device's URL the name's.
  [row.device, stateText, version, String(row.tries), row.seen ?? "", row.detail].forEach((value, cell) => {
    const span = element.children[cell];
    if (span.textContent === value) return;
    span.textContent = value;
    if (cell > 0) span.title = value;
  });
  element.children[0].title = row.url;
}

// A live message: the whole rollout, or (with `base`) the rows changed since the message of
// revision `base`. A page that holds another revision (a Halt's answer came between) reads the
// whole rollout again and follows anew.
function applyFleetMessage(message) {
  if (message.base === undefined) { renderFleet(message); return true; }
  const shown = state.shownFleet;
  if (!shown || shown.id !== message.id || shown.revision !== message.base) return false;
  const devices = shown.devices.slice();
  for (const { index, row } of message.changed) devices[index] = row;
  const { base: _base, changed: _changed, ...rest } = message;
  renderFleet({ ...rest, devices }, message.changed.map((change) => change.index));
  return true;
}

// The running (or last) rollout, then its live events: a second tab shows the running one.
async function followFleet() {
  const answer = await call("GET", "/api/fleet");
  renderFleet(answer.rollout);
  if (state.fleetEvents) state.fleetEvents.close();
  state.fleetEvents = null;
  if (!answer.rollout || answer.rollout.finished) return;
  const events = new EventSource("/api/fleet/events");
  state.fleetEvents = events;
  events.addEventListener("fleet", (event) => {
    const message = JSON.parse(event.data);
    if (!applyFleetMessage(message)) { attempt(followFleet); return; }
    if (message.finished) { events.close(); state.fleetEvents = null; }
  });
  events.addEventListener("error", () => { events.close(); state.fleetEvents = null; });
}

// A rollout kept in the server's state (--state), as `mcumgr fleet status` prints it; "Watch"
// reads it again every two seconds while the Fleet screen is shown.

async function showKept() {
  const rollout = $("kept-rollout").value;
  const answer = await call("GET", `/api/fleet/kept${rollout ? `?rollout=${encodeURIComponent(rollout)}` : ""}`);
  $("kept-state").textContent = `State: ${answer.state}`;
  $("kept").textContent = answer.lines.join("\n");
}

// The rollouts kept in the state, for the Rollout choice, the last one started first. Without a
// state the choice keeps "the last one run" alone (Show then says how to keep rollouts).
async function loadKeptList() {
  let answer;
  try { answer = await call("GET", "/api/fleet/kept/list"); } catch { return; }
  const select = $("kept-rollout");
  const chosen = select.value;
  const options = [["", "the last one run"]].concat(answer.rollouts.map((r) => [r.id,
    `${r.file} (${r.mode}${r.versions.length ? ", " + r.versions.join(", ") : ""}): ${r.devices}; started ${new Date(r.started).toLocaleString()} — ${r.id}`]));
  select.replaceChildren(...options.map(([value, text]) => Object.assign(document.createElement("option"), { value, textContent: text })));
  select.value = options.some(([value]) => value === chosen) ? chosen : "";
}

function toggleWatch() {
  if (state.stopKept) { stopWatching(); return; }
  $("kept-watch").textContent = "Stop watching";
  // A failed read (no rollout yet, the database away for a moment) is shown and read again:
  // watching stops only when asked.
  state.stopKept = repeat(2000, showKept);
}

function stopWatching() {
  if (state.stopKept) state.stopKept();
  state.stopKept = null;
  $("kept-watch").textContent = "Watch";
}

// Simulator: the devices this server simulates. The screen reads them once a second while it
// is shown (a device's flash changes under an upgrade from another screen or another client).

function watchSimulator(on) {
  if (state.stopSim) state.stopSim();
  state.stopSim = on ? repeat(1000, loadSimulator) : null;
}

async function loadSimulator(data) {
  const answer = data || await call("GET", "/api/simulator");
  state.simInventory = answer.inventory;
  // Rows are kept and their cells updated, so the buttons in them (and a keyboard user's focus)
  // survive the refresh.
  const body = $("sim-rows");
  const rows = new Map([...body.children].map((tr) => [tr.dataset.name, tr]));
  const next = answer.devices.map((d) => {
    let tr = rows.get(d.name);
    if (!tr) {
      tr = document.createElement("tr");
      tr.dataset.name = d.name;
      for (let i = 0; i < 6; i++) tr.append(document.createElement("td"));
      const actions = document.createElement("td");
      actions.append(button(`Inspect ${d.name}`, () => inspectSimulated(d.name)), " ",
                     button(`Connect to ${d.name}`, () => connect(d.url)));
      tr.append(actions);
    }
    [d.name, d.url, d.stage, String(d.boots), String(d.requests), d.faults.join("; ")].forEach((value, i) => {
      if (tr.children[i].textContent !== value) tr.children[i].textContent = value;
    });
    return tr;
  });
  // Moving a focused row would blur it: the rows are put in place only when the set changed.
  if (next.length !== body.children.length || next.some((tr, i) => body.children[i] !== tr)) body.replaceChildren(...next);
  const selected = state.simSelected;
  if (selected && answer.devices.some((d) => d.name === selected)) await inspectSimulated(selected);
  else { state.simSelected = null; $("sim-detail").hidden = true; }
}

async function inspectSimulated(name, data) {
  const detail = data || await call("GET", `/api/simulator/${encodeURIComponent(name)}`);
  state.simSelected = name;
  const d = detail.device;
  $("sim-detail").hidden = false;
  $("sim-detail-title").textContent = `Simulated device ${d.name}`;
  $("sim-detail-summary").textContent = `${d.url} — bootloader mode ${detail.mode}; runs: ${d.stage}; boots ${d.boots}, requests ${d.requests}, uploads started ${detail.uploads_started}, resets ${detail.resets}; faults: ${d.faults.length ? d.faults.join("; ") : "none"}`;
  $("sim-slots").replaceChildren(...detail.slots.map((slot) => {
    const tr = document.createElement("tr");
    for (const value of [slot.image, slot.slot, slot.version, slot.hash ?? "unavailable", slot.flags.join(" ")]) {
      tr.append(Object.assign(document.createElement("td"), { textContent: value }));
    }
    tr.children[3].className = "hash";
    return tr;
  }));
  list($("sim-next-boot"), detail.next_boot, (line) => Object.assign(document.createElement("li"), { textContent: line }));
  $("sim-next-running").textContent = detail.next_running.length ? `then runs ${detail.next_running.join("; ")}` : `then runs nothing (${detail.next_stage})`;
}

async function startSimulated() {
  const share = $("sim-fault-share").value.trim();
  await loadSimulator(await call("POST", "/api/simulator", {
    count: fleetNumber("sim-count", "Devices", 1, 1024),
    options: $("sim-options").value.trim(),
    fault_share: share,
    fault_kind: $("sim-fault-kind").value,
    seed: fleetNumber("sim-seed", "Seed", 0, Number.MAX_SAFE_INTEGER),
  }));
}

// Wiring

window.addEventListener("hashchange", route);
$("connect-form").addEventListener("submit", (e) => { e.preventDefault(); attempt(() => connect($("device-url").value)); });
$("reconnect").addEventListener("click", () => attempt(async () => { setDevice(await call("POST", `${needDevice()}/reconnect`)); await loadDevice(); }));
$("echo-form").addEventListener("submit", (e) => { e.preventDefault(); attempt(async () => { $("echo-answer").textContent = (await call("POST", `${needDevice()}/echo`, { text: $("echo-text").value })).echo; }); });
$("reset").addEventListener("click", () => attempt(async () => { await call("POST", `${needDevice()}/reset`, {}); $("echo-answer").textContent = "reset sent"; }));
$("refresh-images").addEventListener("click", () => attempt(() => loadImages()));
$("confirm-running").addEventListener("click", () => attempt(async () => loadImages(await call("POST", `${needDevice()}/images/confirm`, {}))));
$("erase-inactive").addEventListener("click", () => attempt(async () => loadImages(await call("POST", `${needDevice()}/images/erase`, {}))));
$("firmware-file").addEventListener("change", () => attempt(chooseFirmware));
$("upgrade-form").addEventListener("submit", (e) => { e.preventDefault(); attempt(startUpgrade); });
for (const action of ["pause", "resume", "cancel"]) {
  $(action).addEventListener("click", () => attempt(async () => render((await call("POST", `${needDevice()}/operation/${action}`, {})).operation)));
}
$("upload-file").addEventListener("click", () => attempt(uploadFile));
$("download-file").addEventListener("click", () => attempt(downloadFile));
$("cancel-transfer").addEventListener("click", () => attempt(async () => renderTransfer((await call("POST", `${needDevice()}/operation/cancel`, {})).operation)));
$("files-form").addEventListener("submit", (e) => e.preventDefault());
$("list-form").addEventListener("submit", (e) => { e.preventDefault(); attempt(listFolder); });
$("shell-form").addEventListener("submit", (e) => { e.preventDefault(); attempt(runShell); });
$("shell-command").addEventListener("keydown", shellKey);
$("stats-form").addEventListener("submit", (e) => { e.preventDefault(); attempt(showStatGroup); });
$("refresh-stats").addEventListener("click", () => attempt(loadStatGroups));
$("settings-form").addEventListener("submit", (e) => e.preventDefault());
$("setting-read").addEventListener("click", () => attempt(readSetting));
$("setting-write").addEventListener("click", () => attempt(writeSetting));
$("settings-commit").addEventListener("click", () => attempt(() => settingsAction("commit")));
$("settings-save").addEventListener("click", () => attempt(() => settingsAction("save")));
$("raw-form").addEventListener("submit", (e) => { e.preventDefault(); attempt(sendRaw); });
$("fleet-firmware-file").addEventListener("change", () => attempt(chooseFleetFirmware));
$("fleet-form").addEventListener("submit", (e) => { e.preventDefault(); attempt(startFleet); });
$("halt-fleet").addEventListener("click", () => attempt(async () => renderFleet((await call("POST", "/api/fleet/halt", {})).rollout)));
$("logs-form").addEventListener("submit", (e) => { e.preventDefault(); attempt(() => showLogs()); });
$("logs-newer").addEventListener("click", () => attempt(() => showLogs(String(state.logNext ?? 0))));
$("logs-clear").addEventListener("click", () => attempt(async () => { await call("POST", `${needDevice()}/logs/clear`, {}); await showLogs(); }));
$("kept-form").addEventListener("submit", (e) => { e.preventDefault(); attempt(async () => { await showKept(); await loadKeptList(); }); });
$("kept-watch").addEventListener("click", toggleWatch);
$("ble-form").addEventListener("submit", (e) => { e.preventDefault(); showError(null); toggleScan(); });
$("simulator-form").addEventListener("submit", (e) => { e.preventDefault(); attempt(startSimulated); });
$("sim-stop").addEventListener("click", () => attempt(async () => loadSimulator(await call("POST", "/api/simulator/stop", {}))));
$("sim-inventory").addEventListener("click", () => attempt(async () => {
  if (!state.simInventory) throw new Error("start simulated devices first");
  $("fleet-inventory").value = state.simInventory;
  location.hash = "#fleet";
}));
for (const b of document.querySelectorAll("#sim-actions button")) {
  b.addEventListener("click", () => attempt(async () => {
    if (!state.simSelected) throw new Error("inspect a simulated device first");
    await inspectSimulated(state.simSelected, await call("POST", `/api/simulator/${encodeURIComponent(state.simSelected)}`, { action: b.dataset.action }));
  }));
}
route();
