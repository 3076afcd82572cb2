import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The page: plain HTML, CSS and a JavaScript module, built into the binary (SwiftPM's
/// `.embedInCode`), so nothing needs installing beside `mcumgr` and nothing comes from a CDN.
enum Assets {
    /// The asset for a path, with its content type.
    static func asset(_ path: String) -> (bytes: [UInt8], type: String)? {
        switch path {
        case "/", "/index.html": (PackageResources.index_html, "text/html; charset=utf-8")
        case "/app.css": (PackageResources.app_css, "text/css; charset=utf-8")
        case "/app.js": (PackageResources.app_js, "text/javascript; charset=utf-8")
        default: nil
        }
    }

    /// Registers a route per asset.
    static func register(on router: Router<BasicRequestContext>) {
        for path in ["/", "/index.html", "/app.css", "/app.js"] {
            router.get(RouterPath(path)) { _, _ -> Response in
                guard let asset = asset(path) else { throw WebError(.notFound, "no such page") }
                var headers = HTTPFields()
                headers[.contentType] = asset.type
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: asset.bytes)))
            }
        }
    }
}
