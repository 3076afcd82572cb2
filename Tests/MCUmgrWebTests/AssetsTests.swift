import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import MCUmgrWeb

/// The page holds no inline script (the policy would block it) and names its controls.
@Suite struct AssetsTests {
    static func page() throws -> String {
        let asset = try #require(Assets.asset("/"))
        return String(decoding: asset.bytes, as: UTF8.self)
    }

    @Test func thePageHasNoInlineScriptOrHandlers() throws {
        let html = try Self.page()
        let scripts = html.components(separatedBy: "<script").dropFirst()
        #expect(scripts.count == 1)
        for script in scripts {
            #expect(script.hasPrefix(#" type="module" src="/app.js"></script>"#))
        }
        #expect(html.range(of: #"\son[a-z]+\s*="#, options: .regularExpression) == nil)
        #expect(!html.contains("style="))
    }

    @Test func theControlsHaveTheirAccessibleNames() throws {
        let html = try Self.page()
        for label in [
            #"<label for="device-url">Device URL</label>"#, #"<button type="submit">Connect</button>"#,
            #"<h2 id="images-title">Images</h2>"#, #"<table aria-labelledby="images-title">"#,
            #"<label for="firmware-file">Firmware file</label>"#, #"<label for="upgrade-mode">Mode</label>"#,
            ">Start upgrade</button>", #"<progress id="upload-progress" max="100""#,
            #"<label for="device-path">Device path</label>"#,
            #"<button type="button" id="upload-file">Upload</button>"#,
            #"<button type="button" id="download-file">Download</button>"#,
            #"<label for="transfer-progress">Transfer</label>"#, #"<progress id="transfer-progress""#,
            #"<label for="shell-command">Command</label>"#, #"<button type="submit">Run</button>"#,
            #"<pre id="terminal" role="log""#, #"<table aria-label="Statistics">"#,
            #"<label for="setting-name">Setting name</label>"#, #"<label for="setting-value">Value</label>"#,
            #"<button type="button" id="setting-read">Read</button>"#,
            #"<button type="button" id="setting-write">Write</button>"#,
            #"<label for="raw-group">Group</label>"#, #"<label for="raw-command">Command</label>"#,
            #"<label for="raw-operation">Operation</label>"#, #"<select id="raw-operation">"#,
            #"<label for="raw-body">Body (JSON)</label>"#, #"<textarea id="raw-body""#,
            #"<button type="submit">Send</button>"#,
            #"<label for="fleet-inventory">Inventory</label>"#, #"<textarea id="fleet-inventory""#,
            #"<button type="submit" id="start-fleet">Start rollout</button>"#,
            #"<div class="fleet-table" role="table" aria-label="Fleet">"#,
            #"<button type="button" id="halt-fleet">Halt</button>"#,
            #"<label for="fleet-waves-progress">Waves</label>"#, #"<progress id="fleet-waves-progress""#,
            #"<label for="fleet-budget-progress">Failure budget</label>"#, #"<progress id="fleet-budget-progress""#,
            ##"<a href="#fleet" data-view="fleet">Fleet</a>"##,
        ] {
            #expect(html.contains(label), "missing: \(label)")
        }
        for entry in ["Images", "Upgrade", "Files", "Shell", "Statistics", "Settings", "Raw", "Fleet", "Simulator"] {
            #expect(html.contains(">\(entry)</a>"), "missing navigation entry \(entry)")
        }
    }

    @Test func theAssetsAreServedWithTheirTypes() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let script = try await client.get("/app.js", harness)
            #expect(script.status == .ok)
            #expect(script.headers[.contentType]?.hasPrefix("text/javascript") == true)
            let style = try await client.get("/app.css", harness)
            #expect(style.text.contains("prefers-color-scheme: dark"))
        }
    }
}
