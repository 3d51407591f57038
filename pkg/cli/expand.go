package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// newExpandCommand is virtctl's expand: a VirtualMachine with its instance type and preference
// applied, as the instance made from it would be, printed as YAML or JSON. --vm reads a stored
// VM (expand-spec); --file sends one from a file (expand-vm-spec), which nothing stores.
func newExpandCommand(o *options) *cobra.Command {
	var vm, file, output string
	cmd := &cobra.Command{
		Use:   "expand (--vm NAME | --file FILE)",
		Short: "Print a virtual machine with its instance type and preference applied",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (vm == "") == (file == "") {
				return errors.New("exactly one of --vm and --file is required")
			}
			if output != "yaml" && output != "json" {
				return fmt.Errorf("--output %q: yaml or json", output)
			}
			c, err := o.client()
			if err != nil {
				return err
			}
			var raw []byte
			if vm != "" {
				raw, err = c.get(cmd.Context(), "virtualmachines", vm, "expand-spec", "application/json", nil)
			} else {
				var body []byte
				if body, err = os.ReadFile(file); err == nil {
					// A manifest is YAML or JSON; the server takes JSON.
					if body, err = yaml.YAMLToJSON(body); err == nil {
						raw, err = c.send(cmd.Context(), "expand-vm-spec", body)
					}
				}
			}
			if err != nil {
				return fmt.Errorf("error expanding VirtualMachine: %w", err)
			}
			if output == "yaml" {
				if raw, err = yaml.JSONToYAML(raw); err != nil {
					return err
				}
			}
			_, err = o.streams.Out.Write(raw)
			return err
		},
	}
	cmd.Flags().StringVar(&vm, "vm", "", "Name of a stored VirtualMachine to expand.")
	cmd.Flags().StringVarP(&file, "file", "f", "", "A VirtualMachine manifest (YAML or JSON) to expand; it is not stored.")
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "Output format: yaml or json.")
	return cmd
}
