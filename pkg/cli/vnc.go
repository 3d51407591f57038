package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strconv"

	"github.com/gorilla/websocket"
	"github.com/spf13/cobra"

	"github.com/nativevirt/nativevirt/pkg/streams"
)

func newVNCCommand(o *options) *cobra.Command {
	var proxyOnly bool
	var port int
	var address string
	cmd := &cobra.Command{
		Use:   "vnc NAME",
		Short: "Proxy the VNC display of a running instance to a local port",
		Long: "Listen on a local port and carry every connection to the instance's VNC display. With " +
			"--proxy-only the port is printed as {\"port\":N} for a VNC viewer of your choice; otherwise " +
			"remote-viewer or vncviewer is started when one is installed.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			name := args[0]
			// Dial once before listening so that a stopped instance is reported at once.
			first, err := c.dial(cmd.Context(), name, streams.ActionVNC)
			if err != nil {
				return err
			}
			l, err := net.Listen("tcp", net.JoinHostPort(address, strconv.Itoa(port)))
			if err != nil {
				_ = first.Close()
				return err
			}
			local := l.Addr().(*net.TCPAddr).Port
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			if proxyOnly {
				_, _ = fmt.Fprintf(o.streams.Out, "{\"port\":%d}\n", local)
			} else if err := startViewer(ctx, cancel, address, local); err != nil {
				_, _ = fmt.Fprintf(o.streams.ErrOut, "%v; connect a VNC viewer to %s\n", err, net.JoinHostPort(address, strconv.Itoa(local)))
			}
			return serveStreams(ctx, l, first, func() (*websocket.Conn, error) {
				return c.dial(ctx, name, streams.ActionVNC)
			}, o.warn)
		},
	}
	cmd.AddCommand(newScreenshotCommand(o))
	cmd.Flags().BoolVar(&proxyOnly, "proxy-only", false, "Only run the proxy and print its port as JSON.")
	cmd.Flags().IntVar(&port, "port", 0, "Local port to listen on (0 picks a free one).")
	cmd.Flags().StringVar(&address, "address", "127.0.0.1", "Local address to listen on.")
	return cmd
}

// startViewer runs the first VNC viewer found; the proxy stops when the viewer exits.
func startViewer(ctx context.Context, done context.CancelFunc, address string, port int) error {
	viewers := []struct{ bin, arg string }{
		{"remote-viewer", fmt.Sprintf("vnc://%s", net.JoinHostPort(address, strconv.Itoa(port)))},
		{"vncviewer", fmt.Sprintf("%s::%d", address, port)},
	}
	for _, v := range viewers {
		path, err := exec.LookPath(v.bin)
		if err != nil {
			continue
		}
		cmd := exec.CommandContext(ctx, path, v.arg)
		if err := cmd.Start(); err != nil {
			return err
		}
		go func() {
			_ = cmd.Wait()
			done()
		}()
		return nil
	}
	return errors.New("no VNC viewer (remote-viewer, vncviewer) found")
}

// newScreenshotCommand builds `vnc screenshot NAME`: the instance's screen as a PNG file.
func newScreenshotCommand(o *options) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "screenshot NAME",
		Short: "Save a PNG image of a running instance's screen",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			img, err := c.get(cmd.Context(), "virtualmachineinstances", args[0], "vnc/screenshot", "image/png",
				url.Values{"moveCursor": []string{"false"}})
			if err != nil {
				return fmt.Errorf("error taking a screenshot of VirtualMachineInstance %s: %w", args[0], err)
			}
			if file == "" {
				file = args[0] + ".png"
			}
			if err := os.WriteFile(file, img, 0o644); err != nil {
				return err
			}
			_, _ = fmt.Fprintf(o.streams.Out, "screenshot of %s saved to %s (%d bytes)\n", args[0], file, len(img))
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "The PNG file to write (default NAME.png).")
	return cmd
}
