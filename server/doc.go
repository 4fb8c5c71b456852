// Package server is Weft's transport layer: it serves the weft.v1 services
// over Connect, gRPC and gRPC-Web (and HTTP/JSON through Connect's unary POST
// and GET) on one port, with gRPC health, server reflection and CORS, and maps
// every error onto one Fault vocabulary (fault.go).
//
// It holds transport only: handlers translate between the API and the engine
// and nothing else. It may import gen/, the engine, telemetry (OpenTelemetry
// metrics) and the standard library plus connect-go and its companions; the
// engine and the store never import it.
package server
