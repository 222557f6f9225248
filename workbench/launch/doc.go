// Package launch runs a sweep as one process per device, in the style of GNU parallel: a command is run once per
// value, each run on the first free device of a list, at most one run per device at a time, in the order given. It
// is the machinery of `protolab launch`, which parses the flags and calls Run.
//
// A run's argument vector is the command with its value in place of every {} (Argv), or, when no argument has {},
// with the value split at spaces and appended. Its environment (DeviceEnv) gives it one device: with cudaVisible,
// CUDA_VISIBLE_DEVICES=d, so that the run sees one GPU, which CUDA numbers 0, and visible_devices=0 in
// PROTOLAB_XLA_OPTIONS (workbench/run reads the options); without it, CUDA_VISIBLE_DEVICES is left alone and the
// options say visible_devices=d. Either way DeviceVar (PROTOLAB_LAUNCH_DEVICE) holds d for the run's own use.
//
// Run streams every output line of a run (stdout and stderr) as "[dev D run I] line", goes on after a run fails, and
// returns an error that names every failed run, with its value and device, in run order. Cancelling its context
// starts no further run and reaches each running child as SIGINT (a training run checkpoints and stops), then
// SIGKILL after a minute.
//
// Several hosts are not supported (go-xla has no distributed runtime); within one process, workbench/fit uses several
// devices of a host instead.
package launch
