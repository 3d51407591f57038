// Package cli is the `nativevirt` command (also usable as the kubectl plugin `kubectl
// nativevirt` when installed as kubectl-nativevirt): VM lifecycle actions, migrate and
// migrate-cancel, pause/unpause, the serial console, a local VNC proxy, expose (a Service for
// a VM) and image-upload (a local disk image into a DataVolume, through CDI's upload proxy). It calls the subresources.kubevirt.io/v1 paths (and, for migrate-cancel, the
// migrations; for expose, the objects and Services) exactly as KubeVirt's virtctl does, so it
// works against KubeVirt as well as NativeVirt.
package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// IOStreams are the command's standard streams.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// StdStreams are the process's streams.
func StdStreams() IOStreams {
	return IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
}

// options are the connection flags every command shares (kubectl's names).
type options struct {
	loading   *clientcmd.ClientConfigLoadingRules
	overrides *clientcmd.ConfigOverrides
	streams   IOStreams
}

// client resolves the kubeconfig into a REST config and namespace.
// warn reports a problem that does not end the command (a stream a proxy could not open).
func (o *options) warn(err error) {
	_, _ = fmt.Fprintln(o.streams.ErrOut, "warning:", err)
}

func (o *options) client() (*client, error) {
	cfg, ns, err := o.restConfig()
	if err != nil {
		return nil, err
	}
	return newClient(cfg, ns)
}

// restConfig resolves the kubeconfig and flags into a REST config and the namespace.
func (o *options) restConfig() (*rest.Config, string, error) {
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(o.loading, o.overrides)
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", err
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, "", err
	}
	return cfg, ns, nil
}

// commandName is "kubectl nativevirt" when the binary runs as a kubectl plugin.
func commandName(argv0 string) string {
	base := filepath.Base(argv0)
	if strings.HasPrefix(base, "kubectl-") {
		return "kubectl " + strings.ReplaceAll(strings.TrimPrefix(base, "kubectl-"), "_", "-")
	}
	return "nativevirt"
}

// NewCommand builds the command tree. argv0 names the binary (for help texts).
func NewCommand(argv0 string, streams IOStreams) *cobra.Command {
	o := &options{
		loading:   clientcmd.NewDefaultClientConfigLoadingRules(),
		overrides: &clientcmd.ConfigOverrides{},
		streams:   streams,
	}
	name := commandName(argv0)
	root := &cobra.Command{
		Use:   name,
		Short: "Control NativeVirt (and KubeVirt) virtual machines",
		Long: name + " starts, stops, restarts, migrates, pauses and unpauses virtual machines, opens their " +
			"serial console or a local VNC proxy, exposes them as Services and uploads disk images into DataVolumes. It talks to the " +
			"subresources.kubevirt.io API, like virtctl. " +
			"Installed as kubectl-nativevirt it is the kubectl plugin `kubectl nativevirt`.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	fs := root.PersistentFlags()
	fs.StringVar(&o.loading.ExplicitPath, "kubeconfig", "", "Path to the kubeconfig file to use.")
	clientcmd.BindOverrideFlags(o.overrides, fs, clientcmd.RecommendedConfigOverrideFlags(""))

	root.AddCommand(
		newStartCommand(o), newStopCommand(o), newRestartCommand(o), newMigrateCommand(o), newMigrateCancelCommand(o),
		newPauseCommand(o, "pause"), newPauseCommand(o, "unpause"), newSoftRebootCommand(o),
		newAddVolumeCommand(o), newRemoveVolumeCommand(o), newImageUploadCommand(o),
		newConsoleCommand(o), newVNCCommand(o), newPortForwardCommand(o), newExpandCommand(o), newExposeCommand(o),
		newGuestAgentCommand(o, "guestosinfo", "guestosinfo", "Print what the guest agent of a running instance reports"),
		newGuestAgentCommand(o, "userlist", "userlist", "Print the users logged in to a running instance's guest"),
		newGuestAgentCommand(o, "fslist", "filesystemlist", "Print the file systems of a running instance's guest"),
	)
	return root
}
