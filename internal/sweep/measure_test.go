package sweep

import (
	"strings"
	"testing"

	"gab/client"
)

// setPostBody holds the body once: Spec.Body is the request's tail.
func TestSetPostBody(t *testing.T) {
	cfg := &client.Config{Spec: client.RequestSpec{Method: "POST", HasBody: true, Target: "/f100.txt",
		Host: "127.0.0.1", ContentType: "x/y"}}
	setPostBody(cfg, 100)
	head := string(cfg.Request[:cfg.HeadLen])
	if !strings.HasPrefix(head, "POST /f100.txt HTTP/1.0\r\nContent-length: 100\r\nContent-type: x/y\r\n") ||
		len(cfg.Spec.Body) != 100 || &cfg.Spec.Body[0] != &cfg.Request[cfg.HeadLen] ||
		string(cfg.Spec.Body[36:40]) != "\nabc" {
		t.Errorf("request %q, body %q", cfg.Request, cfg.Spec.Body)
	}
	dropPostBody(cfg)
	if cfg.Request != nil || cfg.Spec.Body != nil {
		t.Error("the body outlived its run")
	}
}
