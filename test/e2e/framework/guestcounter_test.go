/*
Copyright The NativeVirt Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package framework

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCounterUserData(t *testing.T) {
	got := CounterUserData(500 * time.Millisecond)
	if !strings.HasPrefix(got, "#!/bin/sh\n") || !strings.Contains(got, "sleep 0.5; done ) &\n") {
		t.Errorf("CounterUserData(500ms) = %q", got)
	}
	if got := CounterScript(100 * time.Millisecond); !strings.Contains(got, "sleep 0.1;") || strings.HasPrefix(got, "#!") {
		t.Errorf("CounterScript(100ms) = %q", got)
	}
}

func TestParseTick(t *testing.T) {
	for _, tc := range []struct {
		line string
		want Tick
		ok   bool
	}{
		{"tick 12 uptime 34.56", Tick{12, 34.56}, true},
		{"tick 3 uptime 7.00\r", Tick{3, 7}, true},
		{"[    1.2] random: crng init done tick 4 uptime 9.10", Tick{4, 9.1}, true},
		{"tick  uptime 1.0", Tick{}, false},
		{"counter-started", Tick{}, false},
	} {
		got, ok := ParseTick(tc.line)
		if ok != tc.ok || got != tc.want {
			t.Errorf("ParseTick(%q) = %v, %t; want %v, %t", tc.line, got, ok, tc.want, tc.ok)
		}
	}
	if got := ParseTicks([]byte("boot\ntick 1 uptime 1.5\r\nnoise\ntick 2 uptime 2.0\n")); len(got) != 2 || got[1] != (Tick{2, 2}) {
		t.Errorf("ParseTicks = %v", got)
	}
}

func TestSerialLogPath(t *testing.T) {
	c := &Cluster{dir: "/state"}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u1"}, Spec: corev1.PodSpec{NodeName: "localhost2"}}
	want := "/state/nodes/localhost2/kubelet/pods/u1/volumes/kubernetes.io~empty-dir/private/serial.log"
	if got := c.SerialLogPath(pod); got != want {
		t.Errorf("SerialLogPath = %s, want %s", got, want)
	}
}

// appendLog adds s to the file at path.
func appendLog(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestSerialLogReadsCompleteLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "serial.log")
	l := &SerialLog{Path: path}
	if _, _, err := l.Read(); err == nil {
		t.Fatal("Read of a missing log: no error")
	}
	appendLog(t, path, "[    0.000000] Linux version 6.1.0\r\ntick 1 uptime 1.00\r\ntick 2 upt")
	ticks, boots, err := l.Read()
	if err != nil || boots != 1 || len(ticks) != 1 || ticks[0] != (Tick{1, 1}) {
		t.Fatalf("first Read = %v, %d, %v", ticks, boots, err)
	}
	appendLog(t, path, "ime 1.50\r\n")
	ticks, boots, err = l.Read()
	if err != nil || boots != 0 || len(ticks) != 1 || ticks[0] != (Tick{2, 1.5}) {
		t.Fatalf("second Read (the line completed) = %v, %d, %v", ticks, boots, err)
	}
	if ticks, _, _ := l.Read(); len(ticks) != 0 {
		t.Fatalf("Read with nothing new = %v", ticks)
	}
	// Written anew: read from the start again.
	if err := os.WriteFile(path, []byte("tick 1 uptime 0.9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ticks, _, _ := l.Read(); len(ticks) != 1 || ticks[0] != (Tick{1, 0.9}) {
		t.Fatalf("Read of a shrunk log = %v", ticks)
	}
}

func TestCounterKeptRunning(t *testing.T) {
	boot := "[    0.000000] Linux version 6.1.0\ncounter-started\ntick 1 uptime 1.00\ntick 2 uptime 1.50\n"
	for _, tc := range []struct {
		name, after string
		wantErr     string // "" when it kept running
	}{
		{"ran on", "tick 3 uptime 2.00\ntick 4 uptime 2.50\n", ""},
		{"ran on with lines lost", "tick 9 uptime 5.00\n", ""},
		{"frozen", "", "no new tick"},
		{"rebooted", "[    0.000000] Linux version 6.1.0\ncounter-started\ntick 1 uptime 0.90\n",
			"booted again"},
		{"rebooted, banner lost", "tick 1 uptime 0.90\ntick 2 uptime 1.40\n", "went back"},
		{"uptime stuck", "tick 3 uptime 1.50\n", "uptime did not grow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "serial.log")
			appendLog(t, path, boot)
			c := NewCounter(path)
			mark, err := c.Read()
			if err != nil || mark.Ticks != 2 || mark.Last != (Tick{2, 1.5}) || mark.Boots != 1 {
				t.Fatalf("Read = %+v, %v", mark, err)
			}
			appendLog(t, path, tc.after)
			if _, err := c.Read(); err != nil {
				t.Fatal(err)
			}
			span, err := c.KeptRunning(mark)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("KeptRunning: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("KeptRunning = %v, want an error with %q", err, tc.wantErr)
			}
			if !strings.Contains(span, "tick 2 uptime 1.50 → ") {
				t.Errorf("span %q", span)
			}
		})
	}
}
