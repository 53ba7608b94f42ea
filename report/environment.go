package report

import "runtime"

// EnvironmentInfo describes the client machine and gab itself.
type EnvironmentInfo struct {
	GabVersion, GoVersion string
	OS, Arch              string // GOOS, GOARCH
	// Cores is the number of logical CPUs; GOMAXPROCS those gab used (--cpus).
	Cores, GOMAXPROCS int
	// Kernel is the kernel's name and release (uname -sr), "" where unknown.
	Kernel string
}

// Environment describes this process's machine, with gab's version.
func Environment(gabVersion string) *EnvironmentInfo {
	return &EnvironmentInfo{
		GabVersion: gabVersion, GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH,
		Cores: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), Kernel: kernelRelease(),
	}
}
