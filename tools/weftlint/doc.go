// Command weftlint checks the rules of this repository that no compiler
// checks; make lint runs it from the module's root and fails on what it
// reports:
//
//   - imports: every package imports only what its rule in rules.go allows,
//     and never (directly or through other packages, tests included) what its
//     rule denies. The rules restate the "Layering:" paragraph of each
//     package's doc.go; a package no row matches fails.
//   - layering: every library package's comment says what it may import
//     (a "Layering:" paragraph in its doc.go).
//   - printing: library code (every package but package main; tests
//     excepted) neither uses the standard log package nor calls fmt.Print,
//     fmt.Printf or fmt.Println: it returns errors and logs through an
//     injected *slog.Logger.
//   - citations: no file in the repository cites a document a clone does not
//     have (the specification's numbered documents, the design notes or the
//     folder they live in); rules are cited as docs/semantics.md#anchor,
//     and every such anchor of a document in docs/ must exist.
//
// Layering: a program; it imports the standard library only and runs
// go list and git ls-files.
package main
