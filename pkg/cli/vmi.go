package cli

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// newPauseCommand builds `pause vm|vmi NAME` or `unpause vm|vmi NAME`. A VM's instance has
// the VM's name, so both forms act on the instance NAME.
func newPauseCommand(o *options, action string) *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:       action + " (vm|vmi) NAME",
		Short:     map[string]string{"pause": "Pause the vCPUs of a running guest", "unpause": "Resume a paused guest"}[action],
		Args:      cobra.ExactArgs(2),
		ValidArgs: []string{"vm", "vmi"},
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, name := args[0], args[1]
			if kind != "vm" && kind != "vmi" {
				return fmt.Errorf("unknown kind %q: use vm or vmi", kind)
			}
			c, err := o.client()
			if err != nil {
				return err
			}
			var body any = &kubevirtv1.PauseOptions{DryRun: dryRunList(dryRun)}
			if action == "unpause" {
				body = &kubevirtv1.UnpauseOptions{DryRun: dryRunList(dryRun)}
			}
			if err := c.put(cmd.Context(), "virtualmachineinstances", name, action, body); err != nil {
				return fmt.Errorf("error %sing VirtualMachineInstance %s: %w", action, name, err)
			}
			_, _ = fmt.Fprintf(o.streams.Out, "VMI %s was scheduled to %s\n", name, action)
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "Validate the request without acting on it.")
	return cmd
}

// newSoftRebootCommand builds `soft-reboot NAME`, today's virtctl name; `softreboot` (the
// earlier one) stays as an alias.
func newSoftRebootCommand(o *options) *cobra.Command {
	return &cobra.Command{
		Use:     "soft-reboot NAME",
		Aliases: []string{"softreboot"},
		Short:   "Ask the guest of a running instance to reboot (ACPI)",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			if err := c.put(cmd.Context(), "virtualmachineinstances", args[0], "softreboot", nil); err != nil {
				return fmt.Errorf("error soft rebooting VirtualMachineInstance %s: %w", args[0], err)
			}
			_, _ = fmt.Fprintf(o.streams.Out, "VMI %s was scheduled to softreboot\n", args[0])
			return nil
		},
	}
}

// newGuestAgentCommand builds `guestosinfo NAME`, `userlist NAME` or `fslist NAME`: what the
// guest agent of a running instance reports, printed as indented JSON (as virtctl does).
func newGuestAgentCommand(o *options, use, action, short string) *cobra.Command {
	return &cobra.Command{
		Use:   use + " NAME",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			raw, err := c.get(cmd.Context(), "virtualmachineinstances", args[0], action, "application/json", nil)
			if err != nil {
				return fmt.Errorf("error getting the %s of VirtualMachineInstance %s: %w", action, args[0], err)
			}
			var out bytes.Buffer
			if err := json.Indent(&out, raw, "", "  "); err != nil {
				return fmt.Errorf("the server's answer is not JSON: %w", err)
			}
			out.WriteByte('\n')
			_, err = o.streams.Out.Write(out.Bytes())
			return err
		},
	}
}
