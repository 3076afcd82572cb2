import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// A failure answered as JSON `{"error": "one line"}` with its HTTP status: the CLI's line,
/// never a stack trace or an empty page.
struct WebError: Error, Sendable, CustomStringConvertible {
    /// The HTTP status.
    var status: HTTPResponse.Status
    /// The line for people.
    var description: String

    init(_ status: HTTPResponse.Status, _ description: String) {
        self.status = status
        self.description = description
    }

    /// The body: `{"error": "the line"}`.
    var json: Data {
        (try? JSONEncoder().encode(["error": description])) ?? Data(#"{"error":"failed"}"#.utf8)
    }

    /// The answer.
    func response() -> Response {
        let data = json
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
