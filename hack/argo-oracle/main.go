// argo-oracle gives golden verdicts for our TypeScript judge of Argo Rollouts' AnalysisTemplates
// (src/argo/): it answers the same questions with Argo Rollouts' own code, at the version pinned in
// go.mod, so a table test can compare our judge against Argo rather than against our reading of it.
//
// Protocol (README.md beside this file): JSON Lines on stdin, one answer line per non-blank input
// line on stdout, in order. mode "eval" and "evaluate" call utils/evaluate; mode "run" drives the
// real analysis controller's reconcile of an AnalysisRun against a scripted Prometheus on loopback.
// A bad line is answered {"id":..,"fatal":".."}; the program goes on with the next line.
// Argo's logs are discarded unless ARGO_ORACLE_LOG is set to a logrus level (they then go to stderr).
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	log "github.com/sirupsen/logrus"
)

// request is the union of the fields of every mode; each mode reads its own.
type request struct {
	ID   json.RawMessage `json:"id"`
	Mode string          `json:"mode"`
	evalRequest
	runRequest
}

func main() {
	if lvl := os.Getenv("ARGO_ORACLE_LOG"); lvl != "" {
		parsed, err := log.ParseLevel(lvl)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ARGO_ORACLE_LOG:", err)
			os.Exit(2)
		}
		log.SetLevel(parsed)
		log.SetOutput(os.Stderr)
	} else {
		log.SetOutput(io.Discard)
	}

	prom := startScriptedPrometheus()
	defer prom.Close()

	in := bufio.NewReader(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	// Conditions are full of < and >; keep them readable in messages.
	out.SetEscapeHTML(false)
	for {
		line, readErr := in.ReadBytes('\n')
		if strings.TrimSpace(string(line)) != "" {
			if err := out.Encode(answer(line, prom)); err != nil {
				fmt.Fprintln(os.Stderr, "stdout:", err)
				os.Exit(1)
			}
		}
		if readErr != nil {
			if !errors.Is(readErr, io.EOF) {
				fmt.Fprintln(os.Stderr, "stdin:", readErr)
				os.Exit(1)
			}
			return
		}
	}
}

// answer judges one input line; a panic anywhere under it (ours or Argo's) becomes a fatal answer
// for that line only.
func answer(line []byte, prom *scriptedPrometheus) (resp map[string]any) {
	var req request
	defer func() {
		if r := recover(); r != nil {
			resp = fatal(req.ID, fmt.Sprintf("panic: %v", r))
		}
	}()
	if err := json.Unmarshal(line, &req); err != nil {
		// Still echo the id when the line is JSON with an id but a field of the wrong shape.
		var idOnly struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(line, &idOnly)
		return fatal(idOnly.ID, "bad request: "+err.Error())
	}
	var err error
	switch req.Mode {
	case "eval":
		resp, err = evalCondition(req.evalRequest)
	case "evaluate":
		resp, err = evaluateResult(req.evalRequest)
	case "run":
		resp, err = runAnalysis(req.runRequest, prom)
	default:
		err = fmt.Errorf("unknown mode %q (want eval, evaluate or run)", req.Mode)
	}
	if err != nil {
		return fatal(req.ID, err.Error())
	}
	resp["id"] = idValue(req.ID)
	return resp
}

func fatal(id json.RawMessage, msg string) map[string]any {
	return map[string]any{"id": idValue(id), "fatal": msg}
}

// idValue echoes the request's id as it came (string, number or null).
func idValue(id json.RawMessage) any {
	if len(id) == 0 {
		return nil
	}
	return id
}
