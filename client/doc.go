// Package client drives HTTP load against one URL the way ApacheBench does and
// records what happened to every request. It measures and returns plain data
// (Result); it never prints. What ab prints during a run goes through Events.
package client
