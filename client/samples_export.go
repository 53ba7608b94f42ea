package client

// Append records smp as the next sample. It is not safe for concurrent use:
// it serves tests and transports that record from a single goroutine.
func (s *Samples) Append(smp Sample) { s.put(s.Len(), smp, nil) }
