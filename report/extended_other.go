//go:build !unix

package report

// ProcessCPU cannot read the process's CPU time on this platform.
func ProcessCPU() CPUUsage { return CPUUsage{} }
