//go:build !unix

package report

func kernelRelease() string { return "" }
