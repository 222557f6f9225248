// Package meter measures the machine a run uses, for benchmarks and provenance: the process's CPU time (so that a
// rate per CPU-second can be quoted on a shared machine), the load average, the resident memory while a piece of
// work runs, and the backend's matrix-product and elementwise rates.
//
// CPU time comes from getrusage(2) (microsecond resolution) on Unix and is 0 elsewhere; load and memory come from
// /proc and are 0 where it is missing. A zero means "not measured": callers must not divide by it (Ratio).
package meter
