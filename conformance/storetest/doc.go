// Package storetest is the storage conformance suite: the store contract as
// executable tests, one test per rule, named after the rule. Every backend's
// test calls Exercise in a few lines (modelled on River's riverdrivertest and
// Temporal's persistence-tests); changing a backend means extending this suite.
//
// A rule whose capability the backend does not declare is skipped with its
// reason (t.Skipf), never passed silently.
//
// Layering: imports store, testify and the standard library. It is an
// ordinary (non-test) package so that backends in other packages can import
// it; it must not import any backend.
package storetest
