// Package launcher is PID 1 of a launcher pod's compute container (nativevirt-launcher).
//
// It runs the pod-private libvirt daemon that the node agent drives through the `private`
// emptyDir, and it makes the container's life follow the virtual machine's:
//
//   - it writes libvirtd.conf and qemu.conf for an unprivileged container (socket in the run
//     directory, no authentication on the socket, QEMU as root, no cgroups, no xattrs),
//   - starts libvirtd as its child (and virtlogd only when --virtlogd names it: QEMU writes its
//     own logs, stdio_handler = "file") and reaps every child, including the QEMU processes
//     that libvirt daemonizes and that the kernel re-parents to the launcher,
//   - touches <run-dir>/ready once libvirtd answers on <run-dir>/libvirt/libvirt-sock,
//   - serves the guest's DHCP (package dhcp) on the pod's bridge once the node agent has
//     prepared the pod network and written <run-dir>/dhcp.json (masquerade binding; port 67
//     needs NET_BIND_SERVICE), with the pod's resolv.conf for DNS,
//   - exits 0 once the domain it saw running is gone (undefined, or shut off for a moment),
//   - exits non-zero when libvirtd dies: the daemon is the VM's lifeline,
//   - on SIGTERM presses the guests' ACPI power button, destroys what still runs when the grace
//     period is over, stops the daemons and exits 0.
//
// The launcher never talks to the Kubernetes API; the node agent defines and starts the domain.
package launcher
