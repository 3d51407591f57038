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
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nativevirt/nativevirt/pkg/launcherpod"
	"github.com/nativevirt/nativevirt/pkg/node/podfs"
)

// A guest counter is a shell loop that cloud-init starts in the guest: every period it prints
// `tick N uptime U` on the serial console, N numbered from 1 at boot and U the guest's
// /proc/uptime. A guest that keeps running prints growing ticks and uptimes; a guest that boots
// again starts again at tick 1 with a small uptime (after a kernel banner); a frozen guest
// prints nothing.

// CounterScript is the shell lines that start the counter in the background (no #! line):
// user data that does more puts them after its own lines.
func CounterScript(period time.Duration) string {
	return "( i=0; while :; do i=$((i+1)); read up idle </proc/uptime; echo \"tick $i uptime $up\"; sleep " +
		strconv.FormatFloat(period.Seconds(), 'f', -1, 64) + "; done ) &\n" +
		"echo counter-started\n"
}

// CounterUserData is cloud-init user data that only starts the counter.
func CounterUserData(period time.Duration) string {
	return "#!/bin/sh\n" + CounterScript(period)
}

var (
	tickRE = regexp.MustCompile(`tick (\d+) uptime ([0-9.]+)`)
	// bootRE is the kernel's first line: the guest booted (again).
	bootRE = regexp.MustCompile(`Linux version \d`)
)

// Tick is one counter line.
type Tick struct {
	N      int
	Uptime float64
}

func (t Tick) String() string { return fmt.Sprintf("tick %d uptime %.2f", t.N, t.Uptime) }

// ParseTick reads the counter line in line (console lines may carry a \r or other output).
func ParseTick(line string) (Tick, bool) {
	m := tickRE.FindStringSubmatch(line)
	if m == nil {
		return Tick{}, false
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return Tick{}, false
	}
	up, err := strconv.ParseFloat(m[2], 64)
	if err != nil {
		return Tick{}, false
	}
	return Tick{N: n, Uptime: up}, true
}

// ParseTicks is the counter lines of a whole serial log.
func ParseTicks(data []byte) []Tick {
	var out []Tick
	for _, line := range strings.Split(string(data), "\n") {
		if t, ok := ParseTick(line); ok {
			out = append(out, t)
		}
	}
	return out
}

// SerialLogPath is the host path of the serial log of a launcher pod of the local cluster (in
// the pod's private emptyDir under its node's kubelet root).
func (c *Cluster) SerialLogPath(pod *corev1.Pod) string {
	root := podfs.Locator{KubeletRoot: filepath.Join(c.Dir(), "nodes", pod.Spec.NodeName, "kubelet")}
	return filepath.Join(root.EmptyDir(pod.UID, launcherpod.PrivateVolume), filepath.Base(launcherpod.SerialLog))
}

// SerialLog reads a serial log as it grows: each Read returns what complete lines were added
// since the one before.
type SerialLog struct {
	Path    string
	offset  int64
	partial string
}

// Read returns the counter lines and the number of kernel boot banners among the lines added
// since the last Read. A log that shrank (written anew) is read again from its start.
func (l *SerialLog) Read() ([]Tick, int, error) {
	fh, err := os.Open(l.Path)
	if err != nil {
		return nil, 0, err
	}
	defer fh.Close()
	if st, err := fh.Stat(); err == nil && st.Size() < l.offset {
		l.offset, l.partial = 0, ""
	}
	if _, err := fh.Seek(l.offset, io.SeekStart); err != nil {
		return nil, 0, err
	}
	b, err := io.ReadAll(fh)
	if err != nil {
		return nil, 0, err
	}
	l.offset += int64(len(b))
	lines := strings.Split(l.partial+string(b), "\n")
	l.partial = lines[len(lines)-1]
	var ticks []Tick
	boots := 0
	for _, line := range lines[:len(lines)-1] {
		if bootRE.MatchString(line) {
			boots++
		}
		if t, ok := ParseTick(line); ok {
			ticks = append(ticks, t)
		}
	}
	return ticks, boots, nil
}

// Counter follows one guest's counter in its serial log.
type Counter struct {
	log   SerialLog
	mark  CounterMark
	backs []string
}

// CounterMark is where a counter stood: its latest tick, how many ticks, boot banners and
// steps back it had read.
type CounterMark struct {
	Last         Tick
	Ticks, Boots int
	Backs        int
}

// NewCounter follows the counter in the serial log at path (from its start).
func NewCounter(path string) *Counter { return &Counter{log: SerialLog{Path: path}} }

// Read reads what the log gained and returns where the counter stands now.
func (c *Counter) Read() (CounterMark, error) {
	ticks, boots, err := c.log.Read()
	if err != nil {
		return c.mark, err
	}
	c.mark.Boots += boots
	for _, t := range ticks {
		if c.mark.Ticks > 0 && (t.N <= c.mark.Last.N || t.Uptime < c.mark.Last.Uptime) {
			c.backs = append(c.backs, fmt.Sprintf("%s after %s", t, c.mark.Last))
		}
		c.mark.Last = t
		c.mark.Ticks++
	}
	c.mark.Backs = len(c.backs)
	return c.mark, nil
}

// KeptRunning reports how the guest ran since mark (what it read then and now), or why it did
// not: a guest that kept running printed new ticks, no kernel banner, no tick that went back,
// and its uptime grew.
func (c *Counter) KeptRunning(mark CounterMark) (string, error) {
	now := c.mark
	span := fmt.Sprintf("%s → %s (%d new ticks)", mark.Last, now.Last, now.Ticks-mark.Ticks)
	var why []string
	if now.Ticks <= mark.Ticks {
		why = append(why, "no new tick: the guest did not run")
	}
	if now.Boots > mark.Boots {
		why = append(why, fmt.Sprintf("%d kernel boot banner(s): the guest booted again", now.Boots-mark.Boots))
	}
	if now.Backs > mark.Backs {
		why = append(why, "the counter went back: "+strings.Join(c.backs[mark.Backs:], "; "))
	}
	if now.Ticks > mark.Ticks && now.Last.Uptime <= mark.Last.Uptime {
		why = append(why, "the guest's uptime did not grow")
	}
	if len(why) > 0 {
		return span, fmt.Errorf("%s: %s", span, strings.Join(why, "; "))
	}
	return span, nil
}
