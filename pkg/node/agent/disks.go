package agent

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/convert"
	"github.com/nativevirt/nativevirt/pkg/node/podfs"
)

// File names inside the disks volume, per volume (the converter points the
// domain at the same names inside the pod).
const (
	// DiskImage is a volume's disk image: containerDisk copies and emptyDisks.
	DiskImage = "disk.img"
	// CloudInitISO is a cloud-init volume's ISO image.
	CloudInitISO = "cloudinit.iso"
)

var qcow2Magic = []byte{'Q', 'F', 'I', 0xfb}

// domainPreparer prepares what a launcher pod needs before a domain is
// defined there or migrated into it: local disks, the pod network and the
// node's QEMU capabilities.
type domainPreparer struct {
	secrets      secretReader
	cloudInitISO CloudInitISOFunc
	// createOverlay creates qcow2 overlays (nil: containerDisks that need one fail).
	createOverlay func(overlay, backing, backingFormat string) error
	// prepareNetwork prepares the pod network (nil: nothing to prepare).
	prepareNetwork PrepareNetworkFunc
	// seedCapabilities seeds libvirt's QEMU capabilities (nil: libvirt probes).
	seed SeedCapabilitiesFunc
}

// disks creates what the domain's local volumes need in the disks
// volume of the launcher: qcow2 overlays over the containerDisk images the
// copy containers copied, sparse emptyDisk images and cloud-init ISOs; and it
// reports the format of the containerDisk images. It runs before a domain is
// defined and started, and on a migration target before the migration (whose
// block copy then fills the overlays and emptyDisks); it never overwrites an
// overlay or an emptyDisk a guest may already have written.
func (p *domainPreparer) disks(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, disks *podfs.Dir) (DomainFacts, error) {
	facts := DomainFacts{DiskFormats: map[string]string{}}
	for _, v := range vmi.Spec.Volumes {
		dir := disks.Path(v.Name)
		switch {
		case v.ContainerDisk != nil:
			format, err := imageFormat(path.Join(dir, DiskImage))
			if err != nil {
				return facts, fmt.Errorf("containerDisk %s: %w", v.Name, err)
			}
			facts.DiskFormats[v.Name] = format
			if convert.NeedsOverlay(vmi, v.Name) {
				if err := p.overlay(disks, v.Name, format); err != nil {
					return facts, fmt.Errorf("containerDisk %s: %w", v.Name, err)
				}
			}
		case v.EmptyDisk != nil:
			if err := createSparse(dir, v.EmptyDisk.Capacity.Value()); err != nil {
				return facts, fmt.Errorf("emptyDisk %s: %w", v.Name, err)
			}
			facts.DiskFormats[v.Name] = "raw"
		case v.CloudInitNoCloud != nil, v.CloudInitConfigDrive != nil:
			if err := p.writeCloudInit(ctx, vmi, v, dir); err != nil {
				return facts, fmt.Errorf("cloud-init volume %s: %w", v.Name, err)
			}
		}
	}
	return facts, nil
}

// overlay creates <volume>/overlay.qcow2 over <volume>/disk.img
// unless it exists.
func (p *domainPreparer) overlay(disks *podfs.Dir, volume, format string) error {
	overlay := path.Join(volume, convert.OverlayFile)
	if disks.Exists(overlay) {
		return nil
	}
	if p.createOverlay == nil {
		return fmt.Errorf("no way to create the overlay %s", disks.HostPath(overlay))
	}
	// Created under a temporary name: a crash midway leaves no half image
	// that a later attempt would take for a good one.
	tmp := path.Join(volume, "."+convert.OverlayFile+".tmp")
	if err := p.createOverlay(disks.HostPath(tmp), disks.HostPath(path.Join(volume, DiskImage)), format); err != nil {
		return fmt.Errorf("creating the overlay: %w", err)
	}
	return os.Rename(disks.Path(tmp), disks.Path(overlay))
}

// imageFormat tells qcow2 from raw by the image's magic number.
func imageFormat(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	head := make([]byte, len(qcow2Magic))
	if _, err := io.ReadFull(f, head); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", err
	}
	if bytes.Equal(head, qcow2Magic) {
		return "qcow2", nil
	}
	return "raw", nil
}

// createSparse creates dir/disk.img of size bytes unless it exists (a
// restarted agent must not wipe a disk the guest already wrote).
func createSparse(dir string, size int64) error {
	if size <= 0 {
		return fmt.Errorf("capacity must be positive")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path.Join(dir, DiskImage), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o660)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := f.Truncate(size); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// writeCloudInit renders the volume's ISO into dir/cloudinit.iso.
func (p *domainPreparer) writeCloudInit(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, v kubevirtv1.Volume, dir string) error {
	kind := NoCloud
	var src cloudInitSource
	if v.CloudInitNoCloud != nil {
		s := v.CloudInitNoCloud
		src = cloudInitSource{s.UserData, s.UserDataBase64, secretName(s.UserDataSecretRef), s.NetworkData, s.NetworkDataBase64, secretName(s.NetworkDataSecretRef)}
	} else {
		kind = ConfigDrive
		s := v.CloudInitConfigDrive
		src = cloudInitSource{s.UserData, s.UserDataBase64, secretName(s.UserDataSecretRef), s.NetworkData, s.NetworkDataBase64, secretName(s.NetworkDataSecretRef)}
	}
	data, err := p.resolveCloudInit(ctx, vmi.Namespace, src)
	if err != nil {
		return err
	}
	if data.PublicKeys, err = p.publicKeys(ctx, vmi, kind); err != nil {
		return err
	}
	iso, err := p.cloudInitISO(kind, vmi, data)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp := path.Join(dir, "."+CloudInitISO+".tmp")
	if err := os.WriteFile(tmp, iso, 0o640); err != nil {
		return err
	}
	return os.Rename(tmp, path.Join(dir, CloudInitISO))
}

// cloudInitSource is the common shape of the NoCloud and ConfigDrive sources.
type cloudInitSource struct {
	userData, userDataBase64, userDataSecret          string
	networkData, networkDataBase64, networkDataSecret string
}

func secretName(ref *corev1.LocalObjectReference) string {
	if ref == nil {
		return ""
	}
	return ref.Name
}

// resolveCloudInit picks inline, base64 or Secret data as KubeVirt does.
// There is no size cap: the ISO holds whatever the user gave.
func (p *domainPreparer) resolveCloudInit(ctx context.Context, ns string, src cloudInitSource) (CloudInitData, error) {
	var out CloudInitData
	var err error
	if out.UserData, err = p.pick(ctx, ns, src.userData, src.userDataBase64, src.userDataSecret, "userdata", "userData"); err != nil {
		return out, fmt.Errorf("user data: %w", err)
	}
	if out.NetworkData, err = p.pick(ctx, ns, src.networkData, src.networkDataBase64, src.networkDataSecret, "networkdata", "networkData"); err != nil {
		return out, fmt.Errorf("network data: %w", err)
	}
	return out, nil
}

func (p *domainPreparer) pick(ctx context.Context, ns, inline, b64, secret string, keys ...string) ([]byte, error) {
	switch {
	case secret != "":
		data, err := p.secrets.data(ctx, ns, secret)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			if d, ok := data[k]; ok {
				return d, nil
			}
		}
		return nil, fmt.Errorf("secret %s has none of the keys %v", secret, keys)
	case b64 != "":
		d, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, fmt.Errorf("invalid base64: %w", err)
		}
		return d, nil
	case inline != "":
		return []byte(inline), nil
	}
	return nil, nil
}

// publicKeys reads the SSH public keys of the instance's accessCredentials that propagate
// through a cloud-init volume of kind (noCloud, configDrive), as KubeVirt does: every value of
// each secret is a key, named by its secret key (the secret's name is added when two secrets
// use the same key). nil when there are none.
func (p *domainPreparer) publicKeys(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, kind CloudInitKind) (map[string]string, error) {
	var keys map[string]string
	for _, c := range vmi.Spec.AccessCredentials {
		k := c.SSHPublicKey
		if k == nil || k.Source.Secret == nil {
			continue
		}
		m := k.PropagationMethod
		if (kind == NoCloud && m.NoCloud == nil) || (kind == ConfigDrive && m.ConfigDrive == nil) {
			continue
		}
		name := k.Source.Secret.SecretName
		data, err := p.secrets.data(ctx, vmi.Namespace, name)
		if err != nil {
			return nil, fmt.Errorf("access credentials: %w", err)
		}
		if keys == nil {
			keys = map[string]string{}
		}
		for _, key := range slices.Sorted(maps.Keys(data)) {
			id := key
			if _, taken := keys[id]; taken {
				id = name + "-" + key
			}
			keys[id] = strings.TrimSpace(string(data[key]))
		}
	}
	return keys, nil
}
