// Package api is approvalbot's HTTP API v1 (DESIGN.md, "HTTP API (v1)") and
// a Go client for it. The server is a thin layer over the gate: it
// authenticates the caller, decodes and bounds the input, calls the gate,
// and maps the gate's errors to statuses in one place (errors.go).
//
// Beyond DESIGN.md, the wire format has these details:
//
//   - Request bodies must be sent as Content-Type: application/json (415
//     otherwise): a web page cannot send that to a loopback daemon without a
//     CORS preflight, which is never granted. Cross-origin browser requests
//     are refused (http.CrossOriginProtection), and on an open loopback
//     listener the Host must be a loopback name (DNS rebinding).
//   - Errors are {"error": message, "code": "invalid|unauthorized|forbidden|
//     not_found|already_decided|digest_mismatch|too_large|
//     unsupported_media_type|unavailable|internal|method_not_allowed"}; a 409
//     already_decided also carries "approval", the approval as it is.
//   - ?wait= is a Go duration ("600s") or whole seconds, capped by
//     Config.MaxWait; 0 or absent answers at once.
//   - An approval's "input" is the tool input as a JSON object; "rules" are
//     the rules behind the evaluation's decision.
//   - approve takes {"always", "scope": "agent|session", "expires_at", "by",
//     "via", "digest"}; deny takes {"reason", "stop", "by", "via", "digest"}.
//     "via" names the surface (default "api"; the CLI sends "cli", watch
//     "watch"); "digest", when given, must match the approval's. With an
//     admin token the approver recorded is the token's name, and a different
//     "by" is kept beside it as "by (token name)"; on an open listener it is
//     "by", else "local".
//   - An agent token's calls are always that agent's: an "agent" in the body
//     is ignored. Another agent's approval is 404 to it.
//   - POST /v1/rules answers 201 with the stored rule; DELETE /v1/rules/{id}
//     200 with the removed one. GET /v1/rules → {"rules": [...]},
//     GET /v1/audit → {"entries": [...]} (limit default 1000, max 10000),
//     GET /v1/audit/verify → {"ok", "entries", "error"} (a broken chain is
//     ok:false with status 200). GET|PUT /v1/agents/{agent}/mode →
//     {"agent", "mode"}.
//   - /healthz and /metrics need no token.
package api
