package main

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"github.com/argoproj/argo-rollouts/utils/evaluate"
	log "github.com/sirupsen/logrus"
)

// evalRequest is the input of modes "eval" (one condition) and "evaluate" (a metric's success and
// failure conditions together, as a provider hands a result to Argo).
type evalRequest struct {
	Result     json.RawMessage `json:"result"`
	ResultKind string          `json:"resultKind"`
	Condition  string          `json:"condition"`
	Metric     *struct {
		SuccessCondition string `json:"successCondition"`
		FailureCondition string `json:"failureCondition"`
	} `json:"metric"`
}

// evalCondition calls evaluate.EvalCondition, the expr-lang evaluation of one condition.
func evalCondition(req evalRequest) (map[string]any, error) {
	value, err := resultValue(req.Result, req.ResultKind)
	if err != nil {
		return nil, err
	}
	ok, evalErr := evaluate.EvalCondition(value, req.Condition)
	if evalErr != nil {
		return map[string]any{"error": evalErr.Error()}, nil
	}
	return map[string]any{"value": ok}, nil
}

// evaluateResult calls evaluate.EvaluateResult, which turns a result and a metric's two conditions
// into a measurement phase.
func evaluateResult(req evalRequest) (map[string]any, error) {
	if req.Metric == nil {
		return nil, fmt.Errorf(`mode "evaluate" needs "metric": {"successCondition":..,"failureCondition":..}`)
	}
	value, err := resultValue(req.Result, req.ResultKind)
	if err != nil {
		return nil, err
	}
	metric := v1alpha1.Metric{SuccessCondition: req.Metric.SuccessCondition, FailureCondition: req.Metric.FailureCondition}
	phase, evalErr := evaluate.EvaluateResult(value, metric, *log.NewEntry(log.StandardLogger()))
	resp := map[string]any{"phase": string(phase)}
	if evalErr != nil {
		resp["error"] = evalErr.Error()
	}
	return resp, nil
}

// resultValue builds the Go value a provider hands to Argo's evaluator: float64 for a Prometheus
// scalar, []float64 for a vector or matrix, whatever encoding/json makes of a web provider's body.
func resultValue(raw json.RawMessage, kind string) (any, error) {
	switch kind {
	case "nil":
		return nil, nil
	case "float":
		return parseFloat(raw)
	case "floats":
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, fmt.Errorf("result: resultKind floats wants an array: %v", err)
		}
		floats := make([]float64, 0, len(items))
		for i, item := range items {
			f, err := parseFloat(item)
			if err != nil {
				return nil, fmt.Errorf("result[%d]: %v", i, err)
			}
			floats = append(floats, f)
		}
		return floats, nil
	case "json":
		var v any
		if len(raw) == 0 {
			return nil, fmt.Errorf(`result: resultKind json needs "result"`)
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("result: %v", err)
		}
		return v, nil
	default:
		return nil, fmt.Errorf("resultKind %q: want float, floats, json or nil", kind)
	}
}

// parseFloat reads a JSON number, or a string the way Prometheus' client reads a sample value
// (strconv.ParseFloat: "NaN", "+Inf", "-Inf", "0.97").
func parseFloat(raw json.RawMessage) (float64, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, fmt.Errorf("not a float: %q", s)
		}
		return f, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return 0, fmt.Errorf("want a number or \"NaN\", \"+Inf\", \"-Inf\": %s", string(raw))
	}
	return f, nil
}
