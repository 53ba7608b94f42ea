package abprint

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"gab/client"
	"gab/internal/printable"
)

// This file is ab's -v 2 dump of every TLS handshake (ssl_print_info and
// ssl_print_cert_info), in OpenSSL's words, given Go's connection state.

// TLSHandshake prints, at -v ≥ 2, what ab's ssl_print_info prints for every
// handshake: the certificate chain on stdout, then the connection and session
// summary on stderr. OpenSSL-specific values are given in Go's terms.
func (s *Sink) TLSHandshake(cs *tls.ConnectionState) {
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
	suite := client.CipherSuite(cs.CipherSuite)
	fmt.Fprintf(&e, "\nTransport Protocol      :%s\n", version)
	fmt.Fprintf(&e, "Cipher Suite Protocol   :%s\n", suite.Version)
	fmt.Fprintf(&e, "Cipher Suite Name       :%s\n", suite.Name)
	fmt.Fprintf(&e, "Cipher Suite Cipher Bits:%d (%d)\n", suite.Bits, suite.AlgBits)
	e.WriteString("SSL-Session:\n")
	fmt.Fprintf(&e, "    Protocol  : %s\n", version)
	fmt.Fprintf(&e, "    Cipher    : %s\n", suite.Name)
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
// certificate's order. The values are the server's bytes: every byte a
// terminal could take for a command (a screen clear, an OSC 52 clipboard
// write) is written \xNN by printable.String, as OpenSSL writes \xHH.
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
	return printable.String(b.String())
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
