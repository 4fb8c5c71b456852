// Package server is Weft's transport layer: it serves the weft.v1 services
// over Connect, gRPC and gRPC-Web (and HTTP/JSON through Connect's unary POST
// and GET) on one port, with gRPC health and /readyz (readiness.go), server
// reflection and CORS, and maps every error onto one Fault vocabulary
// (fault.go).
//
// It holds transport only: handlers translate between the API and the engine
// and nothing else, and return the engine's errors as they are. The fault
// interceptor (interceptor.go) maps every error once; the transport layer
// around Connect (transport.go) gives each request its correlation id and
// completes the answers Connect refuses on its own; the codecs (codec.go,
// codec_locate.go) and the envelope reader (limits.go) turn every malformed
// request into invalid_argument naming the field, never quoting the request.
//
// Layering: it may import gen/, the engine, schedule, telemetry (OpenTelemetry
// metrics), console (the web console's assets), audit, go-oidc and
// golang.org/x/oauth2 (verifying tokens; the console's sign-in) and the
// standard library plus connect-go and its companions; the engine and the
// store never import it.
package server
