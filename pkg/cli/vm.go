package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/client/clientset/versioned"
)

// dryRunList is the options' dryRun field for --dry-run.
func dryRunList(dryRun bool) []string {
	if dryRun {
		return []string{metav1.DryRunAll}
	}
	return nil
}

// vmAction runs one VM action and reports it like virtctl does.
func vmAction(o *options, cmd *cobra.Command, name, action, done string, body any, dryRun bool) error {
	c, err := o.client()
	if err != nil {
		return err
	}
	if err := c.put(cmd.Context(), "virtualmachines", name, action, body); err != nil {
		return fmt.Errorf("error %s VirtualMachine %s: %w", verbing(action), name, err)
	}
	suffix := ""
	if dryRun {
		suffix = " (dry run)"
	}
	_, _ = fmt.Fprintf(o.streams.Out, "VM %s was scheduled to %s%s\n", name, done, suffix)
	return nil
}

func verbing(action string) string {
	switch action {
	case "stop":
		return "stopping"
	case "migrate":
		return "migrating"
	}
	return action + "ing"
}

func newStartCommand(o *options) *cobra.Command {
	var paused, dryRun bool
	cmd := &cobra.Command{
		Use:   "start NAME",
		Short: "Start a virtual machine",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			body := &kubevirtv1.StartOptions{Paused: paused, DryRun: dryRunList(dryRun)}
			return vmAction(o, cmd, args[0], "start", "start", body, dryRun)
		},
	}
	cmd.Flags().BoolVar(&paused, "paused", false, "Start the guest with paused vCPUs.")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "Validate the request without acting on it.")
	return cmd
}

func newStopCommand(o *options) *cobra.Command {
	var force, dryRun bool
	var grace int64
	cmd := &cobra.Command{
		Use:   "stop NAME",
		Short: "Stop a virtual machine",
		Long: "Stop a virtual machine. --force --grace-period=N deletes its instance with that grace period " +
			"instead of the instance's own; --grace-period=0 also kills the launcher pod at once.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			body, err := stopOptions(force, grace, dryRun)
			if err != nil {
				return err
			}
			return vmAction(o, cmd, args[0], "stop", "stop", body, dryRun)
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "Override the instance's grace period (requires --grace-period).")
	cmd.Flags().Int64Var(&grace, "grace-period", -1, "Grace period in seconds for a forced stop.")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "Validate the request without acting on it.")
	return cmd
}

// stopOptions checks the flags as virtctl does: a grace period only with --force, and --force
// only with a grace period.
func stopOptions(force bool, grace int64, dryRun bool) (*kubevirtv1.StopOptions, error) {
	body := &kubevirtv1.StopOptions{DryRun: dryRunList(dryRun)}
	switch {
	case grace != -1 && !force:
		return nil, errors.New("--grace-period needs --force")
	case force && grace == -1:
		return nil, errors.New("--force needs --grace-period")
	case force && grace < 0:
		return nil, errors.New("--grace-period must be 0 or more")
	case force:
		body.GracePeriod = &grace
	}
	return body, nil
}

func newRestartCommand(o *options) *cobra.Command {
	var force, dryRun bool
	var grace int64
	cmd := &cobra.Command{
		Use:   "restart NAME",
		Short: "Restart a virtual machine (a new instance in a new pod)",
		Long:  "Restart a virtual machine. --force --grace-period=0 kills the launcher pod instead of waiting for the guest.",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			body, err := restartOptions(force, grace, dryRun)
			if err != nil {
				return err
			}
			return vmAction(o, cmd, args[0], "restart", "restart", body, dryRun)
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "Kill the launcher pod at once (requires --grace-period=0).")
	cmd.Flags().Int64Var(&grace, "grace-period", -1, "Must be 0 with --force.")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "Validate the request without acting on it.")
	return cmd
}

func restartOptions(force bool, grace int64, dryRun bool) (*kubevirtv1.RestartOptions, error) {
	body := &kubevirtv1.RestartOptions{DryRun: dryRunList(dryRun)}
	switch {
	case grace != -1 && !force:
		return nil, errors.New("--grace-period needs --force")
	case force && grace != 0:
		return nil, errors.New("--force needs --grace-period=0")
	case force:
		body.GracePeriodSeconds = &grace
	}
	return body, nil
}

func newMigrateCommand(o *options) *cobra.Command {
	var dryRun bool
	var selector map[string]string
	cmd := &cobra.Command{
		Use:   "migrate NAME",
		Short: "Live-migrate a running virtual machine to another node",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			body := &kubevirtv1.MigrateOptions{DryRun: dryRunList(dryRun), AddedNodeSelector: selector}
			return vmAction(o, cmd, args[0], "migrate", "migrate", body, dryRun)
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "Validate the request without acting on it.")
	cmd.Flags().StringToStringVar(&selector, "added-node-selector", nil,
		"Further restrict the target nodes (key=value,...); cannot loosen the VM's own selector.")
	return cmd
}

// newMigrateCancelCommand builds `migrate-cancel NAME`, as virtctl's: it deletes the unfinished
// migration of the instance NAME (found by the label kubevirt.io/vmi-name the server puts on
// every migration); the controller cancels a migration that is deleted.
func newMigrateCancelCommand(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "migrate-cancel NAME",
		Short: "Cancel the live migration of a virtual machine",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			c, err := o.client()
			if err != nil {
				return err
			}
			kv, err := versioned.NewForConfig(c.cfg)
			if err != nil {
				return err
			}
			migrations := kv.KubevirtV1().VirtualMachineInstanceMigrations(c.namespace)
			list, err := migrations.List(cmd.Context(), metav1.ListOptions{LabelSelector: kubevirtv1.MigrationSelectorLabel + "=" + name})
			if err != nil {
				return fmt.Errorf("error listing the migrations of %s: %w", name, err)
			}
			for _, m := range list.Items {
				if m.Status.Phase == kubevirtv1.MigrationSucceeded || m.Status.Phase == kubevirtv1.MigrationFailed {
					continue
				}
				if err := migrations.Delete(cmd.Context(), m.Name, metav1.DeleteOptions{}); err != nil {
					return fmt.Errorf("error canceling migration %s of %s: %w", m.Name, name, err)
				}
				_, _ = fmt.Fprintf(o.streams.Out, "VM %s was scheduled to migrate-cancel\n", name)
				return nil
			}
			return fmt.Errorf("found no migration to cancel for %s", name)
		},
	}
}
