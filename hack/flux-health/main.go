// flux-health judges objects the way Flux's kustomize-controller does when a Kustomization waits for
// them: with the Kustomization's spec.healthCheckExprs entry for the object's apiVersion and kind, run by
// fluxcd/pkg's own CEL status evaluator (the code the controller runs), or else by kstatus, the
// controller's built-in rule. An error of an expression is reported as Unknown, as the controller's
// status reader does (it then waits until its timeout).
// Usage: flux-health KUSTOMIZATION.yaml < objects.jsonl
// One JSON object per input line; per line out: {"status": ..., "kstatus": ..., "kstatusMessage": ...,
// "error": ...} where status is the verdict with the expressions and kstatus the one without them.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/fluxcd/pkg/runtime/cel"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// kustomization is the part of a Flux Kustomization this program reads.
type kustomization struct {
	Spec struct {
		HealthCheckExprs []kustomize.CustomHealthCheck `json:"healthCheckExprs"`
	} `json:"spec"`
}

type verdict struct {
	Status         string `json:"status"`
	Kstatus        string `json:"kstatus"`
	KstatusMessage string `json:"kstatusMessage,omitempty"`
	Error          string `json:"error,omitempty"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: flux-health KUSTOMIZATION.yaml < objects.jsonl")
		os.Exit(2)
	}
	raw, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var k kustomization
	if err := yaml.Unmarshal(raw, &k); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", os.Args[1], err)
		os.Exit(2)
	}
	evaluators := map[string]*cel.StatusEvaluator{}
	for _, c := range k.Spec.HealthCheckExprs {
		e, err := cel.NewStatusEvaluator(&c.HealthCheckExpressions)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s %s: %v\n", c.APIVersion, c.Kind, err)
			os.Exit(2)
		}
		evaluators[c.APIVersion+"/"+c.Kind] = e
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 16<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		if len(in.Bytes()) == 0 {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(in.Bytes()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		v := verdict{}
		if r, err := status.Compute(u); err != nil {
			v.Kstatus = string(status.UnknownStatus)
			v.KstatusMessage = err.Error()
		} else {
			v.Kstatus, v.KstatusMessage = string(r.Status), r.Message
		}
		if e, ok := evaluators[u.GetAPIVersion()+"/"+u.GetKind()]; ok {
			if r, err := e.Evaluate(context.Background(), u); err != nil {
				v.Status, v.Error = string(status.UnknownStatus), err.Error()
			} else {
				v.Status = string(r.Status)
			}
		} else {
			v.Status = v.Kstatus
		}
		if err := out.Encode(v); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
