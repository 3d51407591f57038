package app

import (
	"context"

	"github.com/spf13/cobra"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/cli/globalflag"
	"k8s.io/component-base/term"

	"github.com/nativevirt/nativevirt/pkg/apiserver"
)

// NewCommand returns the nativevirt-apiserver command.
func NewCommand(ctx context.Context) *cobra.Command {
	o := NewOptions()
	cmd := &cobra.Command{
		Use:   "nativevirt-apiserver",
		Short: "Serve the kubevirt.io API natively, as an aggregated API server with its own etcd",
		Long: "nativevirt-apiserver serves kubevirt.io/v1 and v1alpha3 (VirtualMachines, " +
			"VirtualMachineInstances, replica sets, migrations), instancetype.kubevirt.io/v1beta1 (instance types " +
			"and preferences) and subresources.kubevirt.io/v1 behind kube-apiserver's aggregation layer. Without --etcd-servers it runs an embedded etcd in --data-dir.",
		SilenceUsage: true,
		RunE: func(c *cobra.Command, _ []string) error {
			return Run(c.Context(), o)
		},
	}
	cmd.SetContext(ctx)
	fss := &cliflag.NamedFlagSets{}
	o.AddFlags(fss)
	globalflag.AddGlobalFlags(fss.FlagSet("global"), cmd.Name())
	for _, fs := range fss.FlagSets {
		cmd.Flags().AddFlagSet(fs)
	}
	cols, _, _ := term.TerminalSize(cmd.OutOrStdout())
	cliflag.SetUsageAndHelpFunc(cmd, *fss, cols)
	return cmd
}

// Run completes and validates the options, then serves until ctx is done.
func Run(ctx context.Context, o *Options) error {
	srv, err := NewServer(ctx, o)
	if err != nil {
		return err
	}
	defer o.Stop()
	return srv.GenericAPIServer.PrepareRun().RunWithContext(ctx)
}

// NewServer completes and validates the options and builds the server without starting it. On
// success the caller must call o.Stop after the server has stopped.
func NewServer(ctx context.Context, o *Options) (*apiserver.Server, error) {
	if err := o.Complete(ctx); err != nil {
		return nil, err
	}
	srv, err := newServer(o)
	if err != nil {
		o.Stop()
		return nil, err
	}
	return srv, nil
}

func newServer(o *Options) (*apiserver.Server, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	cfg, err := o.Config()
	if err != nil {
		return nil, err
	}
	return cfg.Complete().New()
}
