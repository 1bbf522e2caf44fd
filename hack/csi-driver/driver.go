package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// minBytes: an ext4 filesystem with a journal wants a few MiB; a smaller request gets this much.
const minBytes = 16 << 20

// record is what the driver keeps beside each image: enough to answer a repeated call the same way
// (CSI calls are retried, and each must be idempotent by name).
type record struct {
	Name      string    `json:"name"`
	ID        string    `json:"id"`
	Bytes     int64     `json:"bytes"`
	Source    string    `json:"source,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	// Targets: where a volume is published now (its mounts), so a snapshot freezes the right one.
	Targets []string `json:"targets,omitempty"`
}

type driver struct {
	csi.UnimplementedIdentityServer
	csi.UnimplementedControllerServer
	csi.UnimplementedNodeServer
	name, node, dir string
	// One operation at a time: a snapshot's freeze and copy must not meet an unpublish of the same volume.
	mu sync.Mutex
}

func newDriver(name, node, dir string) (*driver, error) {
	for _, sub := range []string{"volumes", "snapshots"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			return nil, err
		}
	}
	return &driver{name: name, node: node, dir: dir}, nil
}

// idOf derives an ID from a CSI name: a retried call with the same name finds the same files.
func idOf(prefix, name string) string {
	h := sha256.Sum256([]byte(name))
	return prefix + hex.EncodeToString(h[:8])
}

func (d *driver) image(kind, id string) string { return filepath.Join(d.dir, kind, id+".img") }
func (d *driver) meta(kind, id string) string  { return filepath.Join(d.dir, kind, id+".json") }

func (d *driver) load(kind, id string) (*record, error) {
	b, err := os.ReadFile(d.meta(kind, id))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r record
	return &r, json.Unmarshal(b, &r)
}

func (d *driver) save(kind string, r *record) error {
	b, _ := json.Marshal(r)
	tmp := d.meta(kind, r.ID) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, d.meta(kind, r.ID))
}

func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Identity

func (d *driver) GetPluginInfo(context.Context, *csi.GetPluginInfoRequest) (*csi.GetPluginInfoResponse, error) {
	return &csi.GetPluginInfoResponse{Name: d.name, VendorVersion: "0.1.0"}, nil
}

func (d *driver) GetPluginCapabilities(context.Context, *csi.GetPluginCapabilitiesRequest) (*csi.GetPluginCapabilitiesResponse, error) {
	return &csi.GetPluginCapabilitiesResponse{Capabilities: []*csi.PluginCapability{{Type: &csi.PluginCapability_Service_{Service: &csi.PluginCapability_Service{Type: csi.PluginCapability_Service_CONTROLLER_SERVICE}}}}}, nil
}

func (d *driver) Probe(context.Context, *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	return &csi.ProbeResponse{}, nil
}

// Controller

func (d *driver) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	var caps []*csi.ControllerServiceCapability
	for _, t := range []csi.ControllerServiceCapability_RPC_Type{csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME, csi.ControllerServiceCapability_RPC_CREATE_DELETE_SNAPSHOT, csi.ControllerServiceCapability_RPC_LIST_SNAPSHOTS} {
		caps = append(caps, &csi.ControllerServiceCapability{Type: &csi.ControllerServiceCapability_Rpc{Rpc: &csi.ControllerServiceCapability_RPC{Type: t}}})
	}
	return &csi.ControllerGetCapabilitiesResponse{Capabilities: caps}, nil
}

func (d *driver) CreateVolume(_ context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	if req.GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "no name")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	bytes := req.GetCapacityRange().GetRequiredBytes()
	if bytes < minBytes {
		bytes = minBytes
	}
	if err := mountOnly(req.GetVolumeCapabilities()); err != nil {
		return nil, err
	}
	// A clone (a volume as the source) is not offered (no CLONE_VOLUME capability): refuse it rather
	// than hand back an empty volume.
	if req.GetVolumeContentSource().GetVolume() != nil {
		return nil, status.Error(codes.InvalidArgument, "cloning a volume is not supported")
	}
	src := req.GetVolumeContentSource().GetSnapshot().GetSnapshotId()
	id := idOf("vol-", req.GetName())
	if r, err := d.load("volumes", id); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	} else if r != nil {
		if r.Bytes < bytes || r.Source != src {
			return nil, status.Errorf(codes.AlreadyExists, "volume %s exists with another size or source", req.GetName())
		}
		return d.volumeResponse(r, req.GetVolumeContentSource()), nil
	}
	img := d.image("volumes", id)
	if src != "" {
		snap, err := d.load("snapshots", src)
		if err != nil || snap == nil {
			return nil, status.Errorf(codes.NotFound, "snapshot %s not found", src)
		}
		if err := run("cp", "--sparse=always", d.image("snapshots", src), img); err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
		if bytes > snap.Bytes {
			// Grow the image and its filesystem to the size asked for.
			if err := growTo(img, bytes); err != nil {
				_ = os.Remove(img)
				return nil, status.Error(codes.Internal, err.Error())
			}
		} else {
			bytes = snap.Bytes
		}
	} else {
		if err := os.WriteFile(img, nil, 0o600); err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
		if err := os.Truncate(img, bytes); err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
		if err := run("mkfs.ext4", "-q", "-F", "-m", "0", img); err != nil {
			_ = os.Remove(img)
			return nil, status.Error(codes.Internal, err.Error())
		}
	}
	r := &record{Name: req.GetName(), ID: id, Bytes: bytes, Source: src, CreatedAt: time.Now()}
	if err := d.save("volumes", r); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return d.volumeResponse(r, req.GetVolumeContentSource()), nil
}

func growTo(img string, bytes int64) error {
	if err := os.Truncate(img, bytes); err != nil {
		return err
	}
	// resize2fs wants a checked filesystem; e2fsck exits 1 when it fixed something, which is fine here.
	_ = run("e2fsck", "-f", "-y", img)
	return run("resize2fs", img)
}

func (d *driver) volumeResponse(r *record, src *csi.VolumeContentSource) *csi.CreateVolumeResponse {
	return &csi.CreateVolumeResponse{Volume: &csi.Volume{VolumeId: r.ID, CapacityBytes: r.Bytes, ContentSource: src}}
}

func (d *driver) DeleteVolume(_ context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	r, err := d.load("volumes", req.GetVolumeId())
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if r != nil && len(r.Targets) > 0 {
		return nil, status.Errorf(codes.FailedPrecondition, "volume %s is published at %v", r.ID, r.Targets)
	}
	_ = os.Remove(d.image("volumes", req.GetVolumeId()))
	_ = os.Remove(d.meta("volumes", req.GetVolumeId()))
	return &csi.DeleteVolumeResponse{}, nil
}

func (d *driver) ValidateVolumeCapabilities(_ context.Context, req *csi.ValidateVolumeCapabilitiesRequest) (*csi.ValidateVolumeCapabilitiesResponse, error) {
	r, err := d.load("volumes", req.GetVolumeId())
	if err != nil || r == nil {
		return nil, status.Errorf(codes.NotFound, "volume %s not found", req.GetVolumeId())
	}
	if err := mountOnly(req.GetVolumeCapabilities()); err != nil {
		return &csi.ValidateVolumeCapabilitiesResponse{Message: err.Error()}, nil
	}
	return &csi.ValidateVolumeCapabilitiesResponse{Confirmed: &csi.ValidateVolumeCapabilitiesResponse_Confirmed{VolumeCapabilities: req.GetVolumeCapabilities()}}, nil
}

// mountOnly refuses raw block access: a volume is a filesystem in an image, published by a loop mount.
func mountOnly(caps []*csi.VolumeCapability) error {
	for _, c := range caps {
		if c.GetBlock() != nil {
			return status.Error(codes.InvalidArgument, "only filesystem volumes (volumeMode: Filesystem) are supported")
		}
	}
	return nil
}

// CreateSnapshot copies the volume's image while its filesystem is frozen: the cut is the freeze.
func (d *driver) CreateSnapshot(_ context.Context, req *csi.CreateSnapshotRequest) (*csi.CreateSnapshotResponse, error) {
	if req.GetName() == "" || req.GetSourceVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "no name or source volume")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	id := idOf("snap-", req.GetName())
	if s, err := d.load("snapshots", id); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	} else if s != nil {
		if s.Source != req.GetSourceVolumeId() {
			return nil, status.Errorf(codes.AlreadyExists, "snapshot %s exists of another volume", req.GetName())
		}
		return snapshotResponse(s), nil
	}
	vol, err := d.load("volumes", req.GetSourceVolumeId())
	if err != nil || vol == nil {
		return nil, status.Errorf(codes.NotFound, "volume %s not found", req.GetSourceVolumeId())
	}
	var frozen []string
	defer func() {
		for _, t := range frozen {
			// Always thaw: a filesystem left frozen blocks every write of the pod that uses it.
			if err := run("fsfreeze", "-u", t); err != nil {
				log.Printf("thaw %s: %v", t, err)
			}
		}
	}()
	// One mount is enough to freeze the filesystem (a volume published twice is the same filesystem).
	if len(vol.Targets) > 0 {
		if err := run("fsfreeze", "-f", vol.Targets[0]); err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
		frozen = append(frozen, vol.Targets[0])
	}
	cut := time.Now()
	tmp := d.image("snapshots", id) + ".tmp"
	if err := run("cp", "--sparse=always", d.image("volumes", vol.ID), tmp); err != nil {
		_ = os.Remove(tmp)
		return nil, status.Error(codes.Internal, err.Error())
	}
	if err := os.Rename(tmp, d.image("snapshots", id)); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	s := &record{Name: req.GetName(), ID: id, Bytes: vol.Bytes, Source: vol.ID, CreatedAt: cut}
	if err := d.save("snapshots", s); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return snapshotResponse(s), nil
}

func snapshotResponse(s *record) *csi.CreateSnapshotResponse {
	return &csi.CreateSnapshotResponse{Snapshot: snapshotOf(s)}
}

func snapshotOf(s *record) *csi.Snapshot {
	return &csi.Snapshot{SnapshotId: s.ID, SourceVolumeId: s.Source, SizeBytes: s.Bytes, CreationTime: timestamppb.New(s.CreatedAt), ReadyToUse: true}
}

func (d *driver) DeleteSnapshot(_ context.Context, req *csi.DeleteSnapshotRequest) (*csi.DeleteSnapshotResponse, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	_ = os.Remove(d.image("snapshots", req.GetSnapshotId()))
	_ = os.Remove(d.meta("snapshots", req.GetSnapshotId()))
	return &csi.DeleteSnapshotResponse{}, nil
}

func (d *driver) ListSnapshots(_ context.Context, req *csi.ListSnapshotsRequest) (*csi.ListSnapshotsResponse, error) {
	var out []*csi.ListSnapshotsResponse_Entry
	metas, _ := filepath.Glob(filepath.Join(d.dir, "snapshots", "*.json"))
	for _, m := range metas {
		s, err := d.load("snapshots", strings.TrimSuffix(filepath.Base(m), ".json"))
		if err != nil || s == nil {
			continue
		}
		if (req.GetSnapshotId() != "" && s.ID != req.GetSnapshotId()) || (req.GetSourceVolumeId() != "" && s.Source != req.GetSourceVolumeId()) {
			continue
		}
		out = append(out, &csi.ListSnapshotsResponse_Entry{Snapshot: snapshotOf(s)})
	}
	return &csi.ListSnapshotsResponse{Entries: out}, nil
}

// Node

func (d *driver) NodeGetInfo(context.Context, *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	return &csi.NodeGetInfoResponse{NodeId: d.node}, nil
}

func (d *driver) NodeGetCapabilities(context.Context, *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	return &csi.NodeGetCapabilitiesResponse{}, nil
}

func mounted(target string) bool {
	return exec.Command("mountpoint", "-q", target).Run() == nil
}

// NodePublishVolume loop-mounts the volume's image at the pod's target path (no staging: one mount per pod).
func (d *driver) NodePublishVolume(_ context.Context, req *csi.NodePublishVolumeRequest) (*csi.NodePublishVolumeResponse, error) {
	target := req.GetTargetPath()
	if target == "" {
		return nil, status.Error(codes.InvalidArgument, "no target path")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	vol, err := d.load("volumes", req.GetVolumeId())
	if err != nil || vol == nil {
		return nil, status.Errorf(codes.NotFound, "volume %s not found", req.GetVolumeId())
	}
	if err := os.MkdirAll(target, 0o750); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if !mounted(target) {
		opts := "loop"
		if req.GetReadonly() {
			opts += ",ro"
		}
		if err := run("mount", "-o", opts, d.image("volumes", vol.ID), target); err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
	}
	if !contains(vol.Targets, target) {
		vol.Targets = append(vol.Targets, target)
		if err := d.save("volumes", vol); err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
	}
	return &csi.NodePublishVolumeResponse{}, nil
}

func (d *driver) NodeUnpublishVolume(_ context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	target := req.GetTargetPath()
	d.mu.Lock()
	defer d.mu.Unlock()
	if mounted(target) {
		// A loop mount made with -o loop detaches its loop device when unmounted (autoclear).
		if err := run("umount", target); err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
	}
	_ = os.Remove(target)
	if vol, err := d.load("volumes", req.GetVolumeId()); err == nil && vol != nil {
		vol.Targets = without(vol.Targets, target)
		_ = d.save("volumes", vol)
	}
	return &csi.NodeUnpublishVolumeResponse{}, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func without(xs []string, x string) []string {
	var out []string
	for _, y := range xs {
		if y != x {
			out = append(out, y)
		}
	}
	return out
}
