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
    let address: ListenAddress

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
        let host = (request.headers[HTTPField.Name("Host")!] ?? request.head.authority ?? "").lowercased()
        guard address.acceptedHosts.contains(host) else {
            throw WebError(
                .misdirectedRequest,
                "this server answers only requests for \(address); open the URL it printed"
            )
        }
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

    /// Methods that change something, which must carry our `Origin`.
    static func changesState(_ method: HTTPRequest.Method) -> Bool {
        ![.get, .head, .options].contains(method)
    }
}

extension HTTPField.Name {
    static var xContentTypeOptions: Self { Self("X-Content-Type-Options")! }
    static var referrerPolicy: Self { Self("Referrer-Policy")! }
}
