package launcher

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"time"

	"github.com/nativevirt/nativevirt/pkg/node/qemucaps"
)

// probeTimeout bounds libvirt's probe of QEMU (3.5 s with KVM here).
var probeTimeout = 2 * time.Minute

// ProbeQEMUCapabilities is the launcher's other job, run once per node by the node agent's
// DaemonSet in a container of the launcher image (package qemucaps): it starts
// libvirtd as a launcher pod does, has it probe QEMU, and copies libvirt's capability cache into
// outDir/<kind> (kvm when /dev/kvm is usable here, tcg otherwise), replacing an earlier probe's
// files. libvirtd is stopped before it returns.
func (l *Launcher) ProbeQEMUCapabilities(ctx context.Context, outDir string) error {
	log := l.log
	conf, err := l.prepareDaemons()
	if err != nil {
		return err
	}
	sup, stopSupervisor := runSupervisor(log)
	defer stopSupervisor()
	libvirtd, err := sup.start("libvirtd", []string{l.opts.Libvirtd, "--config", conf})
	if err != nil {
		return err
	}
	defer sup.killRemaining(l.opts.DaemonStopTimeout)
	defer sup.stop(libvirtd, l.opts.DaemonStopTimeout)
	h, err := l.waitForLibvirtd(ctx, libvirtd)
	if err != nil || h == nil {
		return errors.Join(err, ctx.Err())
	}
	defer func() { _ = h.Close() }()
	start := time.Now()
	// A probe that hangs must not hold the node agent's pod: it is given up after a while
	// (libvirtd is stopped on the way out).
	probed := make(chan error, 1)
	go func() { probed <- h.ProbeQEMU() }()
	select {
	case err := <-probed:
		if err != nil {
			return err
		}
	case <-time.After(probeTimeout):
		return fmt.Errorf("libvirt's probe of QEMU did not end within %s", probeTimeout)
	case <-ctx.Done():
		return ctx.Err()
	}
	// Read and write, as libvirt checks it.
	kind := qemucaps.Kind(syscall.Access("/dev/kvm", 0o6) != nil)
	files, err := qemucaps.Publish(filepath.Join(l.opts.StateRoot, qemucaps.CacheDir), filepath.Join(outDir, kind))
	if err != nil {
		return err
	}
	log.Info("QEMU capabilities probed", "kind", kind, "files", files, "took", time.Since(start).Round(time.Millisecond), "dir", filepath.Join(outDir, kind))
	return nil
}
