package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
	_ "unsafe" // for go:linkname

	"github.com/argoproj/argo-rollouts/analysis"
	"github.com/argoproj/argo-rollouts/controller/metrics"
	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"github.com/argoproj/argo-rollouts/pkg/client/clientset/versioned/fake"
	informers "github.com/argoproj/argo-rollouts/pkg/client/informers/externalversions"
	"github.com/argoproj/argo-rollouts/utils/queue"
	"github.com/argoproj/argo-rollouts/utils/record"
	timeutil "github.com/argoproj/argo-rollouts/utils/time"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeinformers "k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8srecord "k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
)

// syncHandler is the analysis controller's work-queue handler: read the AnalysisRun from the lister,
// reconcileAnalysisRun (take due measurements, assess metrics and run, trim measurements, enqueue the
// next look), then persistAnalysisRunStatus (a merge patch). It is unexported; pulling it by
// linkname lets us run exactly what a controller worker runs, with no line of it mirrored here.
//
//go:linkname syncHandler github.com/argoproj/argo-rollouts/analysis.(*Controller).syncHandler
func syncHandler(c *analysis.Controller, ctx context.Context, key string) error

const (
	runNamespace = "argo-oracle"
	runName      = "run"
	// maxReconciles bounds one run; a run that has not stopped by then answers stop "limit".
	maxReconciles = 10000
	// wakeLag is how late a delayed work-queue item is handled. Argo wakes a run exactly when the next
	// measurement is due and then asks timeutil.Now().After(finishedAt+interval), which is false at
	// the very instant; a real queue is always a little late, so we are too.
	wakeLag = time.Millisecond
)

// runStart is the fake clock's start, a whole second so persisted times (RFC 3339 seconds) are exact.
var runStart = time.Unix(1700000000, 0).UTC()

// runRequest is the input of mode "run".
type runRequest struct {
	DryRun               []v1alpha1.DryRun               `json:"dryRun"`
	MeasurementRetention []v1alpha1.MeasurementRetention `json:"measurementRetention"`
	Args                 []v1alpha1.Argument             `json:"args"`
	Metrics              []scriptedMetric                `json:"metrics"`
}

// scriptedMetric is an Argo Metric (its provider is set by us) and what Prometheus answers it, in order.
type scriptedMetric struct {
	Metric       json.RawMessage `json:"metric"`
	Measurements []measurement   `json:"measurements"`
}

// fakeClock is the time Argo reads through utils/time; it moves only between reconciles.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }

// wakeQueue is the controller's work queue with AddAfter recorded: like client-go's delaying queue
// it keeps, per key, the earliest time asked for. The run loop reads it to move the clock.
type wakeQueue struct {
	workqueue.RateLimitingInterface
	clock *fakeClock
	mu    sync.Mutex
	wake  *time.Time
}

func (q *wakeQueue) AddAfter(item any, d time.Duration) {
	at := q.clock.Now().Add(d)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.wake == nil || at.Before(*q.wake) {
		q.wake = &at
	}
}

// pop returns the pending wake-up, if any, and forgets it.
func (q *wakeQueue) pop() (time.Time, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.wake == nil {
		return time.Time{}, false
	}
	at := *q.wake
	q.wake = nil
	return at, true
}

// dropDue forgets a wake-up due by now: the queue holds a key once, so it merges with this reconcile.
func (q *wakeQueue) dropDue(now time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.wake != nil && !q.wake.After(now) {
		q.wake = nil
	}
}

// Process-wide pieces of the controller. Argo's fake recorder buffers events in a channel of 1000
// and blocks when it is full, so one recorder is kept and drained after every reconcile.
var (
	clock       = &fakeClock{now: runStart}
	recorder    *record.FakeEventRecorder
	k8sEvents   chan string
	metricsSrv  *metrics.MetricsServer
	sharedSetup sync.Once
)

func setupShared() {
	timeutil.SetNowTimeFunc(clock.Now)
	recorder = record.NewFakeEventRecorder()
	k8sEvents = recorder.Recorder.(*k8srecord.FakeRecorder).Events
	// Never served: syncHandler only observes its reconcile-duration histogram.
	metricsSrv = metrics.NewMetricsServer(metrics.ServerConfig{Addr: "127.0.0.1:0", K8SRequestProvider: &metrics.K8sRequestsCountProvider{}})
}

func drainEvents() []string {
	var got []string
	for {
		select {
		case e := <-k8sEvents:
			got = append(got, e)
		default:
			return got
		}
	}
}

// buildRun makes the AnalysisRun and the scripts: each metric queries the scripted Prometheus with
// its own name; interval is "1s" unless the metric names one (even "", which Argo reads as "measure
// once").
func buildRun(req runRequest, prom *scriptedPrometheus) (*v1alpha1.AnalysisRun, map[string][]measurement, error) {
	if len(req.Metrics) == 0 {
		return nil, nil, fmt.Errorf(`mode "run" needs "metrics"`)
	}
	run := &v1alpha1.AnalysisRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: runNamespace, Name: runName, UID: "argo-oracle-run"},
		Spec: v1alpha1.AnalysisRunSpec{
			Args:                 req.Args,
			DryRun:               req.DryRun,
			MeasurementRetention: req.MeasurementRetention,
		},
	}
	scripts := map[string][]measurement{}
	for i, sm := range req.Metrics {
		var m v1alpha1.Metric
		if err := json.Unmarshal(sm.Metric, &m); err != nil {
			return nil, nil, fmt.Errorf("metrics[%d].metric: %v", i, err)
		}
		var fields map[string]json.RawMessage
		_ = json.Unmarshal(sm.Metric, &fields)
		if _, set := fields["interval"]; !set {
			m.Interval = "1s"
		}
		// Keep a given provider.prometheus (timeout, rangeQuery...), pointed at our server; drop any other.
		prometheus := m.Provider.Prometheus
		if prometheus == nil {
			prometheus = &v1alpha1.PrometheusMetric{}
		}
		prometheus.Address = prom.URL()
		prometheus.Query = m.Name
		m.Provider = v1alpha1.MetricProvider{Prometheus: prometheus}
		for j, ms := range sm.Measurements {
			if err := ms.validate(); err != nil {
				return nil, nil, fmt.Errorf("metrics[%d].measurements[%d]: %v", i, j, err)
			}
		}
		if _, dup := scripts[m.Name]; dup {
			// Argo refuses the run ("duplicate name") before it queries anything; keep the first script.
			run.Spec.Metrics = append(run.Spec.Metrics, m)
			continue
		}
		scripts[m.Name] = sm.Measurements
		run.Spec.Metrics = append(run.Spec.Metrics, m)
	}
	return run, scripts, nil
}

// runAnalysis drives Argo's analysis controller over one AnalysisRun the way its work queue would:
// a reconcile when the run is created, again right after each status patch (the informer's update
// event), and at the time each reconcile asked to be woken (AddAfter), the fake clock moved there.
// It stops when the run's phase is completed, when no wake-up is pending, or before the first
// reconcile that queries a metric whose script is used up (that reconcile is undone: the answer is
// the run as it stood before it).
func runAnalysis(req runRequest, prom *scriptedPrometheus) (map[string]any, error) {
	sharedSetup.Do(setupShared)
	run, scripts, err := buildRun(req, prom)
	if err != nil {
		return nil, err
	}
	prom.load(scripts)
	clock.Set(runStart)
	drainEvents()

	client := fake.NewSimpleClientset(run)
	kube := k8sfake.NewSimpleClientset()
	arInformers := informers.NewSharedInformerFactory(client, 0)
	kubeInformers := kubeinformers.NewSharedInformerFactory(kube, 0)
	q := &wakeQueue{RateLimitingInterface: workqueue.NewRateLimitingQueue(queue.DefaultArgoRolloutsRateLimiter()), clock: clock}
	defer q.ShutDown()
	c := analysis.NewController(analysis.ControllerConfig{
		KubeClientSet:        kube,
		ArgoProjClientset:    client,
		AnalysisRunInformer:  arInformers.Argoproj().V1alpha1().AnalysisRuns(),
		JobInformer:          kubeInformers.Batch().V1().Jobs(),
		JobPodsInformer:      kubeInformers.Core().V1().Pods(),
		AnalysisRunWorkQueue: q,
		MetricsServer:        metricsSrv,
		Recorder:             recorder,
	})
	// The informer is not started: before each reconcile we put the stored run into its cache,
	// as a caught-up informer would have it.
	indexer := arInformers.Argoproj().V1alpha1().AnalysisRuns().Informer().GetIndexer()
	ctx := context.Background()
	key := runNamespace + "/" + runName

	stored := func() (*v1alpha1.AnalysisRun, error) {
		return client.ArgoprojV1alpha1().AnalysisRuns(runNamespace).Get(ctx, runName, metav1.GetOptions{})
	}
	patches := func() int {
		n := 0
		for _, a := range client.Actions() {
			if a.GetVerb() == "patch" {
				n++
			}
		}
		return n
	}

	var events []string
	immediate := true // the informer's add event for the new run
	reconciles := 0
	stop := ""
	current, err := stored()
	if err != nil {
		return nil, err
	}
	for {
		if current.Status.Phase.Completed() {
			stop = "completed"
			break
		}
		if reconciles >= maxReconciles {
			stop = "limit"
			break
		}
		if immediate {
			immediate = false
			q.dropDue(clock.Now())
		} else {
			at, ok := q.pop()
			if !ok {
				stop = "idle"
				break
			}
			if at.Before(clock.Now()) {
				at = clock.Now()
			}
			clock.Set(at.Add(wakeLag))
		}

		served := prom.servedCounts()
		before := patches()
		if err := indexer.Update(current); err != nil {
			return nil, err
		}
		syncErr := syncHandler(c, ctx, key)
		reconciles++
		newEvents := drainEvents()
		if over := prom.takeOverrun(); len(over) > 0 {
			prom.rewind(served)
			reconciles--
			stop = "exhausted"
			break
		}
		if syncErr != nil {
			return nil, fmt.Errorf("reconcile %d: %v", reconciles, syncErr)
		}
		events = append(events, newEvents...)
		if patches() > before {
			immediate = true
		}
		if current, err = stored(); err != nil {
			return nil, err
		}
	}
	return describeRun(current, req, prom.servedCounts(), events, reconciles, stop), nil
}

// describeRun answers with the run's status as Argo recorded it; metrics in the order of the spec
// (Argo appends results in the order its parallel measurements finish), those without a result left out.
func describeRun(run *v1alpha1.AnalysisRun, req runRequest, served map[string]int, events []string, reconciles int, stop string) map[string]any {
	results := []map[string]any{}
	for _, m := range run.Spec.Metrics {
		var r *v1alpha1.MetricResult
		for i := range run.Status.MetricResults {
			if run.Status.MetricResults[i].Name == m.Name {
				r = &run.Status.MetricResults[i]
				break
			}
		}
		if r == nil {
			continue
		}
		ms := []map[string]any{}
		for _, x := range r.Measurements {
			entry := map[string]any{"phase": string(x.Phase), "value": x.Value, "message": x.Message}
			if x.FinishedAt != nil {
				entry["at"] = x.FinishedAt.Sub(runStart).Seconds()
			}
			ms = append(ms, entry)
		}
		results = append(results, map[string]any{
			"name": r.Name, "phase": string(r.Phase), "message": r.Message, "dryRun": r.DryRun,
			"count": r.Count, "successful": r.Successful, "failed": r.Failed, "inconclusive": r.Inconclusive,
			"error": r.Error, "consecutiveError": r.ConsecutiveError, "consecutiveSuccess": r.ConsecutiveSuccess,
			"measurements": ms, "served": served[r.Name],
		})
	}
	evs := []map[string]string{}
	for _, e := range events {
		// k8s FakeRecorder writes "<type> <reason> <message>".
		parts := strings.SplitN(e, " ", 3)
		for len(parts) < 3 {
			parts = append(parts, "")
		}
		evs = append(evs, map[string]string{"type": parts[0], "reason": parts[1], "message": parts[2]})
	}
	return map[string]any{
		"phase": string(run.Status.Phase), "message": run.Status.Message, "metrics": results,
		"events": evs, "reconciles": reconciles, "stop": stop,
	}
}
