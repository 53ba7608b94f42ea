//go:build !linux

package client

// udpBufferNote says nothing outside Linux, where gab does not know how the
// system caps UDP socket buffers.
func udpBufferNote() string { return "" }
