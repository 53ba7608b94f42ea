package runcmd

import (
	"fmt"

	"gab/client"
)

// MaxConcurrency is this ab build's -c limit ("Invalid Concurrency [Range
// 0..200000]"). It also bounds -c × --streams and -c × --pipeline, the
// requests in flight.
const MaxConcurrency = 200000

// Conflict is why the combination of ab's options with gab's cannot work,
// leaving an option without effect ("" if it can): the root's parser
// refuses it as a usage error. target is the URL's (zero with --demo).
func (o *Options) Conflict(target client.Target) string {
	cfg := &o.Config
	noTLS := !target.TLS || cfg.Protocol == client.CGI // --demo's server is http://
	switch {
	case cfg.TLS.Verify && noTLS:
		return "--verify-tls needs an https:// URL (and no --cgi)"
	case cfg.TLS.Resume && noTLS:
		return "--tls-resume needs an https:// URL (and no --cgi)"
	case cfg.Protocol == client.HTTP3 && http3Conflict(o, target) != "":
		return http3Conflict(o, target)
	case cfg.Engine == client.EngineUring && client.UringConflict(cfg, target) != "":
		return client.UringConflict(cfg, target)
	case cfg.Streams > MaxConcurrency/max(cfg.Concurrency, 1):
		return fmt.Sprintf("--streams %d with -c %d is more than %d requests in flight (ab's -c limit)", cfg.Streams, cfg.Concurrency, MaxConcurrency)
	case o.Proxy && cfg.Protocol == client.HTTP2:
		return "-X cannot be used with --http2"
	case o.Proxy && cfg.Protocol == client.CGI:
		return "-X cannot be used with --cgi"
	case o.HTML && o.Format == "json":
		return "-w (and -x, -y, -z) cannot be used with --format json"
	case o.HTML && o.Extended:
		return "--extended prints text tables and cannot be used with -w (or -x, -y, -z)"
	case o.HTML && len(o.Percentiles) > 0:
		return "--percentiles prints a text table and cannot be used with -w (or -x, -y, -z)"
	}
	if msg := pipelineConflict(cfg); msg != "" {
		return msg
	}
	if err := checkStepInterval(o); err != nil {
		return err.Error()
	}
	return ""
}

// pipelineConflict is why --pipeline cannot go with the rest of the command
// line, "" if it can.
func pipelineConflict(cfg *client.Config) string {
	switch {
	case cfg.Pipeline <= 1:
		return ""
	case cfg.Protocol == client.HTTP2 || cfg.Protocol == client.HTTP3 || cfg.Protocol == client.CGI:
		return "--pipeline is HTTP/1's: it cannot be used with --http2, --http3 or --cgi"
	case !cfg.KeepAlive:
		return "--pipeline needs -k (pipelined requests share a kept-alive connection)"
	case cfg.RequestTimeout > 0:
		return "--pipeline cannot be used with --request-timeout (a request waits behind the others on its connection)"
	case cfg.Pipeline > MaxConcurrency/max(cfg.Concurrency, 1):
		return fmt.Sprintf("--pipeline %d with -c %d is more than %d requests in flight (ab's -c limit)", cfg.Pipeline, cfg.Concurrency, MaxConcurrency)
	}
	return ""
}

// http3Conflict is why --http3 cannot go with the rest of the command line,
// "" if it can.
func http3Conflict(o *Options, target client.Target) string {
	cfg := &o.Config
	switch {
	case !target.TLS:
		return "--http3 needs an https:// URL (QUIC is always encrypted)"
	case o.Proxy:
		return "-X cannot be used with --http3"
	case cfg.SocketBuffer != 0:
		return "-b cannot be used with --http3 (quic-go sizes its UDP socket buffers itself)"
	case cfg.TLS.Ciphers != "":
		return "-Z cannot be used with --http3 (QUIC uses TLS 1.3, whose cipher suites Go does not let a client choose)"
	case cfg.TLS.Protocol != "" && cfg.TLS.Protocol != "ALL" && cfg.TLS.Protocol != "TLS1.3":
		return "--http3 needs TLS 1.3 (-f " + cfg.TLS.Protocol + " asks for another version)"
	case cfg.TLS.EarlyData && !cfg.TLS.Resume:
		return "--early-data needs --tls-resume (0-RTT data goes on connections that resume a session)"
	case cfg.TLS.EarlyData && (cfg.Spec.HasBody || cfg.Spec.Method != "GET" && cfg.Spec.Method != "HEAD"):
		return "--early-data sends only GET and HEAD requests (a server may replay 0-RTT data)"
	}
	return ""
}
