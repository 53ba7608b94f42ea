//go:build unix

package client

import "syscall"

// setBuffers applies ab's -b to a socket before it connects.
func setBuffers(fd uintptr, size int) error {
	if err := syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF, size); err != nil {
		return err
	}
	return syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, size)
}
