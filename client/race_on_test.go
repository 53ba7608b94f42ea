//go:build race

package client

// raceEnabled: the race detector is on (sync.Pool then drops items on
// purpose, so code that pools its buffers allocates).
const raceEnabled = true
