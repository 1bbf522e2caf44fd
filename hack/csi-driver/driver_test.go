package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

var ctx = context.Background()

// mount is the capability the provisioner sends for a Filesystem claim.
var mount = []*csi.VolumeCapability{{AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}}, AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}}

func newTestDriver(t *testing.T) *driver {
	t.Helper()
	if _, err := exec.LookPath("mkfs.ext4"); err != nil {
		t.Skip("no mkfs.ext4 on this machine")
	}
	d, err := newDriver("csi.test", "node", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func codeOf(err error) codes.Code { return status.Code(err) }

func createVolume(t *testing.T, d *driver, name string, bytes int64, snap string) *csi.Volume {
	t.Helper()
	req := &csi.CreateVolumeRequest{Name: name, CapacityRange: &csi.CapacityRange{RequiredBytes: bytes}, VolumeCapabilities: mount}
	if snap != "" {
		req.VolumeContentSource = &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: snap}}}
	}
	r, err := d.CreateVolume(ctx, req)
	if err != nil {
		t.Fatalf("CreateVolume %s: %v", name, err)
	}
	return r.GetVolume()
}

// The CSI spec: a repeated call with the same name and arguments answers the same; other arguments
// under a taken name are AlreadyExists.
func TestCreateVolumeIsIdempotentByName(t *testing.T) {
	d := newTestDriver(t)
	a := createVolume(t, d, "pvc-a", 20<<20, "")
	b := createVolume(t, d, "pvc-a", 20<<20, "")
	if a.GetVolumeId() != b.GetVolumeId() || a.GetCapacityBytes() != 20<<20 {
		t.Fatalf("second call: %v, first: %v", b, a)
	}
	_, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-a", CapacityRange: &csi.CapacityRange{RequiredBytes: 64 << 20}, VolumeCapabilities: mount})
	if codeOf(err) != codes.AlreadyExists {
		t.Fatalf("a bigger volume under the same name: %v, want AlreadyExists", err)
	}
	if small := createVolume(t, d, "pvc-small", 1<<20, ""); small.GetCapacityBytes() != minBytes {
		t.Fatalf("a 1 MiB request got %d bytes, want the minimum %d", small.GetCapacityBytes(), minBytes)
	}
}

func TestCreateVolumeRefusesBlockAndClones(t *testing.T) {
	d := newTestDriver(t)
	block := []*csi.VolumeCapability{{AccessType: &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}}}}
	if _, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "b", VolumeCapabilities: block}); codeOf(err) != codes.InvalidArgument {
		t.Fatalf("block: %v, want InvalidArgument", err)
	}
	clone := &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Volume{Volume: &csi.VolumeContentSource_VolumeSource{VolumeId: "vol-x"}}}
	if _, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "c", VolumeCapabilities: mount, VolumeContentSource: clone}); codeOf(err) != codes.InvalidArgument {
		t.Fatalf("clone: %v, want InvalidArgument", err)
	}
}

func TestSnapshotIsIdempotentAndListed(t *testing.T) {
	d := newTestDriver(t)
	v := createVolume(t, d, "pvc-a", 20<<20, "")
	w := createVolume(t, d, "pvc-b", 20<<20, "")
	s1, err := d.CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "snap-1", SourceVolumeId: v.GetVolumeId()})
	if err != nil {
		t.Fatal(err)
	}
	s2, err := d.CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "snap-1", SourceVolumeId: v.GetVolumeId()})
	if err != nil {
		t.Fatal(err)
	}
	// The retry must not take a new cut: the same ID and the same creation time.
	if s1.Snapshot.SnapshotId != s2.Snapshot.SnapshotId || !s1.Snapshot.CreationTime.AsTime().Equal(s2.Snapshot.CreationTime.AsTime()) || !s2.Snapshot.ReadyToUse {
		t.Fatalf("retry: %v, first: %v", s2.Snapshot, s1.Snapshot)
	}
	if _, err := d.CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "snap-1", SourceVolumeId: w.GetVolumeId()}); codeOf(err) != codes.AlreadyExists {
		t.Fatalf("the same name of another volume: %v, want AlreadyExists", err)
	}
	l, err := d.ListSnapshots(ctx, &csi.ListSnapshotsRequest{SourceVolumeId: v.GetVolumeId()})
	if err != nil || len(l.Entries) != 1 || l.Entries[0].Snapshot.SnapshotId != s1.Snapshot.SnapshotId {
		t.Fatalf("ListSnapshots: %v %v", l, err)
	}
	for i := 0; i < 2; i++ { // deleting twice is fine
		if _, err := d.DeleteSnapshot(ctx, &csi.DeleteSnapshotRequest{SnapshotId: s1.Snapshot.SnapshotId}); err != nil {
			t.Fatal(err)
		}
	}
	if l, _ := d.ListSnapshots(ctx, &csi.ListSnapshotsRequest{}); len(l.Entries) != 0 {
		t.Fatalf("after delete: %v", l.Entries)
	}
}

// The whole path on a mounted volume (root only: loop mounts and fsfreeze): a file written before the
// snapshot is in a volume restored from it, one written after is not, and the restored volume has the
// size asked for.
func TestSnapshotOfAMountedVolumeRestores(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("loop mounts need root")
	}
	d := newTestDriver(t)
	v := createVolume(t, d, "pvc-a", 20<<20, "")
	target := filepath.Join(t.TempDir(), "a")
	publish(t, d, v.GetVolumeId(), target)
	if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: v.GetVolumeId()}); codeOf(err) != codes.FailedPrecondition {
		t.Fatalf("deleting a published volume: %v, want FailedPrecondition", err)
	}
	write(t, filepath.Join(target, "before"))
	s, err := d.CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "snap", SourceVolumeId: v.GetVolumeId()})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(target, "after")) // thawed: a frozen filesystem would block here
	r := createVolume(t, d, "pvc-r", 40<<20, s.Snapshot.SnapshotId)
	restored := filepath.Join(t.TempDir(), "r")
	publish(t, d, r.GetVolumeId(), restored)
	if _, err := os.Stat(filepath.Join(restored, "before")); err != nil {
		t.Fatalf("the file written before the snapshot: %v", err)
	}
	if _, err := os.Stat(filepath.Join(restored, "after")); !os.IsNotExist(err) {
		t.Fatalf("the file written after the snapshot is in the restored volume (%v)", err)
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(restored, &fs); err != nil || int64(fs.Blocks)*fs.Bsize < 30<<20 {
		t.Fatalf("the restored filesystem was not grown to 40 MiB: %d bytes (%v)", int64(fs.Blocks)*fs.Bsize, err)
	}
	for id, tgt := range map[string]string{v.GetVolumeId(): target, r.GetVolumeId(): restored} {
		for i := 0; i < 2; i++ { // unpublishing twice is fine
			if _, err := d.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: id, TargetPath: tgt}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: id}); err != nil {
			t.Fatal(err)
		}
	}
}

func publish(t *testing.T, d *driver, id, target string) {
	t.Helper()
	req := &csi.NodePublishVolumeRequest{VolumeId: id, TargetPath: target, VolumeCapability: mount[0]}
	for i := 0; i < 2; i++ { // publishing twice is one mount
		if _, err := d.NodePublishVolume(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_, _ = d.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: id, TargetPath: target})
	})
}

func write(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(filepath.Dir(path))
	defer f.Close()
	_ = f.Sync()
}
