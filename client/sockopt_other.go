//go:build !unix

package client

// setBuffers is a no-op where the socket API differs.
func setBuffers(fd uintptr, size int) error { return nil }
