package report

import "runtime"

// Environment describes this process's machine, with gab's version.
func Environment(gabVersion string) *environmentInfo {
	return &environmentInfo{
		GabVersion: gabVersion, GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH,
		Cores: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), Kernel: kernelRelease(),
	}
}
