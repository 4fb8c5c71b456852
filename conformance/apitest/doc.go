// Package apitest is Weft's API conformance suite: black-box tests against any
// running server address, each through several protocols, named after the rule
// it proves. A deployment's test calls Exercise with the server's base URL.
//
// It imports gen/ and connect-go only; it never reaches into the server.
package apitest
