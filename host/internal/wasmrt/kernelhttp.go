package wasmrt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
)

// maxHTTPResponseBytes caps the body of a response to a guest's outbound
// HTTP request.
const maxHTTPResponseBytes = 16 << 20

// httpRequest is the JSON request of Extism's http_request.
type httpRequest struct {
	URL     string            `json:"url"`
	Method  string            `json:"method"`
	Headers map[string]string `json:"headers"`
}

// httpRequest serves Extism's http_request: an outbound HTTP request of the
// guest to a host its manifest allows (abi.Permissions.Hosts, globs on the
// host name). The response body goes to a new block, the status and headers
// to the kernel for http_status_code and http_headers. A refused or failed
// request fails the call, as in Extism.
func (r *Runtime) httpRequest(ctx context.Context, c *call, s []uint64) {
	k := c.kernelOrFault()
	k.httpStatus, k.httpHeaders = 0, nil
	raw, err := k.bytes(s[0])
	if err != nil {
		kernelFault("http_request: %v", err)
	}
	var req httpRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		kernelFault("http_request: the request is not JSON: %v", err)
	}
	var body io.Reader
	if s[1] != 0 {
		b, err := k.bytes(s[1])
		if err != nil {
			kernelFault("http_request: body: %v", err)
		}
		body = bytes.NewReader(bytes.Clone(b))
	}
	resp, err := r.doHTTP(ctx, c.allowedHosts(), req, body)
	if err != nil {
		kernelFault("http_request: %v", err)
	}
	k.httpStatus = int32(resp.status)
	k.httpHeaders = resp.headers
	s[0] = k.write(resp.body)
}

type httpResponse struct {
	status  int
	headers map[string]string
	body    []byte
}

func (r *Runtime) doHTTP(ctx context.Context, allowed []string, req httpRequest, body io.Reader) (*httpResponse, error) {
	u, err := url.Parse(req.URL)
	if err != nil {
		return nil, fmt.Errorf("invalid url: %w", err)
	}
	if !hostAllowed(allowed, u.Hostname()) {
		return nil, fmt.Errorf("the request to %s is not allowed: declare its host with kopf.AllowHosts", u.Redacted())
	}
	method := strings.ToUpper(req.Method)
	if method == "" {
		method = http.MethodGet
	}
	hreq, err := http.NewRequestWithContext(ctx, method, req.URL, body)
	if err != nil {
		return nil, err
	}
	for name, value := range req.Headers {
		hreq.Header.Set(name, value)
	}
	client := &http.Client{CheckRedirect: func(next *http.Request, _ []*http.Request) error {
		if !hostAllowed(allowed, next.URL.Hostname()) {
			return fmt.Errorf("redirect to %s is not allowed: declare its host with kopf.AllowHosts", next.URL.Redacted())
		}
		return nil
	}}
	hresp, err := client.Do(hreq)
	if err != nil {
		return nil, err
	}
	defer hresp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(hresp.Body, maxHTTPResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the response of %s: %w", u.Redacted(), err)
	}
	if len(b) > maxHTTPResponseBytes {
		return nil, errors.New("the response body is larger than 16 MiB")
	}
	headers := make(map[string]string, len(hresp.Header))
	for name := range hresp.Header {
		headers[strings.ToLower(name)] = hresp.Header.Get(name)
	}
	return &httpResponse{status: hresp.StatusCode, headers: headers, body: b}, nil
}

// hostAllowed matches host against the globs of a manifest's hosts.
func hostAllowed(allowed []string, host string) bool {
	for _, pattern := range allowed {
		if ok, err := path.Match(pattern, host); pattern == host || (err == nil && ok) {
			return true
		}
	}
	return false
}

// httpHeaders serves Extism's http_headers: the headers of the last
// response as a JSON object, or 0 before any response.
func httpHeaders(_ context.Context, c *call, s []uint64) {
	k := c.kernelOrFault()
	s[0] = 0
	if k.httpHeaders == nil {
		return
	}
	b, err := json.Marshal(k.httpHeaders)
	if err != nil {
		kernelFault("http_headers: %v", err)
	}
	s[0] = k.write(b)
}
