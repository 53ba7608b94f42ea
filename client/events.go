package client

import "crypto/tls"

// Events receives what ab prints while a run is going on. The engine never
// writes to stdout or stderr itself; the CLI renders these. Implementations must
// be safe for concurrent use: workers call them from many goroutines.
type Events interface {
	// Completed is called when the number of recorded requests reaches a
	// multiple of ProgressInterval(Config.Requests, Config.Quiet) (ab's
	// "Completed N requests").
	Completed(done int)
	// HeaderReceived gets the response head buffer as it stands after each read
	// made before the head was complete (-v ≥ 2: "LOG: header received:").
	HeaderReceived(buf []byte)
	// Status reports each response's status code (-v ≥ 2).
	Status(code int)
	// SendFailed and SendTimedOut are ab's "Send request failed!" and
	// "Send request timed out!".
	SendFailed()
	SendTimedOut()
	// ReceiveError reports a receive error counted under -r (-v ≥ 1).
	ReceiveError(err *FatalError)
	// TLSHandshake reports each completed handshake (-v ≥ 2 prints the certificate).
	TLSHandshake(cs *tls.ConnectionState)
	// TLSHandshakeFailed reports each failed handshake.
	TLSHandshakeFailed(err error)
	// Notice is a one-line note for stderr that ab never prints (gab's own).
	Notice(msg string)
}

// nopEvents discards every event.
type nopEvents struct{}

func (nopEvents) Completed(int)                     {}
func (nopEvents) HeaderReceived([]byte)             {}
func (nopEvents) Status(int)                        {}
func (nopEvents) SendFailed()                       {}
func (nopEvents) SendTimedOut()                     {}
func (nopEvents) ReceiveError(*FatalError)          {}
func (nopEvents) TLSHandshake(*tls.ConnectionState) {}
func (nopEvents) TLSHandshakeFailed(error)          {}
func (nopEvents) Notice(string)                     {}
