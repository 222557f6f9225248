// Package meter measures the machine a run uses, for benchmarks and provenance: the process's CPU time (so that a
// rate per CPU-second can be quoted on a shared machine), the load average, the resident memory while a piece of
// work runs, and the backend's matrix-product and elementwise rates.
//
// CPU time comes from clock_gettime(CLOCK_PROCESS_CPUTIME_ID) on Linux (nanosecond accounting), from getrusage(2) on
// other Unix systems (sampled at the scheduler tick, taken as 10 ms) and is 0 elsewhere; CPUResolution says which,
// and a CPU time below ten resolutions is not quoted (CPUResolved, FormatResolved); load and memory come from
// /proc and are 0 where it is missing. A zero means "not measured": callers must not divide by it (Ratio).
package meter
