package convert

import (
	"path"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// SerialLogPath is the serial console log inside the pod: <runDir>/serial.log.
func SerialLogPath(runDir string) string {
	return path.Join(runDir, SerialLogFile)
}

// convertSerial gives the serial console, unless autoattachSerialConsole is
// false: a pty serial port whose output is also appended to the serial log
// in the run directory, and a console bound to it, which the node agent
// opens through libvirt.
func convertSerial(devices *kubevirtv1.Devices, c Context) ([]Serial, []Console) {
	if !enabled(devices.AutoattachSerialConsole) {
		return nil, nil
	}
	port := uint32(0)
	serial := Serial{
		Type:   "pty",
		Target: &SerialTarget{Port: &port},
		Log:    &SerialLog{File: SerialLogPath(c.RunDir), Append: "on"},
	}
	console := Console{Type: "pty", Target: &ConsoleTarget{Type: "serial", Port: &port}}
	return []Serial{serial}, []Console{console}
}
