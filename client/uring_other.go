//go:build !linux

package client

import (
	"fmt"
	"sync/atomic"
)

// Engine names (Config.Engine, Result.Engine). Other systems have only the
// portable path.
const (
	EngineAuto     = "auto"
	EngineEpoll    = "epoll"
	EngineUring    = "uring"
	enginePortable = "portable"
)

// uringLoopsStarted stays 0: there is no io_uring here.
var uringLoopsStarted atomic.Int64

// UringConflict: there is no io_uring engine here.
func UringConflict(*Config, Target) string { return "--engine uring exists only on Linux" }

// chooseEngine: --engine epoll or uring is an error where there are no
// event loops.
func chooseEngine(cfg *Config, loops int, tls bool) (string, error) {
	if cfg.Engine == EngineUring || cfg.Engine == EngineEpoll {
		return "", fmt.Errorf("gab: --engine %s exists only on Linux", cfg.Engine)
	}
	return enginePortable, nil
}
