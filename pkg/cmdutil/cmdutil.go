// Package cmdutil holds what the API-client daemons (nativevirt-controller, nativevirt-handler)
// share on their command lines: the cobra command with component-base logging flags, and the
// client configuration from a kubeconfig or the pod's service account.
package cmdutil

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
)

// Daemon describes a daemon's command.
type Daemon struct {
	Use, Short string
	// AddFlags registers the daemon's own flags.
	AddFlags func(fs *pflag.FlagSet)
	// Validate checks the parsed flags.
	Validate func() error
	// Run runs the daemon until ctx ends.
	Run func(ctx context.Context) error
}

// NewCommand builds the cobra command of d, with the logging flags of component-base applied
// before Validate and Run.
func NewCommand(ctx context.Context, d Daemon) *cobra.Command {
	logOpts := logs.NewOptions()
	cmd := &cobra.Command{
		Use:          d.Use,
		Short:        d.Short,
		SilenceUsage: true,
		RunE: func(*cobra.Command, []string) error {
			if err := logsapi.ValidateAndApply(logOpts, nil); err != nil {
				return err
			}
			if err := d.Validate(); err != nil {
				return err
			}
			return d.Run(ctx)
		},
	}
	d.AddFlags(cmd.Flags())
	logsapi.AddFlags(logOpts, cmd.Flags())
	return cmd
}

// RESTConfig loads kubeconfig when given, else the in-cluster configuration.
func RESTConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		return clientcmd.BuildConfigFromFlags("", kubeconfig)
	}
	return rest.InClusterConfig()
}
