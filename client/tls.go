package client

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"

	"gab/internal/printable"
)

// This file is ab's TLS setup (-Z -f -E -I, SNI) on top of crypto/tls, and the
// handshake shared by the HTTP/1 and HTTP/2 transports.
//
// Differences from ab's OpenSSL that cannot be avoided:
//   - Go does not let TLS 1.3 cipher suites be chosen; valid TLS 1.3 names in -Z
//     are accepted but the server's choice among Go's three suites stands.
//   - Go offers no X448, DHE or RSA-PSK suites; such names in -Z match nothing.
//   - OpenSSL error-queue lines are replaced by one line in Go's words.

// cipherSuite describes one TLS 1.0–1.2 suite Go implements, by OpenSSL name.
type cipherSuite struct {
	id      uint16
	openssl string
	bits    int
	tags    string // OpenSSL cipher-string aliases that select it, space separated
}

// cipherTable maps OpenSSL names to Go's TLS 1.0–1.2 suites. Tags are the
// OpenSSL aliases (kECDHE, aRSA, AESGCM, HIGH, …) usable in -Z, alone or joined with '+'.
var cipherTable = []cipherSuite{
	{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, "ECDHE-ECDSA-AES256-GCM-SHA384", 256, "kECDHE ECDHE EECDH aECDSA ECDSA AES AES256 AESGCM SHA384 HIGH TLSv1.2"},
	{tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, "ECDHE-RSA-AES256-GCM-SHA384", 256, "kECDHE ECDHE EECDH aRSA AES AES256 AESGCM SHA384 HIGH TLSv1.2"},
	{tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, "ECDHE-ECDSA-CHACHA20-POLY1305", 256, "kECDHE ECDHE EECDH aECDSA ECDSA CHACHA20 HIGH TLSv1.2"},
	{tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256, "ECDHE-RSA-CHACHA20-POLY1305", 256, "kECDHE ECDHE EECDH aRSA CHACHA20 HIGH TLSv1.2"},
	{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, "ECDHE-ECDSA-AES128-GCM-SHA256", 128, "kECDHE ECDHE EECDH aECDSA ECDSA AES AES128 AESGCM SHA256 HIGH TLSv1.2"},
	{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, "ECDHE-RSA-AES128-GCM-SHA256", 128, "kECDHE ECDHE EECDH aRSA AES AES128 AESGCM SHA256 HIGH TLSv1.2"},
	{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256, "ECDHE-ECDSA-AES128-SHA256", 128, "kECDHE ECDHE EECDH aECDSA ECDSA AES AES128 SHA256 HIGH TLSv1.2"},
	{tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256, "ECDHE-RSA-AES128-SHA256", 128, "kECDHE ECDHE EECDH aRSA AES AES128 SHA256 HIGH TLSv1.2"},
	{tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA, "ECDHE-ECDSA-AES256-SHA", 256, "kECDHE ECDHE EECDH aECDSA ECDSA AES AES256 SHA1 SHA HIGH SSLv3"},
	{tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA, "ECDHE-RSA-AES256-SHA", 256, "kECDHE ECDHE EECDH aRSA AES AES256 SHA1 SHA HIGH SSLv3"},
	{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, "ECDHE-ECDSA-AES128-SHA", 128, "kECDHE ECDHE EECDH aECDSA ECDSA AES AES128 SHA1 SHA HIGH SSLv3"},
	{tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA, "ECDHE-RSA-AES128-SHA", 128, "kECDHE ECDHE EECDH aRSA AES AES128 SHA1 SHA HIGH SSLv3"},
	{tls.TLS_RSA_WITH_AES_256_GCM_SHA384, "AES256-GCM-SHA384", 256, "kRSA RSA aRSA AES AES256 AESGCM SHA384 HIGH TLSv1.2"},
	{tls.TLS_RSA_WITH_AES_128_GCM_SHA256, "AES128-GCM-SHA256", 128, "kRSA RSA aRSA AES AES128 AESGCM SHA256 HIGH TLSv1.2"},
	{tls.TLS_RSA_WITH_AES_128_CBC_SHA256, "AES128-SHA256", 128, "kRSA RSA aRSA AES AES128 SHA256 HIGH TLSv1.2"},
	{tls.TLS_RSA_WITH_AES_256_CBC_SHA, "AES256-SHA", 256, "kRSA RSA aRSA AES AES256 SHA1 SHA HIGH SSLv3"},
	{tls.TLS_RSA_WITH_AES_128_CBC_SHA, "AES128-SHA", 128, "kRSA RSA aRSA AES AES128 SHA1 SHA HIGH SSLv3"},
	{tls.TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA, "ECDHE-RSA-DES-CBC3-SHA", 112, "kECDHE ECDHE EECDH aRSA 3DES SHA1 SHA MEDIUM SSLv3"},
	{tls.TLS_RSA_WITH_3DES_EDE_CBC_SHA, "DES-CBC3-SHA", 112, "kRSA RSA aRSA 3DES SHA1 SHA MEDIUM SSLv3"},
	{tls.TLS_ECDHE_ECDSA_WITH_RC4_128_SHA, "ECDHE-ECDSA-RC4-SHA", 128, "kECDHE ECDHE EECDH aECDSA ECDSA RC4 SHA1 SHA LOW SSLv3"},
	{tls.TLS_ECDHE_RSA_WITH_RC4_128_SHA, "ECDHE-RSA-RC4-SHA", 128, "kECDHE ECDHE EECDH aRSA RC4 SHA1 SHA LOW SSLv3"},
	{tls.TLS_RSA_WITH_RC4_128_SHA, "RC4-SHA", 128, "kRSA RSA aRSA RC4 SHA1 SHA LOW SSLv3"},
}

// tls13Suites are TLS 1.3's suites; OpenSSL and IANA use the same names.
var tls13Suites = []cipherSuite{
	{tls.TLS_AES_128_GCM_SHA256, "TLS_AES_128_GCM_SHA256", 128, ""},
	{tls.TLS_AES_256_GCM_SHA384, "TLS_AES_256_GCM_SHA384", 256, ""},
	{tls.TLS_CHACHA20_POLY1305_SHA256, "TLS_CHACHA20_POLY1305_SHA256", 256, ""},
}

// defaultCurves mirror the groups OpenSSL 3.0 offers (X448 aside, which Go
// lacks), so that servers pick what they pick for ab ("X25519 253 bits") rather
// than Go's post-quantum hybrid.
var defaultCurves = []tls.CurveID{tls.X25519, tls.CurveP256, tls.CurveP521, tls.CurveP384}

// buildTLSConfig turns ab's TLS options into a client configuration. It runs
// before ab's banner, so its errors are ab's setup errors (exit 1).
func buildTLSConfig(cfg *Config) (*tls.Config, error) {
	o := cfg.TLS
	conf := &tls.Config{
		InsecureSkipVerify: !o.Verify, // ab never verifies; --verify-tls does
		CurvePreferences:   defaultCurves,
		MinVersion:         tls.VersionTLS10,
		MaxVersion:         tls.VersionTLS13,
	}
	conf.MinVersion, conf.MaxVersion = protocolRange(o.Protocol)
	if o.Resume {
		// One cache for the run's connections (HTTP/2's config is a clone
		// that shares it): a TLS 1.3 ticket or a TLS 1.2 session per server.
		conf.ClientSessionCache = tls.NewLRUClientSessionCache(0)
	}
	if sni := sniName(o); sni != "" {
		conf.ServerName = sni
	} else if o.Verify {
		// Without SNI Go would refuse to verify; check the chain against the URL host ourselves.
		conf.InsecureSkipVerify = true
		conf.VerifyConnection = verifyAgainst(cfg.Target.Host)
	}
	if o.Ciphers != "" {
		ids, err := parseCipherList(o.Ciphers, strings.EqualFold(o.Protocol, "TLS1.3"))
		if err != nil {
			return nil, &FatalError{Message: "error setting ciphersuite list [" + o.Ciphers + "]\n" + err.Error() + "\n", Exit: 1, Err: err}
		}
		conf.CipherSuites = ids
	}
	if o.CertFile != "" {
		cert, fe := loadClientCert(o.CertFile)
		if fe != nil {
			return nil, fe
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	return conf, nil
}

// protocolRange is -f: TLS1 means TLS 1.0 only; ALL or nothing means 1.0–1.3.
func protocolRange(p string) (uint16, uint16) {
	switch strings.ToUpper(p) {
	case "TLS1":
		return tls.VersionTLS10, tls.VersionTLS10
	case "TLS1.1":
		return tls.VersionTLS11, tls.VersionTLS11
	case "TLS1.2":
		return tls.VersionTLS12, tls.VersionTLS12
	case "TLS1.3":
		return tls.VersionTLS13, tls.VersionTLS13
	}
	return tls.VersionTLS10, tls.VersionTLS13
}

// sniName is the name ab sends: the -H Host: value or the URL host, not when -I
// is given, nor when it is empty or an IP address.
func sniName(o TLSOptions) string {
	name := o.ServerName
	if o.NoSNI || name == "" {
		return ""
	}
	host := strings.TrimSuffix(strings.TrimPrefix(name, "["), "]")
	if net.ParseIP(host) != nil {
		return ""
	}
	return name
}

// verifyAgainst checks the server's chain for host when no SNI is sent.
func verifyAgainst(host string) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("tls: server sent no certificate")
		}
		opts := x509.VerifyOptions{DNSName: host, Intermediates: x509.NewCertPool()}
		for _, c := range cs.PeerCertificates[1:] {
			opts.Intermediates.AddCert(c)
		}
		_, err := cs.PeerCertificates[0].Verify(opts)
		return err
	}
}

// parseCipherList reads an OpenSSL cipher string: names or aliases separated by
// ':', ',' or spaces, aliases joined by '+', and '!' or '-' to remove. As in
// OpenSSL, unknown words are ignored and only an empty result is an error. With
// -f TLS1.3 the list names TLS 1.3 suites, which Go cannot restrict.
func parseCipherList(list string, tls13Only bool) ([]uint16, error) {
	var chosen []uint16
	removed := map[uint16]bool{}
	any13 := false
	for _, word := range strings.FieldsFunc(list, func(r rune) bool { return r == ':' || r == ',' || r == ' ' }) {
		op := byte(0)
		if word[0] == '!' || word[0] == '-' || word[0] == '+' {
			op, word = word[0], word[1:]
		}
		if word == "" || word[0] == '@' {
			continue // @STRENGTH, @SECLEVEL=n: ordering and policy, not selection
		}
		for _, s := range tls13Suites {
			if strings.EqualFold(word, s.openssl) {
				any13 = true
			}
		}
		if tls13Only {
			continue
		}
		for _, s := range cipherTable {
			if !s.matches(word) {
				continue
			}
			switch op {
			case '!':
				removed[s.id] = true
			case '-':
				chosen = removeID(chosen, s.id)
			case '+':
				if containsID(chosen, s.id) { // move to the end
					chosen = append(removeID(chosen, s.id), s.id)
				}
			default:
				if !removed[s.id] && !containsID(chosen, s.id) {
					chosen = append(chosen, s.id)
				}
			}
		}
	}
	if tls13Only {
		if !any13 {
			return nil, errors.New("crypto/tls: no TLS 1.3 cipher suite matches the list")
		}
		return nil, nil
	}
	out := chosen[:0]
	for _, id := range chosen {
		if !removed[id] {
			out = append(out, id)
		}
	}
	if len(out) == 0 && !any13 {
		return nil, errors.New("crypto/tls: no cipher match (no name in the list is a cipher suite Go supports)")
	}
	if len(out) == 0 {
		return nil, nil // only TLS 1.3 names: nothing to restrict
	}
	return out, nil
}

// matches reports whether an OpenSSL cipher-string word selects the suite.
func (s cipherSuite) matches(word string) bool {
	if strings.EqualFold(word, s.openssl) {
		return true
	}
	switch word {
	case "ALL", "DEFAULT", "COMPLEMENTOFNONE":
		return true
	}
	tags := strings.Fields(s.tags)
	for _, part := range strings.Split(word, "+") {
		found := false
		for _, t := range tags {
			if t == part {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func containsID(ids []uint16, id uint16) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func removeID(ids []uint16, id uint16) []uint16 {
	out := ids[:0]
	for _, x := range ids {
		if x != id {
			out = append(out, x)
		}
	}
	return out
}

// loadClientCert reads -E: a PEM file holding the certificate chain and the
// private key, failing with ab's messages.
func loadClientCert(file string) (tls.Certificate, *FatalError) {
	fail := func(msg string, err error) (tls.Certificate, *FatalError) {
		return tls.Certificate{}, &FatalError{Message: msg + "\n", Exit: 1, Err: err}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return fail("unable to get certificate from '"+file+"'", err)
	}
	var certPEM, keyPEM []byte
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		switch {
		case block.Type == "CERTIFICATE":
			certPEM = append(certPEM, pem.EncodeToMemory(block)...)
		case strings.HasSuffix(block.Type, "PRIVATE KEY") && keyPEM == nil:
			keyPEM = pem.EncodeToMemory(block)
		}
	}
	if certPEM == nil {
		return fail("unable to get certificate from '"+file+"'", errors.New("no CERTIFICATE block"))
	}
	if _, err := x509.ParseCertificate(firstDER(certPEM)); err != nil {
		return fail("unable to get certificate from '"+file+"'", err)
	}
	if keyPEM == nil || !parsableKey(keyPEM) {
		return fail("unable to get private key from '"+file+"'", errors.New("no usable PRIVATE KEY block"))
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fail("private key does not match the certificate public key in "+file, err)
	}
	return cert, nil
}

func firstDER(certPEM []byte) []byte {
	b, _ := pem.Decode(certPEM)
	if b == nil {
		return nil
	}
	return b.Bytes
}

func parsableKey(keyPEM []byte) bool {
	b, _ := pem.Decode(keyPEM)
	if b == nil {
		return false
	}
	if _, err := x509.ParsePKCS8PrivateKey(b.Bytes); err == nil {
		return true
	}
	if _, err := x509.ParsePKCS1PrivateKey(b.Bytes); err == nil {
		return true
	}
	_, err := x509.ParseECPrivateKey(b.Bytes)
	return err == nil
}

// withALPN returns a copy of conf offering the given application protocols
// (HTTP/2 uses it with "h2").
func withALPN(conf *tls.Config, protos ...string) *tls.Config {
	c := conf.Clone()
	c.NextProtos = protos
	return c
}

// tlsRampHandshakes bounds the TLS handshakes under way at once while a
// run's connections first open (the ramp-up after the first response head).
// A server's accept queue (511 by default in nginx) overflows when thousands
// of connections arrive in the same millisecond and each costs it a
// handshake: the connections it drops are reset seconds later, and after
// ab's 10 connect failures the run ends. ab, whose handshakes run one after
// the other, never gets there. A request's clock starts when its connection
// starts, after the wait. Later connections (without -k, or replacing a
// closed one) are not held back: they are the load the user asked for.
// (A variable only so that a test can make it small.)
var tlsRampHandshakes = 256

// tlsRamp holds a token per TLS handshake of the ramp-up under way on the
// goroutine paths (the event loops count theirs, epPoller.opening); nil
// for plain connections.
type tlsRamp chan struct{}

func newTLSRamp() tlsRamp { return make(tlsRamp, tlsRampHandshakes) }

// enter waits, before a first connection, until fewer than
// tlsRampHandshakes handshakes are under way; false if done closed first,
// or for a nil ramp (nothing to leave).
func (g tlsRamp) enter(done <-chan struct{}) bool {
	if g == nil {
		return false
	}
	select {
	case g <- struct{}{}:
		return true
	case <-done:
		return false
	}
}

// leave gives back the token enter took.
func (g tlsRamp) leave() { <-g }

// handshakeTLS runs the client handshake on raw (which the caller registered
// with tally.setConn, so a stopping run interrupts it): the goroutine paths'
// handshake. The event loops run the same crypto/tls handshake over a
// tlsLink (tlsloop_linux.go); both end in tlsFailed or tlsDone.
func handshakeTLS(r *run, raw net.Conn, conf *tls.Config) (*tls.Conn, error) {
	tc := tls.Client(raw, conf)
	if err := handshakeError(tc.Handshake()); err != nil {
		r.tlsFailed(err)
		return nil, err
	}
	r.tlsDone(tc)
	return tc, nil
}

// handshakeError is err, a failed handshake's error, as gab reports it
// (ab's "SSL handshake failed" line, the first connect error, the abort
// message): its text can quote the server's certificate, the names a
// --verify-tls failure cites ("certificate is valid for NAME, not HOST")
// among them, so every byte a terminal could take for a command is written
// \xNN, by printable.String, as ab's OpenSSL writes such bytes in names.
// errors.Is and errors.As still see err.
func handshakeError(err error) error {
	if err == nil {
		return nil
	}
	if text := printable.String(err.Error()); text != err.Error() {
		return &printableError{text: text, err: err}
	}
	return err
}

// printableError is an error whose text was made printable.
type printableError struct {
	text string
	err  error
}

func (e *printableError) Error() string { return e.text }
func (e *printableError) Unwrap() error { return e.err }

// tlsGaveUp reports a read error of crypto/tls's own making: the session
// is unusable (an alert sent or received, a record it refused, or a limit of
// its own, such as at most 16 post-handshake messages in a row, which a TLS
// 1.3 server sending 17 session tickets before its answer exceeds), as
// opposed to an error of the socket under it. ab's SSL_read failures close
// the connection and the run goes on (the next request opens a new one);
// gab counts them as receive failures whatever -r says. So is the event
// loops' end of a session whose server does not take what crypto/tls
// writes to it (errTLSOutputFull).
func tlsGaveUp(err error) bool {
	return errors.Is(err, errTLSOutputFull) || errnoOf(err) == 0 && !isEOF(err) && strings.Contains(err.Error(), "tls: ")
}

// tlsOutCap bounds the output crypto/tls writes on its own while an event
// loop's TLS link reads (tlsLink.read in tlsloop_linux.go) and the socket
// has not taken: 256 KiB, the read budget of a turn. A server that asks
// for a key update gets 27 bytes back (an alert is smaller), so that is
// some 9,700 requests whose answers the server has not read, beyond what
// the socket buffers hold; servers ask for one every few gigabytes at most.
const tlsOutCap = 256 << 10

// errTLSOutputFull ends an event loop's TLS connection whose link would
// hold more than tlsOutCap bytes of that output.
var errTLSOutputFull = fmt.Errorf("gab: over %d KiB of TLS output (answers to the server's KeyUpdate requests) that the server does not read", tlsOutCap>>10)

// tlsFailed reports a failed handshake to Events unless the run is stopping.
func (r *run) tlsFailed(err error) {
	if !r.isStopped() {
		r.events.TLSHandshakeFailed(err)
	}
}

// tlsDone notes a successful handshake: the first of the run fills
// Result.TLS; -v ≥ 2 reports each one.
func (r *run) tlsDone(tc *tls.Conn) {
	verbose := r.cfg.Verbosity >= 2
	if r.tlsInfo.Load() == nil || verbose {
		cs := tc.ConnectionState()
		if r.tlsInfo.Load() == nil {
			r.setTLS(tlsInfoOf(&cs))
		}
		if verbose {
			r.events.TLSHandshake(&cs)
		}
	}
}

// tlsInfoOf describes a handshake in ab's (OpenSSL's) words.
func tlsInfoOf(cs *tls.ConnectionState) *TLSInfo {
	info := &TLSInfo{Protocol: TLSVersionName(cs.Version), ServerName: cs.ServerName}
	suite := CipherSuite(cs.CipherSuite)
	info.Cipher, info.CipherBits = suite.Name, suite.Bits
	if len(cs.PeerCertificates) > 0 {
		info.PeerKeyBits = PublicKeyBits(cs.PeerCertificates[0].PublicKey)
	}
	info.TempKey = tempKeyName(cs.CurveID)
	return info
}

// TLSVersionName is OpenSSL's name for a protocol version ("TLSv1.3").
func TLSVersionName(v uint16) string {
	switch v {
	case tls.VersionTLS10:
		return "TLSv1"
	case tls.VersionTLS11:
		return "TLSv1.1"
	case tls.VersionTLS12:
		return "TLSv1.2"
	case tls.VersionTLS13:
		return "TLSv1.3"
	}
	return "unknown"
}

// CipherSuiteInfo is what OpenSSL tells of a cipher suite: CipherSuite's
// answer, from which -v 2's handshake dump prints the suite's name and bits.
type CipherSuiteInfo struct {
	Name    string // OpenSSL's name: "TLS_AES_128_GCM_SHA256", "ECDHE-RSA-AES256-GCM-SHA384"
	Bits    int    // secret bits
	AlgBits int    // the algorithm's bits (168 for 3DES's 112 secret bits)
	// Version is the oldest protocol OpenSSL files the suite under: "TLSv1.3",
	// "TLSv1.2" or "SSLv3".
	Version string
}

// CipherSuite describes a suite in OpenSSL's terms, from the tables that -Z
// selects from (every suite Go implements is in them); an unknown suite gets
// Go's name and no bits.
func CipherSuite(id uint16) CipherSuiteInfo {
	for _, s := range tls13Suites {
		if s.id == id {
			return CipherSuiteInfo{Name: s.openssl, Bits: s.bits, AlgBits: s.bits, Version: "TLSv1.3"}
		}
	}
	for _, s := range cipherTable {
		if s.id == id {
			info := CipherSuiteInfo{Name: s.openssl, Bits: s.bits, AlgBits: s.bits}
			tags := strings.Fields(s.tags)
			info.Version = tags[len(tags)-1] // every entry's tags end with its protocol
			if slices.Contains(tags, "3DES") {
				info.AlgBits = 168
			}
			return info
		}
	}
	return CipherSuiteInfo{Name: tls.CipherSuiteName(id)}
}

// PublicKeyBits is OpenSSL's EVP_PKEY_bits of a certificate's public key.
func PublicKeyBits(k any) int {
	switch k := k.(type) {
	case *rsa.PublicKey:
		return k.N.BitLen()
	case *ecdsa.PublicKey:
		return k.Curve.Params().BitSize
	case ed25519.PublicKey:
		return 253
	}
	return 0
}

// tempKeyName is ab's "Server Temp Key" text for the key exchange group.
func tempKeyName(id tls.CurveID) string {
	switch id {
	case 0:
		return "" // RSA key exchange: no ephemeral key
	case tls.X25519:
		return "X25519 253 bits"
	case tls.CurveP256:
		return "ECDH prime256v1 256 bits"
	case tls.CurveP384:
		return "ECDH secp384r1 384 bits"
	case tls.CurveP521:
		return "ECDH secp521r1 521 bits"
	case 30: // X448, should a future Go offer it
		return "X448 448 bits"
	}
	return id.String()
}
