package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/nativevirt/nativevirt/pkg/streams"
)

// escapeByte (Ctrl+]) ends a console session, as in virtctl and telnet.
const escapeByte = 0x1d

func newConsoleCommand(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "console NAME",
		Short: "Connect to the serial console of a running instance (Ctrl+] quits)",
		Long: "Connect to the serial console of a running instance. The terminal is put into raw mode; " +
			"Ctrl+] ends the session. Several sessions of one instance share its console: every session sees " +
			"the guest's output and all input reaches the guest.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			ws, err := c.dial(cmd.Context(), args[0], streams.ActionConsole)
			if err != nil {
				return err
			}
			_, _ = fmt.Fprintf(o.streams.ErrOut, "Successfully connected to %s console. The escape sequence is ^]\n", args[0])
			restore := rawTerminal(o.streams.In)
			err = streams.Pipe(cmd.Context(), ws, struct {
				io.Reader
				io.Writer
			}{&escapeReader{r: o.streams.In}, o.streams.Out})
			restore()
			_, _ = fmt.Fprintln(o.streams.ErrOut)
			return err
		},
	}
}

// rawTerminal puts a terminal on in into raw mode (keys go to the guest as typed, Ctrl+C
// included) and returns what restores it. Anything else is left alone.
func rawTerminal(in io.Reader) func() {
	f, ok := in.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return func() {}
	}
	state, err := term.MakeRaw(int(f.Fd()))
	if err != nil {
		return func() {}
	}
	return func() { _ = term.Restore(int(f.Fd()), state) }
}

// escapeReader passes input through up to the escape byte, then reports the end of input.
type escapeReader struct {
	r    io.Reader
	done bool
}

// Read implements io.Reader.
func (e *escapeReader) Read(p []byte) (int, error) {
	if e.done {
		return 0, io.EOF
	}
	n, err := e.r.Read(p)
	if i := bytes.IndexByte(p[:n], escapeByte); i >= 0 {
		e.done = true
		if i == 0 {
			return 0, io.EOF
		}
		return i, nil
	}
	return n, err
}
