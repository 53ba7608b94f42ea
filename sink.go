package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"gab/client"
	"gab/report"
)

// sink renders the engine's events the way ab prints them during a run:
// progress and errors on stderr, -v dumps on stdout. Workers call it
// concurrently; every line is written with a single Write, so lines never mix.
type sink struct {
	out, errw io.Writer
	verbosity int
	every     int // ab's heartbeat interval; 0: no progress lines

	mu      sync.Mutex
	printed int // the last "Completed" count printed

	now func() time.Time // for the TLS session's start time
}

var _ client.Events = (*sink)(nil)

func newSink(out, errw io.Writer, verbosity, every int) *sink {
	return &sink{out: out, errw: errw, verbosity: verbosity, every: every, now: time.Now}
}

// Completed prints ab's progress lines. Workers may report counts out of
// order, so every multiple of the interval up to done is printed, in order, once.
func (s *sink) Completed(done int) {
	if s.every <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for next := s.printed + s.every; next <= done; next += s.every {
		fmt.Fprintf(s.errw, "Completed %d requests\n", next)
		s.printed = next
	}
}

// HeaderReceived is ab's -v 2 dump of the head buffer after each read. ab
// prints it with %s, so it stops at a NUL byte. Unlike ab, control bytes other
// than tab, CR and LF are shown escaped (see appendTerminalSafe): the head is
// the server's text, and it must not drive the terminal it is dumped to.
func (s *sink) HeaderReceived(buf []byte) {
	if s.verbosity < 2 {
		return
	}
	if i := bytes.IndexByte(buf, 0); i >= 0 {
		buf = buf[:i]
	}
	line := make([]byte, 0, len(buf)+24)
	line = append(line, "LOG: header received:\n"...)
	line = appendTerminalSafe(line, buf)
	line = append(line, '\n')
	s.out.Write(line)
}

// appendTerminalSafe appends b with every byte a terminal could take for a
// command written as \xNN: C0 controls but tab, CR and LF (ESC starts the
// sequences that clear the screen or write the clipboard), DEL, C1 controls
// (U+0080–U+009F, which some terminals read as ESC sequences too) and bytes
// that are not UTF-8. Printable text, UTF-8 included, is copied as is.
func appendTerminalSafe(dst, b []byte) []byte {
	const hex = "0123456789abcdef"
	esc := func(dst []byte, c byte) []byte { return append(dst, '\\', 'x', hex[c>>4], hex[c&15]) }
	for len(b) > 0 {
		c := b[0]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c == 0x7f {
				dst = esc(dst, c)
			} else {
				dst = append(dst, c)
			}
			b = b[1:]
			continue
		}
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 || r >= 0x80 && r <= 0x9f {
			for _, c := range b[:size] {
				dst = esc(dst, c)
			}
		} else {
			dst = append(dst, b[:size]...)
		}
		b = b[size:]
	}
	return dst
}

// Status prints ab's per-response status lines (-v 2 for non-2xx, -v 3 for 2xx).
func (s *sink) Status(code int) {
	switch {
	case s.verbosity < 2:
	case code < 200 || code > 299:
		fmt.Fprintf(s.out, "WARNING: Response code not 2xx (%03d)\n", code)
	case s.verbosity >= 3:
		fmt.Fprintf(s.out, "LOG: Response code = %d\n", code)
	}
}

func (s *sink) SendFailed()   { io.WriteString(s.out, "Send request failed!\n") }
func (s *sink) SendTimedOut() { io.WriteString(s.out, "Send request timed out!\n") }

// ReceiveError prints a receive error that -r made non-fatal (-v ≥ 1).
func (s *sink) ReceiveError(err *client.FatalError) {
	if err != nil {
		io.WriteString(s.errw, err.Message)
	}
}

// TLSHandshakeFailed is ab's line for every failed handshake; the OpenSSL
// error-queue line that follows in ab is replaced by Go's error text.
func (s *sink) TLSHandshakeFailed(err error) {
	msg := "SSL handshake failed (1).\n"
	if err != nil {
		msg += report.OneLine(err.Error()) + "\n"
	}
	io.WriteString(s.errw, msg)
}

// Notice is a remark of gab's own (ab never prints these).
func (s *sink) Notice(msg string) { io.WriteString(s.errw, "gab: "+report.OneLine(msg)+"\n") }


// TLSHandshake prints, at -v ≥ 2, what ab's ssl_print_info prints for every
// handshake: the certificate chain on stdout, then the connection and session
// summary on stderr. OpenSSL-specific values are given in Go's terms.
func (s *sink) TLSHandshake(cs *tls.ConnectionState) {
	if s.verbosity < 2 || cs == nil {
		return
	}
	var out strings.Builder
	certs := cs.PeerCertificates
	for i := 1; i < len(certs); i++ { // ab lists the rest of the chain first, unlabelled
		writeCertInfo(&out, certs[i])
	}
	if len(certs) == 0 {
		out.WriteString("Anon DH\n")
	} else {
		out.WriteString("Peer certificate\n")
		writeCertInfo(&out, certs[0])
	}
	io.WriteString(s.out, out.String())

	var e strings.Builder
	version := client.TLSVersionName(cs.Version)
	name, bits, algBits, suiteVersion := cipherDescription(cs.CipherSuite)
	fmt.Fprintf(&e, "\nTransport Protocol      :%s\n", version)
	fmt.Fprintf(&e, "Cipher Suite Protocol   :%s\n", suiteVersion)
	fmt.Fprintf(&e, "Cipher Suite Name       :%s\n", name)
	fmt.Fprintf(&e, "Cipher Suite Cipher Bits:%d (%d)\n", bits, algBits)
	e.WriteString("SSL-Session:\n")
	fmt.Fprintf(&e, "    Protocol  : %s\n", version)
	fmt.Fprintf(&e, "    Cipher    : %s\n", name)
	e.WriteString("    Session-ID: \n    Session-ID-ctx: \n")
	if cs.Version == tls.VersionTLS13 {
		e.WriteString("    Resumption PSK: \n")
	} else {
		e.WriteString("    Master-Key: \n")
	}
	e.WriteString("    PSK identity: None\n    PSK identity hint: None\n    SRP username: None\n")
	fmt.Fprintf(&e, "    Start Time: %d\n", s.now().Unix())
	e.WriteString("    Timeout   : 7200 (sec)\n")
	code, text := verifyResult(cs)
	fmt.Fprintf(&e, "    Verify return code: %d (%s)\n", code, text)
	if cs.Version == tls.VersionTLS13 {
		e.WriteString("    Extended master secret: no\n    Max Early Data: 0\n")
	} else {
		e.WriteString("    Extended master secret: yes\n")
	}
	io.WriteString(s.errw, e.String())
}

// writeCertInfo is ab's ssl_print_cert_info.
func writeCertInfo(w *strings.Builder, c *x509.Certificate) {
	fmt.Fprintf(w, "Certificate version: %d\n", c.Version)
	fmt.Fprintf(w, "Valid from: %s\n", c.NotBefore.UTC().Format("Jan _2 15:04:05 2006 GMT"))
	fmt.Fprintf(w, "Valid to  : %s\n", c.NotAfter.UTC().Format("Jan _2 15:04:05 2006 GMT"))
	fmt.Fprintf(w, "Public key is %d bits\n", client.PublicKeyBits(c.PublicKey))
	fmt.Fprintf(w, "The issuer name is %s\n", oneLineName(c.Issuer))
	fmt.Fprintf(w, "The subject name is %s\n", oneLineName(c.Subject))
	fmt.Fprintf(w, "Extension Count: %d\n", len(c.Extensions))
}

// oidShortNames are OpenSSL's short names for the usual name attributes.
var oidShortNames = map[string]string{
	"2.5.4.3": "CN", "2.5.4.6": "C", "2.5.4.7": "L", "2.5.4.8": "ST", "2.5.4.10": "O",
	"2.5.4.11": "OU", "2.5.4.5": "serialNumber", "2.5.4.9": "street", "2.5.4.17": "postalCode",
	"1.2.840.113549.1.9.1": "emailAddress", "0.9.2342.19200300.100.1.25": "DC",
	"0.9.2342.19200300.100.1.1": "UID",
}

// oneLineName is OpenSSL's X509_NAME_oneline: "/C=US/O=Org/CN=name", in the
// certificate's order.
func oneLineName(n pkix.Name) string {
	var b strings.Builder
	for _, rdn := range n.ToRDNSequence() {
		for _, atv := range rdn {
			key := atv.Type.String()
			if short, ok := oidShortNames[key]; ok {
				key = short
			}
			fmt.Fprintf(&b, "/%s=%v", key, atv.Value)
		}
	}
	return b.String()
}

// cipherDescription gives OpenSSL's name of a suite, its secret and algorithm
// bits, and the oldest protocol OpenSSL files it under. TLS 1.3 names are the
// same in both worlds; older ones are rewritten from the IANA name
// (TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 → ECDHE-RSA-AES256-GCM-SHA384).
func cipherDescription(id uint16) (name string, bits, algBits int, version string) {
	iana := tls.CipherSuiteName(id)
	kx, enc, ok := strings.Cut(strings.TrimPrefix(iana, "TLS_"), "_WITH_")
	switch {
	case strings.Contains(iana, "_256_") || strings.Contains(iana, "CHACHA20"):
		bits = 256
	case strings.Contains(iana, "3DES"):
		bits, algBits = 112, 168
	case strings.Contains(iana, "_128_"):
		bits = 128
	}
	if algBits == 0 {
		algBits = bits
	}
	if !ok { // a TLS 1.3 suite (or an unknown one, shown as 0x....)
		return iana, bits, algBits, "TLSv1.3"
	}
	version = "TLSv1.2"
	if strings.HasSuffix(enc, "_CBC_SHA") || strings.HasPrefix(enc, "RC4") {
		version = "SSLv3"
	}
	var parts []string
	if kx != "RSA" {
		parts = append(parts, strings.Split(kx, "_")...)
	}
	switch {
	case strings.HasPrefix(enc, "3DES_EDE_CBC_"):
		parts = append(parts, "DES", "CBC3", strings.TrimPrefix(enc, "3DES_EDE_CBC_"))
	case strings.HasPrefix(enc, "CHACHA20_POLY1305"):
		parts = append(parts, "CHACHA20", "POLY1305")
	default:
		f := strings.Split(enc, "_") // AES 256 GCM SHA384 | AES 128 CBC SHA | RC4 128 SHA
		if len(f) >= 3 {
			f = append([]string{f[0] + f[1]}, f[2:]...)
			if f[0] == "RC4128" {
				f[0] = "RC4"
			}
		}
		filtered := f[:0]
		for _, p := range f {
			if p != "CBC" {
				filtered = append(filtered, p)
			}
		}
		parts = append(parts, filtered...)
	}
	return strings.Join(parts, "-"), bits, algBits, version
}

// verifyResult is OpenSSL's verify code for the peer chain (ab never acts on
// it): 0 ok, 18 self-signed, 20 unknown issuer, 10 expired, else 1.
func verifyResult(cs *tls.ConnectionState) (int, string) {
	if len(cs.PeerCertificates) == 0 {
		return 0, "ok"
	}
	leaf := cs.PeerCertificates[0]
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	_, err := leaf.Verify(x509.VerifyOptions{Intermediates: inter, CurrentTime: leaf.NotBefore.Add(time.Second)})
	var unknown x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	switch {
	case err == nil:
		if time.Now().After(leaf.NotAfter) {
			return 10, "certificate has expired"
		}
		return 0, "ok"
	case errors.As(err, &unknown):
		if len(cs.PeerCertificates) == 1 && bytes.Equal(leaf.RawIssuer, leaf.RawSubject) {
			return 18, "self-signed certificate"
		}
		return 20, "unable to get local issuer certificate"
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return 10, "certificate has expired"
	}
	return 1, "unspecified certificate verification error"
}
