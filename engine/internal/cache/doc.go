// Package cache reads what a decision starts from — run records (with the
// plan records they refer to), checkpoints and task records — through
// bounded caches of what this engine committed or read (two generations
// each). No cache is a source of truth: a run record and a plan record are
// immutable, and a checkpoint or task record taken from a cache is proved
// current by the version its commit is conditioned on. The engine tells it
// what a commit wrote (CheckpointCommitted, TasksCommitted, PlanWritten)
// and what may be stale (ForgetTasks, ForgetCheckpoint, ForgetTask,
// ForgetRun).
//
// Layering: it may import the standard library, the store contract
// (package store), engine/runstate, engine/runlog, engine/internal/record,
// engine/internal/dispatch and engine/internal/fault only (tools/weftlint
// enforces it).
package cache
