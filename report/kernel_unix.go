//go:build unix

package report

import "golang.org/x/sys/unix"

// kernelRelease is uname -sr ("Linux 6.1.0-18-amd64"), or "" if unknown.
func kernelRelease() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])
}
