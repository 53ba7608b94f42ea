//go:build !race

package client

// raceEnabled: the race detector is off.
const raceEnabled = false
