// Package parallel runs independent jobs on a bounded number of goroutines: Do(n, workers, fn) calls fn(0) …
// fn(n−1), hands the jobs out in index order, waits for all of them and returns the error of the lowest index that
// failed. Each job writes its own result slot (out[i] = …), so the results are in index order, and a job that
// depends only on i gives the same results whatever the number of workers. experiments/fvec trains its chains of
// models and searches its non-adaptive designs with it.
package parallel
