//go:build !linux

package client

import "errors"

func uringAvailable() error { return errors.New("no io_uring") }
