import Foundation
import HTTPTypes
import Hummingbird

/// The rules every request passes before any handler runs, because this page can reflash
/// devices: the `Host` must be ours (DNS rebinding), the token must be given (as `?token=` once,
/// then the cookie that visit sets), and a state-changing request must come from our own page
/// (`Origin`, against cross-site request forgery). Every answer carries the content security
/// policy that forbids inline script.
struct SecurityMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The name of the cookie holding the token.
    static var cookieName: String { "mcumgr_ui_token" }

    /// No inline script or style, nothing from elsewhere, never framed.
    static var contentSecurityPolicy: String {
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            + "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    }

    let token: AccessToken
    let bound: BoundAddress

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response: Response
        do {
            response = try await checked(request, context: context, next: next)
        } catch let error as WebError {
            response = error.response()
        } catch let error as any HTTPResponseError {
            // The router's own refusals (no such route, a method it does not take) as one line
            // too, and with the headers below.
            let line =
                error.status == .notFound
                ? "no such page or call: \(request.uri.path)"
                : "\(error.status.code) \(error.status.reasonPhrase)"
            response = WebError(error.status, line).response()
        }
        // On every answer, errors too: a page shown from an error must not run inline script.
        response.headers[.contentSecurityPolicy] = Self.contentSecurityPolicy
        response.headers[.xContentTypeOptions] = "nosniff"
        // The first URL holds the token: never send it on to another site.
        response.headers[.referrerPolicy] = "no-referrer"
        response.headers[.cacheControl] = "no-store"
        return response
    }

    private func checked(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        // HTTP/1's first `Host` becomes the authority; a second one stays a header field. Every
        // one must name this server, so a duplicate cannot smuggle another name past the check.
        let address = bound.address
        let hosts =
            request.headers[values: Self.hostField].map { $0.lowercased() }
            + [request.head.authority?.lowercased()].compactMap { $0 }
        guard !hosts.isEmpty, hosts.allSatisfy(address.accepts(host:)) else {
            throw WebError(
                .misdirectedRequest,
                "this server answers only requests for \(address); open the URL it printed"
            )
        }
        // The origin of our page, as the browser names it (`Host` as the user typed it).
        let host = hosts.first { $0.contains(":") } ?? hosts[0]
        let fromQuery = request.uri.queryParameters["token"].map { token.matches($0) } ?? false
        let fromCookie = request.cookies[Self.cookieName].map { token.matches($0.value) } ?? false
        guard fromQuery || fromCookie else {
            throw WebError(.unauthorized, "no valid access token: open the URL with the token that 'mcumgr ui' printed")
        }
        if Self.changesState(request.method) {
            guard let origin = request.headers[.origin], origin.lowercased() == "http://\(host)" else {
                throw WebError(
                    .forbidden,
                    "refused: a request that changes something must come from this page (Origin)"
                )
            }
        }
        var response = try await next(request, context)
        if fromQuery && !fromCookie {
            // The token leaves the address bar: later requests carry it in a cookie scripts
            // cannot read and other sites cannot send.
            response.setCookie(
                Cookie(name: Self.cookieName, value: token.value, path: "/", httpOnly: true, sameSite: .strict)
            )
        }
        return response
    }

    /// `Host` as a header field name (`HTTPField.Name.host` is unavailable: HTTPTypes moves it to
    /// the authority, and keeps only a duplicate as a field).
    static var hostField: HTTPField.Name { HTTPField.Name("Host")! }

    /// Methods that change something, which must carry our `Origin`.
    static func changesState(_ method: HTTPRequest.Method) -> Bool {
        ![.get, .head, .options].contains(method)
    }
}

// Constant names of valid header tokens: the initializer fails only for invalid ones.
extension HTTPField.Name {
    static var xContentTypeOptions: Self { Self("X-Content-Type-Options")! }
    static var referrerPolicy: Self { Self("Referrer-Policy")! }
}
