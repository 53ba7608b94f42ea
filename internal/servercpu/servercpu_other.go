//go:build !linux

package servercpu

import (
	"net/netip"
	"time"
)

func supported() error                  { return ErrUnsupported }
func exists(int) bool                   { return false }
func read([]int) (time.Duration, error) { return 0, ErrUnsupported }

func listening([]netip.Addr, int, bool) []int { return nil }
