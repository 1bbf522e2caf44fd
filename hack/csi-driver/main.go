// A small CSI driver of the project's own, for the end-to-end tests of checkpoints on the real node
// (hack/csi.sh runs it beside the node's kubelet, with the external-snapshotter and external-provisioner
// sidecars). csi-driver-host-path and node-driver-registrar are not served by the Go module proxy here,
// so this driver is both: a CSI plugin (Identity, Controller, Node) and its own registrar with the
// kubelet's plugin watcher.
//
// A volume is an ext4 filesystem in an image file; publishing it loop-mounts the image at the pod's
// target path. A snapshot is a copy of the image taken while the filesystem is frozen (fsfreeze), so it
// is one consistent cut of the volume's files, as a cloud disk snapshot is (crash-consistent). A volume
// from a snapshot is a copy of the snapshot's image, grown if asked for more.
package main

import (
	"context"
	"flag"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

func main() {
	name := flag.String("name", "csi.phased-rollout.io", "the driver's name (the StorageClass's provisioner)")
	endpoint := flag.String("endpoint", "", "the CSI socket (a path)")
	registry := flag.String("registration-dir", "", "the kubelet's plugins_registry folder (empty: do not register with a kubelet)")
	data := flag.String("data-dir", "", "where volumes and snapshots are kept")
	node := flag.String("node-id", "", "the Node's name")
	flag.Parse()
	if *endpoint == "" || *data == "" || *node == "" {
		log.Fatal("--endpoint, --data-dir and --node-id are required")
	}
	d, err := newDriver(*name, *node, *data)
	if err != nil {
		log.Fatal(err)
	}
	csiServer := grpc.NewServer(grpc.UnaryInterceptor(logCalls))
	csi.RegisterIdentityServer(csiServer, d)
	csi.RegisterControllerServer(csiServer, d)
	csi.RegisterNodeServer(csiServer, d)
	stop := []func(){serve(csiServer, *endpoint)}
	if *registry != "" {
		reg := grpc.NewServer()
		registerapi.RegisterRegistrationServer(reg, &registrar{name: *name, endpoint: *endpoint})
		stop = append(stop, serve(reg, filepath.Join(*registry, *name+"-reg.sock")))
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	for _, s := range stop {
		s()
	}
}

// serve listens on a unix socket (a stale one from an earlier run is removed first) and returns the stop.
func serve(s *grpc.Server, path string) func() {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		log.Fatal(err)
	}
	_ = os.Remove(path)
	l, err := net.Listen("unix", path)
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		if err := s.Serve(l); err != nil {
			log.Printf("serve %s: %v", path, err)
		}
	}()
	log.Printf("serving on %s", path)
	return func() { s.GracefulStop(); _ = os.Remove(path) }
}

// logCalls logs every call but the probes, with how long it took (a snapshot's freeze and copy is the
// time a checkpoint adds) and, for a failure, why: the sidecars' logs say little more than the code.
func logCalls(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	t0 := time.Now()
	resp, err := handler(ctx, req)
	took := time.Since(t0).Round(time.Millisecond)
	if err != nil {
		log.Printf("%s: %v (%s)", info.FullMethod, err, took)
	} else if info.FullMethod != "/csi.v1.Identity/Probe" {
		log.Printf("%s: ok (%s)", info.FullMethod, took)
	}
	return resp, err
}

// registrar answers the kubelet's plugin watcher: a CSI plugin of this name, at this endpoint.
type registrar struct {
	registerapi.UnimplementedRegistrationServer
	name, endpoint string
}

func (r *registrar) GetInfo(context.Context, *registerapi.InfoRequest) (*registerapi.PluginInfo, error) {
	return &registerapi.PluginInfo{Type: registerapi.CSIPlugin, Name: r.name, Endpoint: r.endpoint, SupportedVersions: []string{"1.0.0"}}, nil
}

func (r *registrar) NotifyRegistrationStatus(_ context.Context, s *registerapi.RegistrationStatus) (*registerapi.RegistrationStatusResponse, error) {
	if !s.PluginRegistered {
		log.Printf("the kubelet did not register the plugin: %s", s.Error)
	} else {
		log.Printf("registered with the kubelet")
	}
	return &registerapi.RegistrationStatusResponse{}, nil
}
