package testsrv

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"sync"
	"time"
)

var (
	certOnce sync.Once
	certPair tls.Certificate
	certPEM  []byte
	keyPEM   []byte
	certErr  error
)

// Certificate returns the self-signed CN=localhost RSA 2048 certificate the
// TLS servers use, as a tls.Certificate and as PEM. It is generated once per
// process, like `openssl req -x509` would make it: 30 days, 3 extensions
// (basic constraints, subject and authority key identifiers).
func Certificate() (tls.Certificate, []byte, error) {
	certOnce.Do(func() {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			certErr = err
			return
		}
		pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
		if err != nil {
			certErr = err
			return
		}
		keyID := sha1.Sum(pub)
		now := time.Now().Truncate(time.Second)
		tmpl := &x509.Certificate{
			SerialNumber:          big.NewInt(now.UnixNano()),
			Subject:               pkix.Name{CommonName: "localhost"},
			NotBefore:             now,
			NotAfter:              now.AddDate(0, 0, 30),
			BasicConstraintsValid: true,
			IsCA:                  true,
			SubjectKeyId:          keyID[:],
			AuthorityKeyId:        keyID[:],
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			certErr = err
			return
		}
		certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
		keyPEM = pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
		certPair = tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	})
	return certPair, certPEM, certErr
}

// ServerTLSConfig is the TLS setup of the goldens' nginx as far as Go's TLS
// stack allows: TLS 1.2 and 1.3, X25519 first, and for TLS 1.2 only
// ECDHE-RSA-AES256-GCM-SHA384 (the suite OpenSSL clients got from nginx). Go
// picks TLS 1.3 suites itself (AES-128-GCM when the client offers it), so the
// cipher of a TLS 1.3 report line may differ from nginx's.
func ServerTLSConfig() (*tls.Config, error) {
	cert, _, err := Certificate()
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		Certificates:     []tls.Certificate{cert},
		MinVersion:       tls.VersionTLS12,
		MaxVersion:       tls.VersionTLS13,
		CipherSuites:     []uint16{tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384},
		CurvePreferences: []tls.CurveID{tls.X25519, tls.CurveP256, tls.CurveP384, tls.CurveP521},
	}, nil
}

// WriteCertificateAndKey writes the certificate and its private key, PEM,
// into one file (the form ab's -E takes) and returns its path.
func WriteCertificateAndKey(dir string) (string, error) {
	if _, _, err := Certificate(); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "localhost.pem")
	return path, os.WriteFile(path, append(append([]byte(nil), certPEM...), keyPEM...), 0o600)
}
