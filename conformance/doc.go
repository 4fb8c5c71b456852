// Package conformance holds Weft's contract as executable test suites: each
// sub-package is an exported, non-test package that a backend's or a
// deployment's tests call in a few lines.
//
//   - storetest: the storage suite every store backend must pass.
//   - apitest: the API suite, black-box against any running server address.
//
// Suites may import the packages whose contract they check (store, gen/) and
// test helpers; nothing outside tests imports them.
package conformance
