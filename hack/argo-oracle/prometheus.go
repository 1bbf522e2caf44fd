package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
)

// measurement is one scripted answer of the fake Prometheus: exactly one of its fields is set.
type measurement struct {
	// Prometheus is the "data" of a successful /api/v1/query answer ({"resultType":..,"result":..}).
	Prometheus json.RawMessage `json:"prometheus,omitempty"`
	// Error is answered as Prometheus answers a failed query: HTTP 422,
	// {"status":"error","errorType":<ErrorType or "execution">,"error":<Error>}.
	Error     *string `json:"error,omitempty"`
	ErrorType string  `json:"errorType,omitempty"`
	// Raw is answered byte for byte, for answers no real Prometheus gives (a 503 page, bad JSON).
	Raw *struct {
		Status int    `json:"status"`
		Body   string `json:"body"`
	} `json:"raw,omitempty"`
}

func (m measurement) validate() error {
	set := 0
	if len(m.Prometheus) > 0 {
		set++
	}
	if m.Error != nil {
		set++
	}
	if m.Raw != nil {
		set++
	}
	if set != 1 {
		return fmt.Errorf(`want exactly one of "prometheus", "error", "raw"`)
	}
	return nil
}

// scriptedPrometheus is an HTTP server on loopback that answers each query (a metric's name) with
// that metric's next scripted measurement. Argo's real Prometheus provider queries it, so the
// response handling under test is client_golang's and Argo's, not ours.
type scriptedPrometheus struct {
	server *httptest.Server

	mu      sync.Mutex
	scripts map[string][]measurement
	served  map[string]int
	// overrun names the queries asked for beyond their script during the current reconcile.
	overrun []string
}

func startScriptedPrometheus() *scriptedPrometheus {
	p := &scriptedPrometheus{}
	// httptest.NewServer listens on 127.0.0.1 (or [::1]) on a free port: loopback only.
	p.server = httptest.NewServer(http.HandlerFunc(p.serve))
	return p
}

// URL is the address to put in a metric's provider.prometheus.address.
func (p *scriptedPrometheus) URL() string { return p.server.URL }

func (p *scriptedPrometheus) Close() { p.server.Close() }

// load replaces every script; the next query of name gets scripts[name][0].
func (p *scriptedPrometheus) load(scripts map[string][]measurement) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.scripts = scripts
	p.served = map[string]int{}
	p.overrun = nil
}

// takeOverrun returns and clears the queries that found their script used up.
func (p *scriptedPrometheus) takeOverrun() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	o := p.overrun
	p.overrun = nil
	return o
}

// servedCounts says how many measurements of each script have been answered.
func (p *scriptedPrometheus) servedCounts() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := make(map[string]int, len(p.served))
	for k, v := range p.served {
		c[k] = v
	}
	return c
}

// rewind sets the served counts back to counts (taken by servedCounts before an undone reconcile).
func (p *scriptedPrometheus) rewind(counts map[string]int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.served = counts
}

func (p *scriptedPrometheus) serve(w http.ResponseWriter, r *http.Request) {
	// client_golang POSTs the query as a form (falling back to GET on 405); ParseForm reads both.
	if err := r.ParseForm(); err != nil || (r.URL.Path != "/api/v1/query" && r.URL.Path != "/api/v1/query_range") {
		http.Error(w, "argo-oracle: not a query", http.StatusNotFound)
		return
	}
	query := r.Form.Get("query")
	p.mu.Lock()
	script, known := p.scripts[query]
	n := p.served[query]
	var m *measurement
	if known && n < len(script) {
		m = &script[n]
		p.served[query] = n + 1
	} else {
		p.overrun = append(p.overrun, query)
	}
	p.mu.Unlock()

	w.Header().Set("Content-Type", "application/json")
	switch {
	case m == nil:
		// The run loop undoes the reconcile that asked this, so the answer is never judged.
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, "argo-oracle: no scripted measurement left for query %q", query)
	case m.Raw != nil:
		w.WriteHeader(m.Raw.Status)
		_, _ = w.Write([]byte(m.Raw.Body))
	case m.Error != nil:
		errorType := m.ErrorType
		if errorType == "" {
			errorType = "execution"
		}
		body, _ := json.Marshal(map[string]string{"status": "error", "errorType": errorType, "error": *m.Error})
		w.WriteHeader(http.StatusUnprocessableEntity)
		_, _ = w.Write(body)
	default:
		body, _ := json.Marshal(map[string]any{"status": "success", "data": m.Prometheus})
		_, _ = w.Write(body)
	}
}
