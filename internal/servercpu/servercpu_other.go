//go:build !linux

package servercpu

import "time"

func supported() error                  { return ErrUnsupported }
func exists(int) bool                   { return false }
func read([]int) (time.Duration, error) { return 0, ErrUnsupported }
