// Command nativevirt-launcher is PID 1 of a launcher pod's compute container: it runs the
// pod-private libvirt daemon for as long as the pod's virtual machine lives (see
// pkg/node/launcher).
//
//	nativevirt-launcher --namespace NS --name VMI --uid UID --grace-period-seconds 30 [--run-dir /var/run/nativevirt]
//	nativevirt-launcher --probe-qemu-capabilities DIR
//	nativevirt-launcher --guest-probe [--guest-probe-timeout 1s] [-- COMMAND [ARG...]]
//
// It exits 0 once the domain is gone or after a SIGTERM shut the guest down, and 1 when libvirtd
// dies or cannot start.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	"github.com/nativevirt/nativevirt/pkg/launcherpod"
	"github.com/nativevirt/nativevirt/pkg/node/launcher"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("nativevirt-launcher", flag.ContinueOnError)
	var (
		opts  launcher.Options
		grace int64
	)
	fs.StringVar(&opts.Namespace, "namespace", "", "namespace of the VirtualMachineInstance (for logs)")
	fs.StringVar(&opts.Name, "name", "", "name of the VirtualMachineInstance (for logs)")
	fs.StringVar(&opts.UID, "uid", "", "UID of the VirtualMachineInstance (for logs)")
	fs.Int64Var(&grace, "grace-period-seconds", 30, "seconds the guest gets to shut down after SIGTERM before it is destroyed")
	fs.StringVar(&opts.RunDir, "run-dir", launcherpod.PrivateDir, "directory shared with the node agent: libvirt socket, ready marker")
	fs.StringVar(&opts.ConfigDir, "config-dir", launcher.DefaultConfigDir, "where libvirtd.conf and qemu.conf are written")
	fs.StringVar(&opts.Libvirtd, "libvirtd", launcher.DefaultLibvirtd, "libvirt daemon executable")
	fs.StringVar(&opts.Virtlogd, "virtlogd", "", "virtlogd executable to run beside libvirtd (none by default: QEMU writes its logs itself)")
	opts.ClaimDisks = launcher.ClaimDisks{}
	fs.Var(opts.ClaimDisks, "claim-disk", "<volume>=<bytes>: create the disk image of a filesystem-mode claim mounted under "+launcherpod.ClaimsDir+"/<volume> when it has none (repeatable)")
	opts.ConfigDisks = launcher.ConfigDisks{}
	fs.Var(opts.ConfigDisks, "config-disk", "<volume>=<label>: build the disk of a config volume (configMap, secret, serviceAccount, downwardAPI) mounted under "+launcherpod.ConfigVolumesDir+"/<volume>, an ISO labelled <label> (repeatable)")
	fs.StringVar(&opts.HoldLock, "hold-lock", "", "file to keep an exclusive lock on while the launcher runs (the pod's copy containers end when it is released)")
	fs.Func("await-file", "a file that must exist before the launcher reports ready: a disk the pod copies beside it (repeatable); <file>"+
		launcher.FailedSuffix+" fails the launcher", func(v string) error {
		opts.AwaitFiles = append(opts.AwaitFiles, v)
		return nil
	})
	var (
		guestProbe        bool
		guestProbeTimeout time.Duration
	)
	fs.BoolVar(&guestProbe, "guest-probe", false, "instead of serving a virtual machine: probe the pod's guest through its guest agent, with guest-ping, or running the command given after -- (guest-exec), and exit 0 when it passes (the kubelet runs this as the exec probe behind KubeVirt's exec and guestAgentPing probes)")
	fs.DurationVar(&guestProbeTimeout, "guest-probe-timeout", time.Second, "with --guest-probe: how long the probe may take")
	var probeDir string
	fs.StringVar(&probeDir, "probe-qemu-capabilities", "", "instead of serving a virtual machine: have libvirt probe QEMU once and copy its capability cache into DIR/kvm or DIR/tcg (the node agent's DaemonSet runs this per node), then exit")
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	klogFlags.VisitAll(func(f *flag.Flag) { fs.Var(f.Value, f.Name, f.Usage) })
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if guestProbe {
		err := launcher.RunGuestProbe(context.Background(), opts, launcher.GuestProbe{Command: fs.Args(), Timeout: guestProbeTimeout})
		if err != nil {
			fmt.Fprintf(os.Stderr, "%v\n", err)
			return 1
		}
		return 0
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "nativevirt-launcher: unexpected arguments: %v\n", fs.Args())
		return 2
	}
	defer klog.Flush()
	opts.GracePeriod = time.Duration(grace) * time.Second

	log := klog.Background()
	if probeDir == "" {
		log = log.WithValues("vmi", opts.Namespace+"/"+opts.Name)
	}
	l, err := launcher.New(opts, nil, log)
	if err != nil {
		fmt.Fprintf(os.Stderr, "nativevirt-launcher: %v\n", err)
		return 2
	}
	// SIGTERM (kubelet) and SIGINT (a terminal) shut the guests down gracefully.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if probeDir != "" {
		// The probe only spares launchers their own: its failure must not keep the node
		// agent's pod (whose init container this is) from starting.
		if err := l.ProbeQEMUCapabilities(ctx, probeDir); err != nil {
			log.Error(err, "Probing QEMU failed: every launcher pod on this node probes QEMU itself")
		}
		return 0
	}
	if err := l.Run(ctx); err != nil {
		return 1
	}
	return 0
}
